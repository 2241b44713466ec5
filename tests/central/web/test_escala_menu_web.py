"""The escala page as the clerk works it (issue 34 item 5), over the real app (SQLite and PostgreSQL):
the day's escala grouped by ship and period with the workers' names beside their registrations; a
requisition whose ship is chosen from the ship calls in port (not typed); a refused requisition,
refusal (R3) or substitution shows the same form again with the typed values and the error beside
its field, and writes nothing."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from central.calls.service import ShipCall, save_call
from central.registry.schema import downlink_changes, penalties
from central.rotation.schema import escala, refusals
from central.web.routes.escala import group_entries
from portgate.records import Berth, EscalaEntry, Voyage
from tests.central.web.conftest import engine_of, logged_in

DEMO = Path(__file__).resolve().parents[3] / "config" / "demo"
DAY = "2026-12-02"
HEADER = "date,period,operator,ship,ship_name,voyage,berth,gate_id,post,function,workers\n"
ARRIVED = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)
# the office's clock: the evening before DAY (18:00 in the port), when none of its periods has
# ended (the machine's date is later: a past escala is refused)
EVE = dt.datetime(2026, 12, 1, 21, 0, tzinfo=dt.UTC)
NAMES = dict(line.split(",")[:2] for line in (DEMO / "workers.csv").read_text(encoding="utf-8").splitlines()[1:])


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request, tmp_path, ledgers):
    """The web suite's ``engine``; a test that uses ``reg`` starts with the demo registry imported at
    EVE in it (a copy of a ledger the session imported it into once: tests/central/web/conftest.py's
    FILLS)."""
    yield from engine_of(request, tmp_path, ledgers, "demo_registry_eve" if "reg" in request.fixturenames else None)


@pytest.fixture
def reg(engine, users, clock):
    """The ledger with config/demo's workers and cards imported at EVE, the users; the clock at EVE."""
    clock.at = EVE
    return engine


def _call(engine, ship: str, name: str, gate: str | None, *, arrival=ARRIVED, departure=None,
          voyage="long_haul", berth="anchored") -> int:
    with Session(engine) as s, s.begin():
        return save_call(s, ShipCall(ship, name, voyage, berth, gate, arrival, departure), actor="t")


def _n(engine, table, *where):
    with engine.connect() as c:
        return c.execute(select(func.count()).select_from(table).where(*where)).scalar()


def _group(page: str, ship: str, period: str) -> str:
    m = re.search(rf'<section class="escala-group" data-ship="{ship}" data-period="{period}".*?</section>', page, re.S)
    assert m, f"no escala group {ship} {period}"
    return m.group(0)


def _dispatch(c, token, rows: str):
    r = c.post("/escala/dispatch", data={"csrf_token": token, "date": DAY},
               files={"requisitions": ("r.csv", (HEADER + rows).encode())})
    assert r.status_code == 200, r.text[-2000:]


def test_the_escala_is_grouped_by_ship_and_period_with_names_beside_registrations(app, reg):
    c, token = logged_in(app, "office")
    _dispatch(c, token, f"{DAY},13-19,Op B,9300002,Nordic Star,long_haul,berthed,g-b,portalo,vigia,1\n"
                        f"{DAY},07-13,Op A,9300001,MSC Aurora,long_haul,berthed,g-a,portalo,vigia,2\n")
    page = c.get("/escala", params={"date": DAY}).text
    groups = re.findall(r'<section class="escala-group" data-ship="(\d+)" data-period="([\d-]+)"', page)
    assert groups == [("9300001", "07-13"), ("9300002", "13-19")]  # by period first
    morning = _group(page, "9300001", "07-13")
    assert "MSC Aurora" in morning and "Portaló g-a" in morning and "Operador Op A" in morning
    regs = re.findall(r'data-registration="(V\d+)"', morning)
    assert len(regs) == 2
    for r in regs:  # the registry's name in its registration's row
        row = morning.split(f'data-registration="{r}"')[1].split("</tr>")[0]
        assert f'class="worker-name">{NAMES[r]}</td>' in row, row
    # each row's refusal and substitution are behind its own menu, labelled with the worker
    row = morning.split(f'data-registration="{regs[0]}"')[1].split("</tr>")[0]
    assert '<details class="row-menu">' in row and f" — {regs[0]} {NAMES[regs[0]]}</span></summary>" in row
    assert row.count("<form") == 2
    # an auditor sees the groups and names, no menu
    auditor, _ = logged_in(app, "auditor")
    seen = auditor.get("/escala", params={"date": DAY}).text
    assert f'class="worker-name">{NAMES[regs[0]]}</td>' in seen and "row-menu" not in seen


