"""The clerk's registry and pay forms over the real app (TestClient; SQLite and PostgreSQL): the
worker list (filters, keyset pages), the add-worker form (a workers.csv row's validation, R9's
admission evidence), the card actions (lost, replacement, a new card typed in any UID form), a
refused form shown again with its values and each error beside its field, mark-paid in two steps,
the audited reversal and a hold's reason linking to its flag. Every failure path writes nothing."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from central.ledger.tables import statements
from central.registry.admission_store import admissions
from central.registry.schema import audit_log, card_events, cards, downlink_changes, workers
from central.web.registrymodel import ListQuery, worker_list
from tests.central.web.conftest import engine_of, logged_in

Q = {"from": "2026-03-01", "to": "2026-03-31"}


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request, tmp_path, ledgers):
    """The web suite's ``engine``; a test that uses ``registry`` starts with the demo registry in it,
    one that uses ``payapp`` also with paydata.py's March 2026 paid (a copy of a ledger the session
    filled once: tests/central/web/conftest.py's FILLS)."""
    names = request.fixturenames
    filled = "demo_pay" if "payapp" in names else "demo_registry" if "registry" in names else None
    yield from engine_of(request, tmp_path, ledgers, filled)


@pytest.fixture
def registry(engine, users):
    """The ledger with config/demo's workers and cards (imported at the session's clock) and the users."""
    return engine


def _count(engine, table, *where):
    with engine.connect() as c:
        return c.execute(select(func.count()).select_from(table).where(*where)).scalar()


def _field_error(html: str, field: str) -> str:
    """The error shown beside ``field`` (its ``data-field`` span), unescaped enough to compare."""
    m = re.search(rf'<span class="field-error" id="[^"]+" data-field="{re.escape(field)}">([^<]*)</span>', html)
    assert m, f"no error beside {field}"
    return m.group(1).replace("&#39;", "'")


def _value(html: str, input_id: str) -> str:
    m = re.search(rf'<input id="{re.escape(input_id)}" name="[^"]+" value="([^"]*)"', html)
    assert m, f"no input {input_id}"
    return m.group(1)


# --- the worker list -------------------------------------------------------------------------

def _many(engine, n: int, now) -> None:
    with engine.begin() as conn:
        conn.execute(workers.insert(), [dict(
            registration=f"L{i:04d}", name=f"Lista {i:04d}", category="estivador" if i % 2 else "vigia",
            status="suspended" if i % 10 == 0 else "active",
            health_exam_date=dt.date(2025, 1, 1) + dt.timedelta(days=i), updated_at=now) for i in range(120)])


def test_the_list_pages_by_keys_and_every_page_has_the_next_rows(app, registry, clock):
    _many(registry, 120, clock())
    c, _ = logged_in(app, "inspector")
    seen, url, pages = [], "/workers?q=Lista", 0
    while url:
        r = c.get(url)
        assert r.status_code == 200
        seen += re.findall(r'<tr data-registration="(L\d+)">', r.text)
        nxt = re.search(r'id="next-page" href="([^"]+)"', r.text)
        url = nxt.group(1).replace("&amp;", "&") if nxt else ""
        pages += 1
    assert pages == 3 and seen == [f"L{i:04d}" for i in range(120)]  # by name, none twice, none lost
    r = c.get("/workers", params={"q": "Lista", "after": "L0049"})
    prev = re.search(r'id="prev-page" href="([^"]+)"', r.text).group(1).replace("&amp;", "&")
    back = re.findall(r'<tr data-registration="(L\d+)">', c.get(prev).text)
    assert back == [f"L{i:04d}" for i in range(50)]


