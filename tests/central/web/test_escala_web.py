"""The escala screens over the real app (SQLite and PostgreSQL): a requisition by the form and a
requisitions.csv dispatched from the rotation, published as escala changes, with shortfalls and
the skipped workers' reasons; bad files named by line with nothing written; refusal (R3) and
substitution; presence report; the per-operator and per-ship exports (R5)."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from central.registry.schema import downlink_changes, penalties
from central.rotation.schema import escala
from tests.central.web.conftest import engine_of, logged_in

DAY = "2026-12-02"
HEADER = "date,period,operator,ship,ship_name,voyage,berth,gate_id,post,function,workers\n"
# the office's clock: the evening before DAY (18:00 in the port), when none of its periods has
# ended (the machine's date is later: a past escala is refused)
EVE = dt.datetime(2026, 12, 1, 21, 0, tzinfo=dt.UTC)


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request, tmp_path, ledgers):
    """The web suite's ``engine`` with the demo registry (workers and cards) imported at EVE in it: a
    copy of a ledger into which the session imported it once (tests/central/web/conftest.py's FILLS,
    shared with test_escala_menu_web.py)."""
    yield from engine_of(request, tmp_path, ledgers, "demo_registry_eve")


@pytest.fixture
def reg(engine, users, clock):
    clock.at = EVE
    return engine


def _n(engine, table, *where):
    with engine.connect() as c:
        return c.execute(select(func.count()).select_from(table).where(*where)).scalar()


def test_a_requisition_by_the_form_is_dispatched_and_published(app, reg):
    c, token = logged_in(app, "office")
    form = {"csrf_token": token, "date": DAY, "period": "07-13", "operator": "Op A", "ship": "9300001",
            "ship_name": "MSC Aurora", "voyage": "long_haul", "berth": "berthed", "gate_id": "g-a",
            "post": "portalo", "function": "vigia", "workers": "2"}
    r = c.post("/escala/dispatch", data=form)
    assert r.status_code == 200 and 'id="dispatch-result"' in r.text
    assert "2 escalado(s) e publicado(s)" in r.text
    assert _n(reg, downlink_changes, downlink_changes.c.kind == "escala") == 2
    assert _n(reg, escala, escala.c.status == "active") == 2


def test_the_same_requisition_sent_twice_by_the_form_dispatches_nobody_extra(app, reg):
    c, token = logged_in(app, "office")
    form = {"csrf_token": token, "date": DAY, "period": "07-13", "operator": "Op A", "ship": "9300001",
            "ship_name": "MSC Aurora", "voyage": "long_haul", "berth": "berthed", "gate_id": "g-a",
            "post": "portalo", "function": "vigia", "workers": "3"}
    assert c.post("/escala/dispatch", data=form).status_code == 200
    again = c.post("/escala/dispatch", data=form)
    assert again.status_code == 400 and "requisição já registrada" in again.text
    assert "ninguém foi escalado de novo" in again.text
    changed = c.post("/escala/dispatch", data=form | {"workers": "4"})
    assert changed.status_code == 400 and "não é somada" in changed.text
    assert _n(reg, escala, escala.c.status == "active") == 3


@pytest.mark.parametrize("workers", ["99999999999", "201", "0"])
def test_a_head_count_outside_1_to_200_is_refused_by_the_form(app, reg, workers):
    c, token = logged_in(app, "office")
    form = {"csrf_token": token, "date": DAY, "period": "07-13", "operator": "Op A", "ship": "9300001",
            "ship_name": "MSC Aurora", "voyage": "long_haul", "berth": "berthed", "gate_id": "g-a",
            "post": "portalo", "function": "vigia", "workers": workers}
    r = c.post("/escala/dispatch", data=form)
    assert r.status_code == 400 and "deve estar entre 1 e 200" in r.text and "FALTAM" not in r.text
    assert _n(reg, escala) == 0


def test_a_refused_form_requisition_is_named_as_the_form_in_the_page_s_language(app, reg):
    c, token = logged_in(app, "office")
    form = {"csrf_token": token, "date": DAY, "period": "07-13", "operator": "Op A", "ship": "9300001",
            "ship_name": "MSC Aurora", "voyage": "long_haul", "berth": "berthed", "gate_id": "g-a",
            "post": "portalo", "function": "vigia", "workers": "x"}
    r = c.post("/escala/dispatch", data=form)
    assert r.status_code == 400
    errors = r.text.split('id="escala-errors"')[1].split("</div>")[0]
    assert "Requisição recusada, nada foi gravado:" in errors
    assert ("requisição do formulário: número de trabalhadores &#39;x&#39; não é um número inteiro"
            in errors), errors
    assert "requisição:2" not in errors and "requisition" not in errors and "workers" not in errors
    assert c.post("/lang", data={"csrf_token": token, "lang": "en"}).status_code == 303
    errors = c.post("/escala/dispatch", data=form).text.split('id="escala-errors"')[1].split("</div>")[0]
    assert "Requisition refused, nothing was written:" in errors
    assert "requisition: workers &#39;x&#39; is not a whole number" in errors
    assert _n(reg, escala) == 0


def test_a_file_with_a_shortfall_and_ineligible_workers_says_why(app, reg):
    c, token = logged_in(app, "office")
    rows = (HEADER + f"{DAY},07-13,Op A,9300001,MSC Aurora,long_haul,berthed,g-a,portalo,vigia,45\n"
            f"{DAY},13-19,Op A,9300002,Nordic Star,long_haul,berthed,g-b,portalo,vigia,1\n")
    r = c.post("/escala/dispatch", data={"csrf_token": token, "date": DAY},
               files={"requisitions": ("requisitions.csv", rows.encode())})
    assert r.status_code == 200
    text = r.text
    morning = text.split('data-period="07-13"')[1].split("</div>")[0]
    assert "escalados 39" in morning and "FALTAM 6" in morning  # 39 eligible of the 40 registered
    ineligible = text.split('id="ineligible"')[1].split("</ul>")[0]
    assert "V040: G3 exame de saúde vencido" in ineligible  # exam of 2023: older than 24 months
    afternoon = text.split('data-period="13-19"')[1].split("</div>")[0]
    assert "FALTAM 1" in afternoon  # everyone worked 07-13: less than 11 h of rest (G7)
    assert "V001: G7 descanso insuficiente desde a última jornada" in afternoon.split('class="skips"')[1]
    assert "G7 rest" not in text


def test_on_the_english_page_the_skip_reasons_keep_their_english_words(app, reg):
    c, token = logged_in(app, "office")
    assert c.post("/lang", data={"csrf_token": token, "lang": "en"}).status_code == 303
    rows = (HEADER + f"{DAY},07-13,Op A,9300001,MSC Aurora,long_haul,berthed,g-a,portalo,vigia,45\n"
            f"{DAY},13-19,Op A,9300002,Nordic Star,long_haul,berthed,g-b,portalo,vigia,1\n")
    r = c.post("/escala/dispatch", data={"csrf_token": token, "date": DAY},
               files={"requisitions": ("requisitions.csv", rows.encode())})
    assert r.status_code == 200
    afternoon = r.text.split('data-period="13-19"')[1].split("</div>")[0]
    assert "V001: G7 rest" in afternoon.split('class="skips"')[1] and "descanso" not in r.text


def test_a_bad_requisitions_file_names_each_row_and_writes_nothing(app, reg):
    c, token = logged_in(app, "office")
    rows = (HEADER + f"{DAY},07-13,Op A,9300001,A,long_haul,floating,g-a,portalo,vigia,1\n"
            f"{DAY},07-13,Op A,9300001,A,long_haul,berthed,g-a,portalo,vigia,0\n")
    r = c.post("/escala/dispatch", data={"csrf_token": token, "date": DAY},
               files={"requisitions": ("req.csv", rows.encode())})
    assert r.status_code == 400 and "req.csv:2" in r.text and "req.csv:3" in r.text
    assert _n(reg, escala) == 0 and _n(reg, downlink_changes, downlink_changes.c.kind == "escala") == 0


def test_refusal_and_substitution_replace_the_entry_and_publish(app, reg):
    c, token = logged_in(app, "office")
    rows = HEADER + f"{DAY},07-13,Op A,9300001,MSC Aurora,long_haul,berthed,g-a,portalo,vigia,1\n"
    c.post("/escala/dispatch", data={"csrf_token": token, "date": DAY}, files={"requisitions": ("r.csv", rows.encode())})
    with reg.connect() as conn:
        first = conn.execute(select(escala.c.id, escala.c.registration).where(escala.c.status == "active")).one()
    r = c.post(f"/escala/entry/{first.id}/refuse", data={"csrf_token": token, "date": DAY, "reason": "não quis"})
    assert r.status_code == 303
    assert _n(reg, penalties, penalties.c.registration == first.registration, penalties.c.rule == "R3") == 1
    with reg.connect() as conn:
        second = conn.execute(select(escala.c.id, escala.c.registration).where(escala.c.status == "active")).one()
    assert second.registration != first.registration
    r = c.post(f"/escala/entry/{second.id}/substitute", data={"csrf_token": token, "date": DAY, "reason": "doente",
                                                               "registration": "V030"})
    assert r.status_code == 303
    page = c.get("/escala", params={"date": DAY}).text
    assert 'data-registration="V030"' in page
    assert c.post(f"/escala/entry/{second.id}/explode", data={"csrf_token": token, "reason": "x"}).status_code == 404
    # presence: V030 was dispatched and has not boarded
    assert "V030" in page.split('id="not-boarded"')[1].split("</ul>")[0]


def test_the_exports_per_operator_and_per_ship(app, reg):
    c, token = logged_in(app, "office")
    rows = (HEADER + f"{DAY},07-13,Op A,9300001,MSC Aurora,long_haul,berthed,g-a,portalo,vigia,1\n"
            f"{DAY},07-13,Op B,9300002,Nordic Star,long_haul,berthed,g-b,portalo,vigia,1\n")
    c.post("/escala/dispatch", data={"csrf_token": token, "date": DAY}, files={"requisitions": ("r.csv", rows.encode())})
    auditor, _ = logged_in(app, "auditor")
    r = auditor.get("/escala/export/operator", params={"date": DAY, "name": "Op B"})
    assert r.status_code == 200 and f'escala-{DAY}-operator-Op_B.csv' in r.headers["content-disposition"]
    lines = r.text.splitlines()
    assert len(lines) == 2 and "9300002" in lines[1]
    r = auditor.get("/escala/export/ship", params={"date": DAY, "name": "9300001"})
    assert r.status_code == 200 and "9300001" in r.text and "9300002" not in r.text
    assert auditor.get("/escala/export/ship", params={"date": DAY, "name": "1"}).status_code == 404
    assert auditor.get("/escala/export/nope", params={"date": DAY}).status_code == 404
    assert auditor.post("/escala/dispatch", data={"csrf_token": "x"}).status_code == 403


@pytest.mark.parametrize("field, value, says", [
    ("gate_id", "g/aurora", "requisição do formulário: portaló &#39;g/aurora&#39; não é um id válido "
                            "(1 a 64 caracteres A-Z a-z 0-9 _ . -, começando por letra ou dígito)"),
    ("gate_id", "g+#", "requisição do formulário: portaló &#39;g+#&#39; não é um id válido"),
    ("period", "7-13", "requisição do formulário: período &#39;7-13&#39; não é HH-HH (ex.: 19-01)"),
])
def test_the_form_refuses_a_gate_id_the_gate_refuses_and_a_period_not_hh_hh(app, reg, field, value, says):
    c, token = logged_in(app, "office")
    form = {"csrf_token": token, "date": DAY, "period": "07-13", "operator": "Op A", "ship": "9300001",
            "ship_name": "MSC Aurora", "voyage": "long_haul", "berth": "berthed", "gate_id": "g-a",
            "post": "portalo", "function": "vigia", "workers": "1"} | {field: value}
    r = c.post("/escala/dispatch", data=form)
    assert r.status_code == 400 and "escalado(s) e publicado(s)" not in r.text
    errors = r.text.split('id="escala-errors"')[1].split("</div>")[0]
    assert says in errors, errors
    assert _n(reg, escala) == 0 and _n(reg, downlink_changes, downlink_changes.c.kind == "escala") == 0


def test_a_boarding_without_dispatch_shows_in_the_port_s_time(app, reg):
    """R5: V031 boards at g-a at 10:05 UTC, 07:05 in São Paulo, with no dispatch: the page lists him
    with the port's time ``dd/mm HH:MM:SS``, not the UTC ISO text."""
    import datetime as dt
    import uuid

    from central.ledger.schema import events

    at = dt.datetime(2026, 12, 2, 10, 5, tzinfo=dt.UTC)
    with Session(reg) as s, s.begin():
        s.execute(events.insert().values(
            event_id=str(uuid.uuid4()), port="santos", gate_id="g-a", boot_id="b", seq=1,
            occurred_at=at, clock_trusted=True, mono_ns=0, type="tap", registration="V031",
            decision="admit", payload={}, mac="00", raw=b"{}", received_at=at))
    c, _ = logged_in(app, "office")
    listed = c.get("/escala", params={"date": DAY}).text.split('id="without-dispatch"')[1].split("</ul>")[0]
    assert "V031 Edson Lima — g-a 02/12 07:05:00" in listed  # the name beside the registration
    assert "10:05" not in listed
    assert "nenhum" in c.get("/escala", params={"date": "2026-12-03"}).text.split(
        'id="without-dispatch"')[1].split("</ul>")[0].lower()