def test_group_entries_orders_rows_and_leaves_an_unknown_registration_nameless():
    def e(period, ship, post, reg):
        return EscalaEntry(date=dt.date(2026, 12, 2), period=period, ship=ship, ship_name=f"S{ship}",
                           voyage=Voyage.LONG_HAUL, berth=Berth.BERTHED, gate_id=f"g{ship}", post=post,
                           function="vigia", registration=reg)

    groups = group_entries([(1, "Op", e("13-19", "2", "proa", "V9")), (2, "Op", e("07-13", "1", "proa", "V2")),
                            (3, "Op2", e("07-13", "1", "portalo", "V1"))], {"V1": "Um", "V2": "Dois"})
    assert [(g["period"], g["ship"]) for g in groups] == [("07-13", "1"), ("13-19", "2")]
    assert [r["entry"].registration for r in groups[0]["rows"]] == ["V1", "V2"]
    assert groups[0]["operators"] == ["Op", "Op2"] and groups[0]["gate_ids"] == ["g1"]
    assert groups[1]["rows"][0]["name"] == ""


def test_the_requisition_form_offers_the_ships_in_port_and_takes_the_call_s_ship_and_gate(app, reg):
    aurora = _call(reg, "9300001", "MSC Aurora", "g-a")
    _call(reg, "9300009", "Gone Before", "g-z", arrival=ARRIVED - dt.timedelta(days=5),
          departure=ARRIVED - dt.timedelta(days=3))
    _call(reg, "9300008", "Not Yet", "g-y", arrival=dt.datetime(2026, 12, 3, 12, tzinfo=dt.UTC))
    c, token = logged_in(app, "office")
    page = c.get("/escala", params={"date": DAY}).text
    select_ = page.split('<select id="q-call"')[1].split("</select>")[0]
    assert f'<option value="{aurora}">MSC Aurora (IMO 9300001)' in select_
    assert "Gone Before" not in select_ and "Not Yet" not in select_
    assert 'id="q-ship"' not in page and 'id="q-gate"' not in page  # nothing to type for the ship
    r = c.post("/escala/dispatch", data={"csrf_token": token, "date": DAY, "call": str(aurora), "period": "07-13",
                                         "operator": "Op A", "post": "portalo", "function": "vigia", "workers": "1"})
    assert r.status_code == 200 and "1 escalado(s) e publicado(s)" in r.text
    with reg.connect() as conn:
        row = conn.execute(select(escala).where(escala.c.status == "active")).one()
    assert (row.ship, row.ship_name, row.gate_id, row.voyage, row.berth) == (
        "9300001", "MSC Aurora", "g-a", "long_haul", "anchored")


def test_no_ship_in_port_says_where_to_add_one(app, reg):
    c, _ = logged_in(app, "office")
    page = c.get("/escala", params={"date": DAY}).text
    assert "Nenhum navio no porto nesta data" in page and '<a href="/ships">Navios</a>' in page


@pytest.mark.parametrize("call, says", [
    ("", "escolha o navio no porto"),
    ("abc", "nenhuma escala de navio &#39;abc&#39;"),
    ("999999", "nenhuma escala de navio 999999"),
    ("99999999999999999999", "nenhuma escala de navio"),
    ("departed", "o navio 9300009 não está no porto em 02/12/2026"),
    ("no-gate", "a escala do navio 9300007 não indica portaló"),
])
def test_a_refused_ship_choice_keeps_the_typed_requisition_with_the_error_beside_the_select(app, reg, call, says):
    ids = {"departed": _call(reg, "9300009", "Gone", "g-z", arrival=ARRIVED - dt.timedelta(days=5),
                             departure=ARRIVED - dt.timedelta(days=3)),
           "no-gate": _call(reg, "9300007", "Gateless", None)}
    c, token = logged_in(app, "office")
    typed = {"period": "13-19", "operator": "Operadora Sul", "post": "proa", "function": "vigia", "workers": "3"}
    r = c.post("/escala/dispatch", data={"csrf_token": token, "date": DAY, "call": str(ids.get(call, call))} | typed)
    assert r.status_code == 400
    error = r.text.split('id="q-call-error"')[1].split("</span>")[0]
    assert says in error, error
    assert 'aria-describedby="q-call-error"' in r.text
    form = r.text.split('id="req-form"')[1].split("</form>")[0]
    for name, value in typed.items():
        assert f'name="{name}"' in form and f'value="{value}"' in form, name
    assert _n(reg, escala) == 0 and _n(reg, downlink_changes, downlink_changes.c.kind == "escala") == 0