def test_the_list_filters_by_category_status_and_exam_expiring(app, registry, clock):
    _many(registry, 120, clock())
    today = dt.date(2026, 1, 10)
    with Session(registry) as s:
        vigias = worker_list(s, ListQuery(category="vigia", q="Lista"), today=today, page_size=500).rows
        suspended = worker_list(s, ListQuery(status="suspended", q="Lista"), today=today, page_size=500).rows
        # estivador: 12 months (L0001's exam 2025-01-02 valid to 2026-01-01: expired); vigia: 24
        expiring = worker_list(s, ListQuery(expiring_days=30, q="Lista"), today=today, page_size=500).rows
    assert {r.worker.category for r in vigias} == {"vigia"} and len(vigias) == 60
    assert {r.worker.registration for r in suspended} == {f"L{i:04d}" for i in range(0, 120, 10)}
    for r in expiring:
        assert r.exam_valid_until <= today + dt.timedelta(days=30)
    regs = {r.worker.registration for r in expiring}
    # every estivador whose exam ends by 2026-02-09 (exam on or before 2025-02-09), no vigia (24 months)
    assert regs == {f"L{i:04d}" for i in range(1, 40, 2)}
    c, _ = logged_in(app, "inspector")
    assert c.get("/workers", params={"expiring": "x"}).status_code == 400
    assert c.get("/workers", params={"expiring": "99999"}).status_code == 400
    assert c.get("/workers", params={"status": "retired"}).status_code == 400
    assert 'data-registration="L0010"' in c.get("/workers", params={"status": "suspended", "q": "L00"}).text


def test_the_list_uses_no_offset_and_the_name_index(registry):
    """Keyset paging: the page's SQL has no OFFSET and (SQLite) walks ix_workers_name_registration."""
    from sqlalchemy import event

    seen: list[tuple[str, tuple]] = []
    event.listen(registry, "before_cursor_execute", lambda *a: seen.append((a[2], a[3])))
    with Session(registry) as s:
        worker_list(s, ListQuery(after="V001"), today=dt.date(2026, 1, 1))
    [(sql, params)] = [(q, p) for q, p in seen if "FROM workers" in q and "ORDER BY" in q]
    assert "(workers.name, workers.registration) >" in sql
    if "OFFSET" in sql.upper():  # SQLite's dialect writes LIMIT ? OFFSET ? with an offset of 0
        assert tuple(params)[-1] == 0
    if registry.dialect.name == "sqlite":
        with registry.connect() as conn:
            plan = " ".join(str(r) for r in conn.exec_driver_sql("EXPLAIN QUERY PLAN " + sql, tuple(params)))
        assert "ix_workers_name_registration" in plan


def _list_sql(engine, query: ListQuery) -> tuple[str, tuple]:
    from sqlalchemy import event

    seen: list[tuple[str, tuple]] = []

    def hook(*a):
        seen.append((a[2], tuple(a[3])))

    event.listen(engine, "before_cursor_execute", hook)
    try:
        with Session(engine) as s:
            worker_list(s, query, today=dt.date(2026, 1, 1))
    finally:
        event.remove(engine, "before_cursor_execute", hook)
    [found] = [(q, p) for q, p in seen if "FROM workers" in q and "ORDER BY" in q]
    return found


def _plan(engine, sql: str, params: tuple) -> str:
    with engine.connect() as conn:
        return " ".join(str(r) for r in conn.exec_driver_sql("EXPLAIN QUERY PLAN " + sql, params))


def test_a_category_walks_the_category_name_index_without_sorting_the_category(registry, clock):
    """The category (+ status) filter reads its first names from ix_workers_category_name_registration
    (0026) instead of sorting the whole category (50 ms at 50,000 workers); same rows."""
    _many(registry, 120, clock())
    sql, params = _list_sql(registry, ListQuery(category="estivador", status="active"))
    if registry.dialect.name == "sqlite":
        plan = _plan(registry, sql, params)
        assert "ix_workers_category_name_registration" in plan and "TEMP B-TREE" not in plan, plan
    with Session(registry) as s:
        rows = worker_list(s, ListQuery(category="estivador", status="active", q="Lista"),
                           today=dt.date(2026, 1, 1), page_size=500).rows
    assert [r.worker.registration for r in rows] == [f"L{i:04d}" for i in range(1, 120, 2) if i % 10]