@pytest.mark.parametrize("query, words", [
    ("day=2026-02-31", "data: a data &#39;2026-02-31&#39; não é uma data válida"),
    ("date=2026-02-31", "data: a data &#39;2026-02-31&#39; não é uma data válida"),
    ("day=31/02/2026", "data: a data &#39;31/02/2026&#39; não é uma data válida"),
    ("day=amanha", "a data &#39;amanha&#39; não é uma data (dd/mm/aaaa)"),
    ("date=2026-03-15&day=2026-03-16",
     "data: a data &#39;2026-03-15&#39; e o dia &#39;2026-03-16&#39; são dois dias diferentes: informe um só"),
], ids=["day-feb-31", "date-feb-31", "day-br-feb-31", "day-word", "two-days"])
def test_an_impossible_day_is_refused_never_another_days_escala(app, reg, query, words):
    """The fresh tester's ``/escala?day=2026-02-31`` showed today's escala without a word (``day``
    was not read at all): now the page reads ``day`` as ``date`` and refuses a day that is none."""
    c, _token = logged_in(app, "office")
    r = c.get(f"/escala?{query}")
    assert r.status_code == 400 and words in r.text, r.text


def test_the_day_parameter_shows_the_day_it_names(app, reg, clock):
    c, _token = logged_in(app, "office")
    day = clock().date() + dt.timedelta(days=3)
    for query in (f"day={day}", f"date={day}", f"date={day}&day={day}"):
        r = c.get(f"/escala?{query}")
        assert r.status_code == 200 and day.strftime("%d/%m/%Y") in r.text, query
