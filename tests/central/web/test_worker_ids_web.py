"""CPF and PIS/NIS in the registry (issue 34 item 8) over the real app (SQLite and PostgreSQL): a
workers.csv import stores them (and never sends them to the gates), the add-worker and edit forms
refuse a wrong check digit beside the field with every typed value kept, the worker page shows
them, and the payroll CSV carries names, CPF and PIS with pt-BR headers in Portuguese and English
headers in English."""

from __future__ import annotations

import csv
import io
import json

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from central.config import WebSettings
from central.registry.schema import audit_log, downlink_changes, workers
from central.registry import enrol
from central.registry.enrol import ADD_FIELDS, ADMISSION_FIELDS
from central.registry.store import import_files
from central.web.app import create_app
from portgate.errors import BadInput
from tests.central.web.conftest import SECRET, engine_of, logged_in
from tests.central.web.paydata import seed_pay
from tests.central.web.test_clerk_forms import VIGIA, _field_error, _value

Q = {"from": "2026-03-01", "to": "2026-03-31"}


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request, tmp_path, ledgers):
    """The web suite's ``engine``; a test that uses ``registry`` starts with the demo registry in it
    (a copy of a ledger the session filled once: tests/central/web/conftest.py's FILLS, issue 32)."""
    yield from engine_of(request, tmp_path, ledgers, "demo_registry" if "registry" in request.fixturenames else None)


@pytest.fixture
def registry(engine, users, clock):
    return engine


def _ids(engine, reg):
    with engine.connect() as c:
        return tuple(c.execute(select(workers.c.cpf, workers.c.pis).where(workers.c.registration == reg)).one())


def test_the_demo_import_stores_check_digit_correct_ids_and_the_gates_never_get_them(registry):
    assert _ids(registry, "V017") == ("00000001759", "00000000175")
    with registry.connect() as c:
        bodies = [json.dumps(b) for b in c.execute(select(downlink_changes.c.body)).scalars()]
    assert bodies and not [b for b in bodies if "00000001759" in b or '"cpf"' in b]


def test_a_reimport_with_a_changed_cpf_is_audited_and_a_bad_one_refused_by_line(registry, clock, tmp_path):
    f = tmp_path / "workers.csv"
    f.write_text("registration,name,category,status,health_exam_date,rotation_number,cpf,pis\n"
                 "V001,Ana Lima,vigia,active,2025-06-01,1,529.982.247-25,\n", encoding="utf-8")
    with Session(registry) as s, s.begin():
        counts = import_files(s, workers_csv=f, actor="t", now=clock())
    assert counts["workers"] == 1 and _ids(registry, "V001") == ("52998224725", "00000000019")  # PIS kept
    with registry.connect() as c:
        detail = c.execute(select(audit_log.c.detail).where(audit_log.c.action == "worker.ids",
                                                            audit_log.c.subject == "V001")).scalars().all()[-1]
    assert detail["changed"]["cpf"] == ["00000000191", "52998224725"]
    with Session(registry) as s, s.begin():
        assert import_files(s, workers_csv=f, actor="t", now=clock()) == {"workers": 0, "cards": 0, "unchanged": 1}
    f.write_text(f.read_text().replace("529.982.247-25", "529.982.247-26"), encoding="utf-8")
    with pytest.raises(BadInput, match=r"workers.csv:2: cpf '529.982.247-26' fails its check digits"):
        with Session(registry) as s, s.begin():
            import_files(s, workers_csv=f, actor="t", now=clock())
    assert _ids(registry, "V001")[0] == "52998224725"


def test_the_add_form_refuses_a_wrong_cpf_beside_the_field_and_keeps_the_values(app, registry):
    c, token = logged_in(app, "office")
    r = c.post("/workers/new", data=VIGIA | {"cpf": "529.982.247-24", "pis": "1703325950", "csrf_token": token})
    assert r.status_code == 400
    assert "CPF '529.982.247-24' não confere com os dígitos verificadores" in _field_error(r.text, "cpf")
    assert "PIS/NIS '1703325950' não tem 11 dígitos" in _field_error(r.text, "pis")
    assert _value(r.text, "f-cpf") == "529.982.247-24" and _value(r.text, "f-name") == VIGIA["name"]
    with registry.connect() as conn:
        assert conn.execute(select(workers).where(workers.c.registration == "V900")).first() is None
    r = c.post("/workers/new", data=VIGIA | {"cpf": "529.982.247-25", "pis": "170.33259.50-4", "csrf_token": token})
    assert r.status_code == 303
    assert _ids(registry, "V900") == ("52998224725", "17033259504")
    page = c.get("/workers/V900").text
    assert '<dd id="w-cpf">529.982.247-25</dd>' in page and '<dd id="w-pis">170.33259.50-4</dd>' in page


def test_the_edit_form_changes_the_cpf_audited_and_refuses_a_bad_pis_beside_it(app, registry):
    c, token = logged_in(app, "office")
    form = {"csrf_token": token, "name": "Ana Lima", "category": "vigia", "status": "active", "suspended_from": "",
            "suspended_until": "", "health_exam_date": "01/06/2025", "booklet_revalidated_year": "",
            "rotation_number": "1", "cpf": "529.982.247-25", "pis": "170.33259.50-5"}
    r = c.post("/workers/V001", data=form)
    assert r.status_code == 400 and "não confere com os dígitos verificadores" in _field_error(r.text, "pis")
    assert _value(r.text, "e-pis") == "170.33259.50-5" and _ids(registry, "V001") == ("00000000191", "00000000019")
    form["pis"] = "170.33259.50-4"
    r = c.post("/workers/V001", data=form)
    assert r.status_code == 303 and r.headers["location"] == "/workers/V001?saved=2"
    assert _ids(registry, "V001") == ("52998224725", "17033259504")