def _one_entry(app, reg):
    c, token = logged_in(app, "office")
    _dispatch(c, token, f"{DAY},07-13,Op A,9300001,MSC Aurora,long_haul,berthed,g-a,portalo,vigia,1\n")
    with reg.connect() as conn:
        entry = conn.execute(select(escala.c.id, escala.c.registration).where(escala.c.status == "active")).one()
    return c, token, entry


def _menu(page: str, entry_id: int) -> str:
    return page.split(f'data-entry="{entry_id}"')[1].split("</tr>")[0]


def test_a_refusal_without_a_reason_keeps_the_menu_open_with_the_typed_proof_and_the_error(app, reg):
    c, token, entry = _one_entry(app, reg)
    changes = _n(reg, downlink_changes)
    r = c.post(f"/escala/entry/{entry.id}/refuse", data={"csrf_token": token, "date": DAY, "reason": "  ",
                                                         "health_proof": "ASO 12/2026"})
    assert r.status_code == 400
    menu = _menu(r.text, entry.id)
    assert '<details class="row-menu" open>' in menu
    assert f'id="rf-{entry.id}-error" data-field="reason">informe o motivo</span>' in menu
    assert f'id="hp-{entry.id}" name="health_proof" value="ASO 12/2026"' in menu
    assert _n(reg, refusals) == 0 and _n(reg, penalties) == 0 and _n(reg, downlink_changes) == changes
    assert _n(reg, escala, escala.c.status == "active") == 1


def test_a_substitution_by_a_worker_not_eligible_is_refused_beside_the_registration(app, reg):
    c, token, entry = _one_entry(app, reg)
    changes = _n(reg, downlink_changes)
    # V040's health exam is of 2023 (older than 24 months: G3)
    r = c.post(f"/escala/entry/{entry.id}/substitute", data={"csrf_token": token, "date": DAY,
                                                              "reason": "doente", "registration": "V040"})
    assert r.status_code == 400
    menu = _menu(r.text, entry.id)
    assert '<details class="row-menu" open>' in menu
    error = menu.split(f'id="sg-{entry.id}-error" data-field="registration">')[1].split("</span>")[0]
    assert error.startswith("V040 não está apto"), error
    assert f'id="sr-{entry.id}" name="reason" value="doente"' in menu
    # the refusal's form beside it is empty: the typed values belong to the substitution
    assert f'id="rf-{entry.id}" name="reason" value=""' in menu
    assert _n(reg, escala, escala.c.status == "active") == 1 and _n(reg, downlink_changes) == changes


def test_a_change_to_an_entry_already_removed_says_so_in_its_menu(app, reg):
    c, token, entry = _one_entry(app, reg)
    assert c.post(f"/escala/entry/{entry.id}/substitute",
                  data={"csrf_token": token, "date": DAY, "reason": "doente"}).status_code == 303
    page = c.get("/escala", params={"date": DAY}).text
    assert f'data-entry="{entry.id}"' not in page  # the removed entry is no longer listed
    r = c.post(f"/escala/entry/{entry.id}/refuse", data={"csrf_token": token, "date": DAY, "reason": "x"})
    assert r.status_code == 400
    assert f"a entrada de escala {entry.id} já foi removida" in r.text
    assert _n(reg, refusals) == 0


# -- a past escala and an unknown function (issue 34): the app's clock decides, not the machine's --

def _counts(engine) -> tuple[int, ...]:
    from central.registry.schema import audit_log
    from central.rotation.schema import requisitions

    return tuple(_n(engine, t) for t in (escala, requisitions, refusals, penalties, downlink_changes, audit_log))