def test_the_categories_are_read_by_index_seeks_not_a_scan_of_the_workers(registry, clock):
    """``categories`` (asked by every page of the list) seeks the category index once per category
    (a loose scan) and finds every registered category and the known ones."""
    from sqlalchemy import event

    from central.registry.enrol import KNOWN_CATEGORIES, categories

    with registry.begin() as conn:
        conn.execute(workers.insert(), [dict(registration=f"K{i}", name=f"K {i}", category=cat, status="active",
                                             updated_at=clock()) for i, cat in enumerate(("arrumador", "zelador"))])
    seen: list[tuple[str, tuple]] = []

    def hook(*a):
        seen.append((a[2], tuple(a[3])))

    event.listen(registry, "before_cursor_execute", hook)
    try:
        with Session(registry) as s:
            found = categories(s)
    finally:
        event.remove(registry, "before_cursor_execute", hook)
    with registry.connect() as conn:
        registered = set(conn.execute(select(workers.c.category).distinct()).scalars())
    assert found == sorted(registered | set(KNOWN_CATEGORIES)) and {"arrumador", "zelador"} <= set(found)
    if registry.dialect.name == "sqlite":
        [(sql, params)] = seen
        plan = _plan(registry, sql, params)
        assert "SCAN workers" not in plan and "SEARCH workers" in plan, plan


def test_the_text_search_ignores_case_and_on_sqlite_builds_no_lower_string_per_row(registry, clock):
    """A name or registration typed in any case finds the same workers; the name is compared folded
    (``name_folded``, 0029: no ``lower()`` of each name on either database); on SQLite the
    registration is ``LIKE`` on the bare column (its LIKE already ignores ASCII case)."""
    _many(registry, 120, clock())
    with Session(registry) as s:
        found = [[r.worker.registration for r in worker_list(s, ListQuery(q=q), today=dt.date(2026, 1, 1),
                                                              page_size=500).rows]
                 for q in ("lista 001", "LISTA 001", "Lista 001", "l001", "L001")]
    assert found[0] == [f"L{i:04d}" for i in range(10, 20)] and found[0] == found[1] == found[2]
    assert found[3] == found[4] == [f"L{i:04d}" for i in range(10, 20)]
    sql, _params = _list_sql(registry, ListQuery(q="lista"))
    assert "workers.name_folded LIKE" in sql and "lower(workers.name)" not in sql, sql
    if registry.dialect.name == "sqlite":
        assert "lower(" not in sql, sql
    else:
        assert "lower(workers.registration)" in sql, sql


# --- the add-worker form ---------------------------------------------------------------------

VIGIA = {"registration": "V900", "name": "Nova Vigia", "category": "vigia", "health_exam_date": "10/01/2026",
         "rotation_number": "900", "birth_date": "15/05/1995", "nationality": "BR", "registered_on": "01/12/2026",
         "vision": "ASO 123", "vision_on": "20/11/2026", "police_record": "AB-1", "police_record_on": "21/11/2026",
         "military": "CR 55", "military_on": "01/02/2015", "electoral": "TE 9", "electoral_on": "03/03/2014"}


def test_a_worker_added_by_the_form_is_registered_with_his_evidence(app, registry):
    c, token = logged_in(app, "office")
    assert 'name="category"' in c.get("/workers/new").text
    r = c.post("/workers/new", data=VIGIA | {"csrf_token": token})
    assert r.status_code == 303 and r.headers["location"] == "/workers/V900?added=1"
    with registry.connect() as conn:
        w = conn.execute(select(workers).where(workers.c.registration == "V900")).one()
        adm = conn.execute(select(admissions).where(admissions.c.registration == "V900")).one()
        acts = dict(conn.execute(select(audit_log.c.action, audit_log.c.actor)
                                 .where(audit_log.c.subject == "V900")).all())
    assert (w.status, w.health_exam_date, w.rotation_number) == ("active", dt.date(2026, 1, 10), 900)
    assert adm.birth_date == dt.date(1995, 5, 15) and adm.evidence["vision"] == {"document": "ASO 123",
                                                                                 "dated": "2026-11-20"}
    assert acts == {"worker.add": "web:office", "worker.admission": "web:office"}
    assert _count(registry, downlink_changes, downlink_changes.c.key == "V900") == 1  # to the gates (G3)
    assert "Nova Vigia" in c.get("/workers", params={"q": "V900"}).text


