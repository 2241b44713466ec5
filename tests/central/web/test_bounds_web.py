"""Values that do not fit the office database, through the real app on SQLite and PostgreSQL: a
long registration, category, post, gate or operator, a huge rotation number or booklet year, a NUL
in the address, a day or month out of range. Each is refused on the page in pt-BR (400), never a
500, and nothing is written."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import func, select

from central.registry.schema import audit_log, workers
from central.rotation.schema import escala, requisitions
from tests.central.web.conftest import engine_of, logged_in

HEADER = "registration,name,category,status,booklet_revalidated_year,rotation_number\n"
INT_RANGE = "-2147483648..2147483647"
# the office's clock: the evening before DAY (18:00 in the port), when none of its periods has
# ended (the machine's date is later: a past escala is refused)
EVE = dt.datetime(2026, 12, 1, 21, 0, tzinfo=dt.UTC)


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request, tmp_path, ledgers):
    """The web suite's ``engine``; a test that uses ``registry`` starts with the demo registry in it
    (a copy of a ledger the session imported it into once: tests/central/web/conftest.py's FILLS)."""
    yield from engine_of(request, tmp_path, ledgers, "demo_registry" if "registry" in request.fixturenames else None)


@pytest.fixture
def registry(engine, users):
    """The ledger with config/demo's workers and cards (imported at the session's clock) and the users."""
    return engine


def _count(engine, table, *where):
    with engine.connect() as c:
        return c.execute(select(func.count()).select_from(table).where(*where)).scalar()


@pytest.mark.parametrize("row, words", [
    ("R" * 100 + ",Nova,vigia,active,2026,900", "w.csv:2: matrícula (registration) tem mais de 64 caracteres (100)"),
    ("N001,Nova," + "c" * 100 + ",active,2026,900", "w.csv:2: categoria (category) tem mais de 64 caracteres (100)"),
    ("N001,Nova,vigia,active,2026,99999999999999999999",
     f"w.csv:2: número de rodízio (rotation_number) 99999999999999999999 está fora do intervalo {INT_RANGE}"),
    ("N001,Nova,vigia,active,99999999999,900",
     "w.csv:2: ano de revalidação da caderneta (booklet_revalidated_year) 99999999999 está fora do intervalo "
     "2000..2100"),  # the plausible years, not the column's range
])
def test_an_upload_with_a_value_that_does_not_fit_is_refused_in_pt(app, registry, row, words):
    c, token = logged_in(app, "office")
    before = (_count(registry, workers), _count(registry, audit_log))
    r = c.post("/workers/upload", data={"csrf_token": token},
               files={"workers": ("w.csv", (HEADER + row + "\n").encode())})
    assert r.status_code == 400 and words in r.text, r.text
    assert (_count(registry, workers), _count(registry, audit_log)) == before


@pytest.mark.parametrize("field, value, words", [
    ("category", "c" * 100, "categoria tem mais de 64 caracteres (100)"),
    ("rotation_number", "99999999999", f"número de rodízio 99999999999 está fora do intervalo {INT_RANGE}"),
    ("rotation_number", "99999999999999999999", "número de rodízio 99999999999999999999 está fora do intervalo"),
])
def test_an_edit_with_a_value_that_does_not_fit_is_refused_in_pt(app, registry, field, value, words):
    c, token = logged_in(app, "office")
    r = c.post("/workers/V001", data={"csrf_token": token, field: value})
    assert r.status_code == 400 and words in r.text, r.text
    assert _count(registry, audit_log, audit_log.c.action == "worker.edit") == 0


@pytest.mark.parametrize("field, value, words", [
    ("post", "p" * 100, "posto tem mais de 64 caracteres (100)"),
    ("gate_id", "g" * 100, f"portaló &#39;{'g' * 100}&#39; não é um id válido (1 a 64 caracteres"),
    ("operator", "o" * 200, "operador tem mais de 128 caracteres (200)"),
])
def test_an_escala_form_with_a_long_value_is_refused_in_pt(app, registry, clock, field, value, words):
    clock.at = EVE
    c, token = logged_in(app, "office")
    form = {"csrf_token": token, "date": "2026-12-02", "period": "07-13", "operator": "Op A", "ship": "9300001",
            "ship_name": "MSC Aurora", "voyage": "long_haul", "berth": "berthed", "gate_id": "g-a",
            "post": "portalo", "function": "vigia", "workers": "1", field: value}
    r = c.post("/escala/dispatch", data=form)
    assert r.status_code == 400, r.text
    errors = r.text.split('id="escala-errors"')[1].split("</div>")[0]
    assert f"requisição do formulário: {words}" in errors, errors
    assert (_count(registry, requisitions), _count(registry, escala)) == (0, 0)


@pytest.mark.parametrize("url", ["/workers/%00", "/workers/V%00", "/workers?q=%00", "/flags?worker=%00"])
def test_a_nul_in_the_address_is_refused_in_pt(app, registry, url):
    c, _token = logged_in(app, "office")
    r = c.get(url)
    assert r.status_code == 400 and "o endereço contém um caractere NUL" in r.text


def test_a_nul_in_the_address_of_an_edit_writes_nothing(app, registry):
    c, token = logged_in(app, "office")
    r = c.post("/workers/%00", data={"csrf_token": token, "name": "X"})
    assert r.status_code in (400, 403)
    assert _count(registry, audit_log, audit_log.c.action == "worker.edit") == 0


@pytest.mark.parametrize("url, words", [
    ("/escala?date=0001-01-01", "data: a data &#39;0001-01-01&#39; está fora de 01/01/2000..31/12/2100"),
    ("/escala?date=9999-12-31", "data: a data &#39;9999-12-31&#39; está fora de 01/01/2000..31/12/2100"),
    ("/flags?date=0001-01-01", "data: a data &#39;0001-01-01&#39; está fora de 01/01/2000..31/12/2100"),
    ("/reports?month=2026-13", "mês: o mês &#39;2026-13&#39; não é AAAA-MM"),
    ("/reports?month=0001-01", "mês: o mês &#39;0001-01&#39; está fora de 2000-01..2100-12"),
    ("/reports?month=9999-12", "mês: o mês &#39;9999-12&#39; está fora de 2000-01..2100-12"),
    ("/reports/chart/sizing.svg?month=0001-01", "o mês &#39;0001-01&#39; está fora de 2000-01..2100-12"),
])
def test_a_day_or_month_out_of_range_is_refused_in_pt(app, registry, url, words):
    c, _token = logged_in(app, "office")
    r = c.get(url)
    assert r.status_code == 400 and words in r.text, r.text
    assert "out of range" not in r.text and "outside" not in r.text


def test_the_english_page_keeps_the_english_reason(app, registry):
    c, token = logged_in(app, "office")
    assert c.post("/lang", data={"csrf_token": token, "lang": "en"}).status_code == 303
    r = c.post("/workers/V001", data={"csrf_token": token, "category": "c" * 100})
    assert r.status_code == 400 and "category is longer than 64 characters (100)" in r.text


def test_an_escala_entry_id_too_large_for_any_id_is_no_entry(app, registry):
    c, token = logged_in(app, "office")
    r = c.post("/escala/entry/99999999999999999999999/refuse",
               data={"csrf_token": token, "reason": "x", "date": "2026-12-02"})
    assert r.status_code == 400 and "nenhuma entrada de escala 99999999999999999999999" in r.text


@pytest.mark.parametrize("engine", ["postgresql"], indirect=True)  # SQLite stores any length
def test_a_value_postgresql_refuses_past_the_entry_checks_answers_400_and_writes_nothing(app, registry, engine):
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request

    async def unchecked(request: Request):  # an endpoint that forgot central.bounds
        web = request.app.state.web
        await run_in_threadpool(web.with_session, lambda s: s.execute(workers.update().where(
            workers.c.registration == "V001").values(category="c" * 100)))

    app.add_route("/unchecked", unchecked, methods=["GET"])
    c, _token = logged_in(app, "office")
    r = c.get("/unchecked")
    assert r.status_code == 400 and "um valor está fora do intervalo permitido" in r.text
    with engine.connect() as conn:
        assert conn.execute(select(workers.c.category).where(workers.c.registration == "V001")).scalar() == "vigia"


@pytest.mark.parametrize("action", ["refuse", "substitute"])
def test_a_reason_with_a_nul_is_refused_in_pt_and_the_entry_stays(app, registry, clock, action):
    clock.at = EVE
    c, token = logged_in(app, "office")
    form = {"csrf_token": token, "date": "2026-12-02", "period": "07-13", "operator": "Op A", "ship": "9300001",
            "ship_name": "MSC Aurora", "voyage": "long_haul", "berth": "berthed", "gate_id": "g-a",
            "post": "portalo", "function": "vigia", "workers": "1"}
    assert c.post("/escala/dispatch", data=form).status_code == 200
    with registry.connect() as conn:
        entry = conn.execute(select(escala.c.id)).scalar_one()
    r = c.post(f"/escala/entry/{entry}/{action}", data={"csrf_token": token, "reason": "doente\x00", "date": "2026-12-02"})
    # the escala page again, that row's menu open, the reason refused beside its field
    assert r.status_code == 400 and 'data-field="reason">motivo contém um caractere NUL</span>' in r.text, r.text
    assert _count(registry, escala, escala.c.status == "active") == 1