@pytest.mark.parametrize("action, typed, kept", [
    ("refuse", {"reason": "não veio", "health_proof": "ASO 5"}, ("rf", "hp")),
    ("substitute", {"reason": "atrasou", "registration": "V004"}, ("sr", "sg")),
])
def test_a_change_after_the_period_ended_is_refused_beside_the_row_which_offers_no_change_any_more(
        app, reg, clock, action, typed, kept):
    """A change sent from a page opened before the period ended: refused, the reason beside the
    row (and at the top), and the row offers no menu any more (nothing can be changed there)."""
    c, token, entry = _one_entry(app, reg)
    before = _counts(reg)
    clock.at = dt.datetime(2026, 12, 2, 16, 0, tzinfo=dt.UTC)  # 13:00 in the port: 07-13 has just ended
    r = c.post(f"/escala/entry/{entry.id}/{action}", data={"csrf_token": token, "date": DAY} | typed)
    assert r.status_code == 400
    menu = _menu(r.text, entry.id)
    assert "<details" not in menu and "<form" not in menu and "Período encerrado: sem alterações" in menu
    said = (f"a entrada de escala {entry.id} (02/12/2026 07-13) terminou em 02/12/2026 13:00 (hora do porto): "
            "a escala de um período encerrado não é alterada")
    assert f'id="entry-{entry.id}-error" data-field="entry">{said}</p>' in menu, menu
    assert f'id="row-error">{said}</p>' in r.text
    assert _counts(reg) == before  # no refusal, infraction, change row or audit row
    clock.at -= dt.timedelta(seconds=1)  # a second before the end: a late change, accepted
    r = c.post(f"/escala/entry/{entry.id}/{action}", data={"csrf_token": token, "date": DAY} | typed)
    assert r.status_code == 303, r.text[-1500:]
    assert _n(reg, escala, escala.c.id == entry.id, escala.c.status == "removed") == 1


def test_a_requisition_for_an_ended_period_keeps_the_form_with_the_error_beside_the_period(app, reg, clock):
    aurora = _call(reg, "9300001", "MSC Aurora", "g-a")
    c, token = logged_in(app, "office")
    before = _counts(reg)
    clock.at = dt.datetime(2026, 12, 2, 16, 0, tzinfo=dt.UTC)
    typed = {"period": "07-13", "operator": "Operadora Sul", "post": "proa", "function": "vigia", "workers": "2"}
    r = c.post("/escala/dispatch", data={"csrf_token": token, "date": DAY, "call": str(aurora)} | typed)
    assert r.status_code == 400
    error = r.text.split('id="q-period-error" data-field="period">')[1].split("</span>")[0]
    assert error == ("o período 07-13 de 02/12/2026 terminou em 02/12/2026 13:00 (hora do porto): "
                     "não se escala para um período encerrado")
    form = r.text.split('id="req-form"')[1].split("</form>")[0]
    assert 'aria-describedby="q-period-error"' in form
    for name, value in typed.items():
        assert f'name="{name}"' in form and f'value="{value}"' in form.split(f'name="{name}"')[1].split(">")[0]
    assert _counts(reg) == before
    # 13-19 is under way: the same form for it is dispatched
    r = c.post("/escala/dispatch", data={"csrf_token": token, "date": DAY, "call": str(aurora)} | typed
               | {"period": "13-19"})
    assert r.status_code == 200 and "2 escalado(s) e publicado(s)" in r.text


def test_a_requisition_with_an_unknown_function_keeps_the_form_with_the_error_beside_the_function(app, reg):
    aurora = _call(reg, "9300001", "MSC Aurora", "g-a")
    c, token = logged_in(app, "office")
    before = _counts(reg)
    typed = {"period": "13-19", "operator": "Operadora Sul", "post": "proa", "function": "Vigia_Xefe", "workers": "2"}
    r = c.post("/escala/dispatch", data={"csrf_token": token, "date": DAY, "call": str(aurora)} | typed)
    assert r.status_code == 400
    error = r.text.split('id="q-function-error" data-field="function">')[1].split("</span>")[0]
    assert error.startswith("a função &#39;vigia_xefe&#39; é desconhecida do escritório (nenhuma categoria a "
                            "exerce): as funções são ajudante_feitor, "), error
    form = r.text.split('id="req-form"')[1].split("</form>")[0]
    assert 'aria-describedby="q-function-error"' in form and 'value="Vigia_Xefe"' in form
    assert 'value="Operadora Sul"' in form and 'value="13-19"' in form
    assert _counts(reg) == before
    # English: the service's own words
    c.post("/lang", data={"csrf_token": token, "lang": "en", "next": "/escala"})
    r = c.post("/escala/dispatch", data={"csrf_token": token, "date": DAY, "call": str(aurora)} | typed)
    error = r.text.split('id="q-function-error" data-field="function">')[1].split("</span>")[0]
    assert error.startswith("function &#39;vigia_xefe&#39; is unknown to the office (no category fills it"), error