@pytest.mark.parametrize("change, field, words", [
    ({"health_exam_date": "31/02/2026"}, "health_exam_date",
     "data do exame de saúde '31/02/2026' não é uma data válida (dd/mm/aaaa)"),
    ({"birth_date": "1995/05/15"}, "birth_date", "não é uma data válida (dd/mm/aaaa)"),
    ({"category": "marinheiro"}, "category", "categoria 'marinheiro' não é um dos valores"),
    ({"registration": "V001"}, "registration", "V001 já está cadastrado"),
    ({"registration": "v001"}, "registration",
     "a matrícula v001 difere da matrícula cadastrada V001 só em maiúsculas/minúsculas"),
    ({"registration": "=HYPERLINK(A1)"}, "registration",
     "a matrícula '=HYPERLINK(A1)' começa com '=': não é matrícula (uma planilha a executaria como fórmula)"),
    ({"registration": "@SUM(1)"}, "registration", "a matrícula '@SUM(1)' começa com '@': não é matrícula"),
    ({"registration": "-2+3"}, "registration", "a matrícula '-2+3' começa com '-'"),
    ({"registration": "+1"}, "registration", "a matrícula '+1' começa com '+'"),
    ({"registration": "V9 04"}, "registration",
     "a matrícula 'V9 04' contém ' ': uma matrícula tem letras e algarismos, com - . / entre eles"),
    ({"rotation_number": "1"}, "rotation_number", "o número de rodízio 1 já pertence a V001 (vigia)"),
    ({"name": ""}, "name", "nome é um campo obrigatório"),
    ({"birth_date": "15/05/1960"}, "birth_date", "83.611 art. 15 a: idade 66"),
    ({"birth_date": "15/05/2090"}, "birth_date",
     "83.611 art. 15 a: a data de nascimento 15/05/2090 está no futuro (depois do registro em 01/12/2026)"),
    ({"booklet_revalidated_year": "99999999999"}, "booklet_revalidated_year", "está fora do intervalo 2000..2100"),
    ({"booklet_revalidated_year": "1999"}, "booklet_revalidated_year", "está fora do intervalo 2000..2100"),
    ({"nationality": "PT"}, "nationality", "83.611 art. 15 a: deve ser brasileiro (nacionalidade PT)"),
    ({"vision": "", "vision_on": ""}, "vision", "falta atestado de saúde e visão"),
    ({"police_record_on": "02/12/2026"}, "police_record_on", "tem data 02/12/2026, depois do registro em 01/12/2026"),
    ({"electoral_on": ""}, "electoral_on", "falta a data do documento de título de eleitor"),
])
def test_a_refused_add_worker_form_keeps_every_value_and_shows_the_error_beside_its_field(
        app, registry, change, field, words):
    c, token = logged_in(app, "office")
    before = _count(registry, workers)
    r = c.post("/workers/new", data=VIGIA | change | {"csrf_token": token})
    assert r.status_code == 400
    assert words in _field_error(r.text, field)
    assert 'id="form-refused"' in r.text
    assert "2147483647" not in r.text and "idade -" not in r.text  # a year's column range, a negative age
    typed = VIGIA | change
    for name in ("registration", "name", "birth_date", "vision", "police_record_on"):
        assert _value(r.text, f"f-{name}") == typed[name]  # as typed, dd/mm/aaaa included
    assert re.search(rf'<option value="{re.escape(typed["category"])}" selected>', r.text)
    assert _count(registry, workers) == before and _count(registry, admissions) == 0


def test_the_add_form_and_the_card_actions_need_the_csrf_token(app, registry):
    c, token = logged_in(app, "office")
    not_active = _count(registry, cards, cards.c.status != "active")
    for path, data in (("/workers/new", VIGIA), ("/workers/V001/cards/0A04A10001/lost", {}),
                       ("/workers/V001/cards", {"uid": "0C0C0C0C", "uid_form": "hex", "kind": "control"}),
                       ("/workers/V001/cards/0A04A10001/replace", {"new_uid": "0C0C0C0C", "uid_form": "hex"}),
                       ("/pay/reverse", {"statement": "x", "reason": "r"}),
                       ("/pay/mark-paid", {"statement": "x", "confirm": "yes"})):
        for bad in ({}, {"csrf_token": "forged"}):
            r = c.post(path, data=data | bad)
            assert r.status_code == 403, path
    assert _count(registry, workers, workers.c.registration == "V900") == 0
    assert _count(registry, cards, cards.c.status != "active") == not_active
    inspector, itoken = logged_in(app, "inspector")
    assert inspector.post("/workers/new", data=VIGIA | {"csrf_token": itoken}).status_code == 403
    assert inspector.post("/workers/V001/cards/0A04A10001/lost", data={"csrf_token": itoken}).status_code == 403