def test_the_add_form_refuses_a_cpf_and_pis_another_worker_holds_as_the_import_does(app, registry):
    """The fresh tester's finding: V921 with V001's CPF and PIS was added (200); V901, V919 and V920
    all with 529.982.247-25. Now refused beside each field in the import's words, nothing written."""
    c, token = logged_in(app, "office")
    data = VIGIA | {"registration": "V921", "rotation_number": "921", "cpf": "000.000.001-91",
                    "pis": "000.00000.01-9", "csrf_token": token}
    r = c.post("/workers/new", data=data)
    assert r.status_code == 400
    assert _field_error(r.text, "cpf") == "o CPF 00000000191 já é da matrícula V001"
    assert _field_error(r.text, "pis") == "o PIS 00000000019 já é da matrícula V001"
    assert _value(r.text, "f-cpf") == "000.000.001-91"
    r = c.post("/workers/new", data=VIGIA | {"registration": "V919", "cpf": "529.982.247-25", "csrf_token": token})
    assert r.status_code == 303
    r = c.post("/workers/new", data=VIGIA | {"registration": "V920", "rotation_number": "920",
                                             "cpf": "529.982.247-25", "csrf_token": token})
    assert r.status_code == 400 and _field_error(r.text, "cpf") == "o CPF 52998224725 já é da matrícula V919"
    with registry.connect() as conn:
        added = conn.execute(select(workers.c.registration).where(workers.c.registration.in_(["V921", "V920"])))
        assert added.all() == []


def test_the_edit_form_refuses_another_workers_cpf_and_keeps_his_own(app, registry):
    c, token = logged_in(app, "office")
    before = _ids(registry, "V002")
    form = {"csrf_token": token, "name": "Ana Lima", "category": "vigia", "status": "active", "suspended_from": "",
            "suspended_until": "", "health_exam_date": "01/06/2025", "booklet_revalidated_year": "",
            "rotation_number": "1", "cpf": "000.000.001-91", "pis": "000.00000.01-9"}
    r = c.post("/workers/V001", data=form)  # his own numbers: no clash with himself
    assert r.status_code == 303
    r = c.post("/workers/V002", data={"csrf_token": token, "cpf": "000.000.001-91", "pis": "000.00000.01-9"})
    assert r.status_code == 400
    assert _field_error(r.text, "cpf") == "o CPF 00000000191 já é da matrícula V001"
    assert _field_error(r.text, "pis") == "o PIS 00000000019 já é da matrícula V001"
    assert _ids(registry, "V002") == before


def test_two_forms_at_once_cannot_both_take_one_cpf(registry, clock, monkeypatch):
    """The race: the second form checks before the first commits and writes after; the ledger's
    unique index (0038) refuses its write and it is told who holds the number; one holder only."""
    row = {k: v for k, v in VIGIA.items() if k in ADD_FIELDS} | {"health_exam_date": "2026-01-10",
                                                                  "cpf": "529.982.247-25"}
    adm = {k: v for k, v in VIGIA.items() if k in ADMISSION_FIELDS}
    adm = {k: (f"{v[6:]}-{v[3:5]}-{v[:2]}" if k.endswith("_on") or k == "birth_date" else v) for k, v in adm.items()}
    checked = enrol.ids_problems
    first: list = []

    def check_then_the_other_commits(session, registration, cells):
        found = checked(session, registration, cells)
        if registration == "V922" and not first:
            with Session(registry) as other, other.begin():
                first.append(enrol.add_worker(other, row | {"registration": "V921", "rotation_number": "921"}, adm,
                                              actor="t", now=clock()))
        return found

    monkeypatch.setattr(enrol, "ids_problems", check_then_the_other_commits)
    with pytest.raises(enrol.FormRefused) as refused, Session(registry) as s, s.begin():
        enrol.add_worker(s, row | {"registration": "V922", "rotation_number": "922"}, adm, actor="t", now=clock())
    assert first and refused.value.fields == {"cpf": "cpf 52998224725 is already held by V921"}
    with registry.connect() as conn:
        assert conn.execute(select(workers.c.registration).where(workers.c.cpf == "52998224725")).scalars().all() == [
            "V921"]


@pytest.fixture
def payapp(engine, users, clock, registry):
    seed_pay(engine)
    return engine


@pytest.mark.parametrize("lang, header, paid_word", [
    ("pt", ["matrícula", "nome", "cpf", "pis_nis", "dia_de_trabalho", "turno", "demonstrativo", "tabela_de_regras",
            "regra", "artigo", "descrição", "valor", "vencimento", "situação"], {"pago", "a_pagar", "retido"}),
    ("en", ["registration", "name", "cpf", "pis_nis", "work_day", "shift_id", "statement_id", "rulebook", "rule",
            "article", "description", "amount", "due_at", "status"], {"paid", "unpaid", "on_hold"}),
])
def test_the_payroll_csv_has_names_cpf_and_pis_with_headers_in_the_page_language(payapp, clock, lang, header,
                                                                                 paid_word):
    app = create_app(payapp, WebSettings(lang=lang), SECRET, now=clock, background=False)
    c, _ = logged_in(app, "auditor")
    r = c.get("/pay/export.csv", params=Q)
    assert r.status_code == 200
    rows = list(csv.reader(io.StringIO(r.text)))
    assert rows[0] == header
    total = next(row for row in rows if row[0] == "V017" and row[8] == "TOTAL")
    assert total[1:4] == ["Quitéria Almeida", "00000001759", "00000000175"] and total[11] == "696.60"
    assert {row[13] for row in rows[1:]} <= paid_word and len({row[13] for row in rows[1:]}) >= 2