def test_a_requisitions_file_with_an_unknown_function_names_the_row_and_dispatches_nobody(app, reg):
    c, token = logged_in(app, "office")
    before = _counts(reg)
    rows = (f"{DAY},07-13,Op A,9300001,MSC Aurora,long_haul,berthed,g-a,portalo,vigia,1\n"
            f"{DAY},07-13,Op A,9300001,MSC Aurora,long_haul,berthed,g-a,proa,guindasteiro,2\n")
    r = c.post("/escala/dispatch", data={"csrf_token": token, "date": DAY},
               files={"requisitions": ("r.csv", (HEADER + rows).encode())})
    assert r.status_code == 400
    errors = r.text.split('id="escala-errors"')[1].split("</div>")[0]
    assert "r.csv:3: a função &#39;guindasteiro&#39; é desconhecida do escritório (nenhuma categoria" in errors, errors
    assert _counts(reg) == before


def _kept(form: str, name: str, value: str) -> bool:
    """The form's field ``name`` shows ``value`` as typed."""
    return f'value="{value}"' in form.split(f'name="{name}"')[1].split(">")[0]


def test_a_requisition_with_several_bad_fields_keeps_the_form_with_each_error_beside_its_field(app, reg):
    aurora = _call(reg, "9300001", "MSC Aurora", "g-a")
    c, token = logged_in(app, "office")
    before = _counts(reg)
    typed = {"date": "02/12/2026", "period": "7-13", "operator": " ", "post": "proa", "function": "vigia",
             "workers": "0", "call": str(aurora)}
    r = c.post("/escala/dispatch", data={"csrf_token": token} | typed)
    assert r.status_code == 400 and 'id="escala-errors"' not in r.text
    form = r.text.split('id="req-form"')[1].split("</form>")[0]
    errors = dict(re.findall(r'<span class="field-error" id="q-\w+-error" data-field="(\w+)">([^<]*)</span>', form))
    assert errors == {"period": "período &#39;7-13&#39; não é HH-HH (ex.: 19-01)",
                      "operator": "operador é um campo obrigatório",
                      "workers": "o número de trabalhadores deve estar entre 1 e 200, não 0"}, errors
    for name in errors:
        assert f'aria-invalid="true" aria-describedby="q-{name}-error"' in form.split(f'name="{name}"')[1].split(">")[0]
    for name in ("date", "period", "post", "function", "workers"):
        assert _kept(form, name, typed[name]), name
    assert f'<option value="{aurora}" selected>' in form
    assert _counts(reg) == before
    # dd/mm/aaaa is the form's date: the same requisition, right, is dispatched for 02/12/2026
    r = c.post("/escala/dispatch", data={"csrf_token": token} | typed
               | {"period": "13-19", "operator": "Operadora Sul", "workers": "2"})
    assert r.status_code == 200 and "2 escalado(s) e publicado(s)" in r.text
    assert _n(reg, escala, escala.c.date == dt.date(2026, 12, 2)) == 2


@pytest.mark.parametrize("lang, says", [
    ("pt", "a data &#39;2026-02-30&#39; não é uma data válida"),
    ("en", "date &#39;2026-02-30&#39; is not a valid date"),
])
def test_a_requisition_for_a_date_that_does_not_exist_keeps_the_form_with_the_error_beside_the_date(
        app, reg, lang, says):
    aurora = _call(reg, "9300001", "MSC Aurora", "g-a")
    c, token = logged_in(app, "office")
    if lang == "en":
        c.post("/lang", data={"csrf_token": token, "lang": "en", "next": "/escala"})
    before = _counts(reg)
    typed = {"date": "2026-02-30", "period": "13-19", "operator": "Operadora Sul", "post": "proa",
             "function": "vigia", "workers": "2", "call": str(aurora)}
    r = c.post("/escala/dispatch", data={"csrf_token": token} | typed)
    assert r.status_code == 400 and "YYYY-MM-DD" not in r.text and "AAAA-MM-DD" not in r.text
    form = r.text.split('id="req-form"')[1].split("</form>")[0]
    error = form.split('id="q-date-error" data-field="date">')[1].split("</span>")[0]
    assert error == says
    assert 'aria-invalid="true" aria-describedby="q-date-error"' in form
    for name in ("date", "period", "operator", "post", "function", "workers"):
        assert _kept(form, name, typed[name]), name
    assert _counts(reg) == before