# --- card actions ----------------------------------------------------------------------------

def test_a_card_reported_lost_is_blocked_for_the_gates_and_a_replacement_issued(app, registry):
    c, token = logged_in(app, "office")
    version = _count(registry, downlink_changes)
    r = c.post("/workers/V001/cards/0A04A10001/lost", data={"csrf_token": token})
    assert r.status_code == 303 and r.headers["location"] == "/workers/V001?card=lost-0A04A10001"
    with registry.connect() as conn:
        assert conn.execute(select(cards.c.status).where(cards.c.uid == "0A04A10001")).scalar() == "lost"
        change = conn.execute(select(downlink_changes).order_by(downlink_changes.c.id.desc())).first()
    assert change.key == "0A04A10001" and change.body["status"] == "lost" and change.id > version
    page = c.get("/workers/V001?card=lost-0A04A10001").text
    assert 'data-done="lost"' in page and "bloqueado em todos os portalós" in page
    # again: refused beside the card, nothing written
    r = c.post("/workers/V001/cards/0A04A10001/lost", data={"csrf_token": token})
    assert r.status_code == 400 and "o cartão 0A04A10001 está perdido: não pode ser perdido" in r.text
    # a replacement typed as DEZ10 (4-byte UID written as a number)
    r = c.post("/workers/V001/cards/0A04A10001/replace",
               data={"csrf_token": token, "new_uid": "0202116113", "uid_form": "decimal10"})
    assert r.status_code == 303 and r.headers["location"] == "/workers/V001?card=replaced-0C0C0C11"
    with registry.connect() as conn:
        rows = dict(conn.execute(select(cards.c.uid, cards.c.status).where(cards.c.registration == "V001")).all())
    assert rows["0A04A10001"] == "replaced" and rows["0C0C0C11"] == "active"


@pytest.mark.parametrize("data, field, words", [
    ({"uid": "XYZ", "uid_form": "hex"}, "uid", "o UID 'XYZ' não é hexadecimal"),
    ({"uid": "123", "uid_form": "decimal10"}, "uid", "deve ter exatamente 10 dígitos na forma decimal10"),
    ({"uid": "12345678", "uid_form": "dez8"}, "uid", "a forma dez8 traz só 24 bits do cartão"),
    ({"uid": "0A04A10003", "uid_form": "hex"}, "uid", "o cartão 0A04A10003 já existe (ativo, da matrícula V003)"),
    ({"uid": "0D0D0D0D", "uid_form": "hex"}, "uid", "a matrícula V001 já tem o cartão ativo 0A04A10001"),
    ({"uid": "0D0D0D0D", "uid_form": "hex", "kind": "inspector"}, "kind", "o tipo 'inspector' não é de controle"),
])
def test_a_refused_new_card_keeps_its_values_beside_the_field(app, registry, data, field, words):
    c, token = logged_in(app, "office")
    before = _count(registry, cards)
    r = c.post("/workers/V001/cards", data={"kind": "control"} | data | {"csrf_token": token})
    assert r.status_code == 400
    assert words in _field_error(r.text, field)
    assert _value(r.text, "n-uid") == data["uid"]
    assert re.search(rf'<option value="{data["uid_form"]}" selected>', r.text)
    assert _count(registry, cards) == before


def test_a_new_card_typed_reversed_is_enrolled_after_the_old_one_is_lost(app, registry):
    c, token = logged_in(app, "office")
    c.post("/workers/V001/cards/0A04A10001/lost", data={"csrf_token": token})
    r = c.post("/workers/V001/cards", data={"csrf_token": token, "uid": "11 22 33 44", "uid_form": "hex_reversed",
                                            "kind": "control"})
    assert r.status_code == 303 and r.headers["location"] == "/workers/V001?card=issued-44332211"
    with registry.connect() as conn:
        ev = conn.execute(select(card_events.c.event, card_events.c.actor).where(card_events.c.uid == "44332211")).one()
    assert ev == ("issued", "web:office")


def test_a_bad_replacement_uid_is_refused_beside_its_card(app, registry):
    c, token = logged_in(app, "office")
    not_active = _count(registry, cards, cards.c.status != "active")
    r = c.post("/workers/V001/cards/0A04A10001/replace", data={"csrf_token": token, "new_uid": "12G",
                                                                "uid_form": "hex"})
    assert r.status_code == 400 and "o UID '12G' não é hexadecimal" in _field_error(r.text, "new_uid")
    assert _value(r.text, "r-0A04A10001-uid") == "12G" and "<details open>" in r.text  # the card's form open
    r = c.post("/workers/V001/cards/0A04A10003/replace", data={"csrf_token": token, "new_uid": "0E0E0E0E",
                                                                "uid_form": "hex"})
    assert r.status_code == 400 and "o cartão 0A04A10003 não é da matrícula V001" in r.text
    assert _count(registry, cards, cards.c.status != "active") == not_active


# --- refused edit and photo keep the page ----------------------------------------------------

def test_a_refused_edit_keeps_every_typed_value_beside_the_fields(app, registry):
    c, token = logged_in(app, "office")
    form = {"csrf_token": token, "name": "Ana Lima Nova", "category": "vigia", "status": "active",
            "suspended_from": "", "suspended_until": "", "health_exam_date": "32/01/2026",
            "booklet_revalidated_year": "", "rotation_number": "abc"}
    r = c.post("/workers/V001", data=form)
    assert r.status_code == 400
    assert "não é uma data válida (dd/mm/aaaa)" in _field_error(r.text, "health_exam_date")
    assert _value(r.text, "e-name") == "Ana Lima Nova" and _value(r.text, "e-exam") == "32/01/2026"
    form["health_exam_date"] = "15/01/2026"
    r = c.post("/workers/V001", data=form)
    assert r.status_code == 400 and "não é um número inteiro" in _field_error(r.text, "rotation_number")
    assert _value(r.text, "e-rot") == "abc" and _value(r.text, "e-exam") == "15/01/2026"
    with registry.connect() as conn:
        assert conn.execute(select(workers.c.name).where(workers.c.registration == "V001")).scalar() == "Ana Lima"
    form["rotation_number"] = "1"
    assert c.post("/workers/V001", data=form).status_code == 303
    with registry.connect() as conn:
        row = conn.execute(select(workers.c.name, workers.c.health_exam_date)
                           .where(workers.c.registration == "V001")).one()
    assert row == ("Ana Lima Nova", dt.date(2026, 1, 15))


def test_a_non_image_photo_is_refused_on_the_worker_page(engine, registry, clock, tmp_path):
    from central.config import WebSettings
    from central.web.app import create_app
    from tests.central.web.conftest import SECRET

    app = create_app(engine, WebSettings(photos_dir=str(tmp_path / "photos")), SECRET, now=clock, background=False)
    c, token = logged_in(app, "office")
    r = c.post("/workers/V001/photo", data={"csrf_token": token},
               files={"photo": ("nota.txt", b"not a picture at all", "text/plain")})
    assert r.status_code == 400 and "<h1>Ana Lima" in r.text
    assert "a foto não é uma imagem JPEG ou PNG" in _field_error(r.text, "photo")
    assert not (tmp_path / "photos").exists() or not any((tmp_path / "photos").iterdir())


# --- the pay run -----------------------------------------------------------------------------

@pytest.fixture
def payapp(app, registry):
    """The app over the demo registry with paydata.seed_pay's statements (the engine's FILLS demo_pay)."""
    return app


def _paid(engine):
    with engine.connect() as conn:
        return set(conn.execute(select(statements.c.statement_id).where(statements.c.paid_at.is_not(None))).scalars())


def test_the_pay_run_has_one_row_per_worker_with_name_total_and_state(payapp):
    c, _ = logged_in(payapp, "office")
    text = c.get("/pay", params=Q).text
    rows = re.findall(r'<tr data-worker="([^"]+)" data-state="([^"]+)">', text)
    assert len(rows) == len({r for r, _ in rows}) >= 2
    assert ("V008", "on_hold") in rows and ("V017", "unpaid") in rows
    v017 = text.split('data-worker="V017"')[1].split("</tr>\n  \n")[0]
    assert "<summary>" in v017 and "R$ 696,60" in v017 and "P1" in v017


def test_a_statement_on_hold_says_why_and_links_to_its_flag(payapp):
    c, _ = logged_in(payapp, "office")
    held = c.get("/pay", params=Q).text.split('id="held"')[1].split("</table>")[0]
    assert re.search(r'<a href="/flags\?flag=EARLY_EXIT&amp;worker=V008" data-flag="EARLY_EXIT">saída antecipada',
                     held), held
    r = c.get("/flags", params={"flag": "EARLY_EXIT", "worker": "V008"})
    assert r.status_code == 200


def test_mark_paid_asks_for_confirmation_and_an_empty_selection_keeps_the_form(payapp):
    engine = payapp.state.web.engine
    c, token = logged_in(payapp, "office")
    r = c.post("/pay/mark-paid", data={"csrf_token": token, "ref": "lote-7", **Q})
    assert r.status_code == 400 and "selecione ao menos um demonstrativo" in _field_error(r.text, "statement")
    assert _value(r.text, "m-ref") == "lote-7" and 'id="statements"' in r.text
    r = c.post("/pay/mark-paid", data={"csrf_token": token, "ref": "lote-7", "pay_worker": ["V017"], **Q})
    assert r.status_code == 200 and 'id="confirm-form"' in r.text
    assert re.search(r'id="sum-count">1<', r.text) and re.search(r'id="sum-total">R\$ 696,60<', r.text)
    assert 'id="sum-ref">lote-7<' in r.text and _paid(engine) == set()
    ids = re.findall(r'name="statement" value="([^"]+)"', r.text)
    r = c.post("/pay/mark-paid", data={"csrf_token": token, "ref": "lote-7", "statement": ids, "confirm": "yes", **Q})
    assert r.status_code == 303 and "done=paid-1" in r.headers["location"]
    assert _paid(engine) == set(ids)
    # select all: every payable worker ticked (V008 is on hold: not payable)
    page = c.get("/pay", params=Q | {"all": "1"}).text
    ticked = re.findall(r'name="pay_worker" value="([^"]+)" [^>]*checked', page)
    assert "V008" not in ticked and "V017" not in ticked  # V017 is paid now
    # the reversal: a reason is required, typed text kept; then audited
    sid = ids[0]
    form = c.get("/pay/reverse", params={"statement": sid, **Q})
    assert form.status_code == 200 and "R$ 696,60" in form.text
    r = c.post("/pay/reverse", data={"csrf_token": token, "statement": sid, "reason": "  ", **Q})
    assert r.status_code == 400 and "a reversão precisa de um motivo" in _field_error(r.text, "reason")
    assert _paid(engine) == {sid}
    r = c.post("/pay/reverse", data={"csrf_token": token, "statement": sid, "reason": "lote errado", **Q})
    assert r.status_code == 303 and "done=reversed-1" in r.headers["location"]
    assert _paid(engine) == set()
    r = c.post("/pay/reverse", data={"csrf_token": token, "statement": sid, "reason": "de novo", **Q})
    assert r.status_code == 400 and "não está(ão) marcado(s) como pago(s)" in r.text
    assert c.get("/pay/reverse", params={"statement": "nope"}).status_code == 404
    with engine.connect() as conn:
        acts = [a for (a,) in conn.execute(select(audit_log.c.action).where(audit_log.c.action.like("pay.%"))
                                           .order_by(audit_log.c.id))]
    assert acts == ["pay.mark_paid", "pay.reverse_paid"]


def test_the_english_add_form_words_its_refusal_in_english(engine, registry, clock):
    from central.config import WebSettings
    from central.web.app import create_app
    from tests.central.web.conftest import SECRET

    app = create_app(engine, WebSettings(lang="en"), SECRET, now=clock, background=False)
    c, token = logged_in(app, "office")
    page = c.get("/workers/new").text
    assert "Add a worker" in page and "dd/mm/yyyy" in page and "Admission conditions and their evidence" in page
    r = c.post("/workers/new", data=VIGIA | {"birth_date": "15/05/1960", "csrf_token": token})
    assert r.status_code == 400 and "The form was refused and nothing was saved" in r.text
    assert _field_error(r.text, "birth_date") == "83.611 art. 15 a: age 66 on Dec 1, 2026 is outside 21..41"
    assert _value(r.text, "f-birth_date") == "15/05/1960"
