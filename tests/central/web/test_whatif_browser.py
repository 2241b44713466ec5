"""The "what if" page in a real browser over the demo day's ledger (``portgate demo``): the gate
rulebook with ``card_and_badge_required = false`` shows the G4 decision at g-aurora changed and
nothing else; the pay rulebook ``example-cct-2026`` shows V017's new total beside R$ 696,60; the
counts of statements and events are the same after both."""

from __future__ import annotations

import datetime as dt
import threading
import time
from zoneinfo import ZoneInfo

import pytest
import uvicorn
from sqlalchemy import func, select

from app.demo.mosquitto import free_port
from app.demo.web import DEMO_PASSWORD, OFFICE_USER
from app.whatif import web_gate_what_if
from central.config import load_central_config
from central.db import make_engine
from central.ledger.schema import events
from central.ledger.tables import statements
from central.web.app import create_app
from portgate.timeutil import as_utc
from testkit.browser import launch_chromium

DAY = "2026-03-15"


@pytest.fixture(scope="module")
def demo_office(demo_day):
    """The session's demo day (tests/conftest.py): what-if stores nothing, the counts show it."""
    run_dir = demo_day.run_dir
    assert "Todas as decisões como esperado" in demo_day.out, demo_day.out[-3000:]
    config = load_central_config(str(run_dir / "central.toml"))
    engine = make_engine(config.database_url)
    app = create_app(engine, config.web, b"x" * 32, background=False,
                     now=lambda: dt.datetime(2026, 3, 16, 12, 0, tzinfo=dt.UTC),
                     gate_what_if=web_gate_what_if(config.publish))
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}", engine, run_dir
    finally:
        server.should_exit = True
        thread.join(10)
        engine.dispose()


@pytest.fixture(scope="module")
def page(demo_office):
    url = demo_office[0]
    with launch_chromium() as browser:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        pg = context.new_page()
        pg.set_default_timeout(30_000)
        pg.goto(url + "/login")
        pg.get_by_label("Usuário").fill(OFFICE_USER)  # the demo's office login
        pg.get_by_label("Senha").fill(DEMO_PASSWORD)
        pg.get_by_role("button", name="Entrar").click()
        pg.wait_for_url(url + "/")
        yield pg
        context.close()


def _advanced(page) -> None:
    """Open the raw TOML mode (a <details>, closed until used)."""
    if not page.locator("#advanced").evaluate("d => d.open"):
        page.locator("#advanced > summary").click()


def _counts(engine) -> tuple[int, int]:
    with engine.connect() as c:
        return (c.execute(select(func.count()).select_from(statements)).scalar(),
                c.execute(select(func.count()).select_from(events)).scalar())


def test_without_card_and_badge_the_g4_decision_changes_and_nothing_else(demo_office, page):
    url, engine, run_dir = demo_office
    before = _counts(engine)
    book = (run_dir / "g-aurora" / "gate-rules.toml").read_text().replace(
        "card_and_badge_required = true", "card_and_badge_required = false")
    page.goto(url + "/whatif")
    _advanced(page)
    page.locator("#g-day").fill(DAY)
    page.locator("#g-gate").fill("g-aurora")
    page.locator("#g-book").fill(book)
    page.locator("#gate-form").get_by_role("button", name="Simular").click()
    page.locator("#gate-summary").wait_for()
    assert "1 de" in page.locator("#gate-summary").inner_text()
    assert "negado → liberado: 1" in page.locator("#gate-summary").inner_text()
    changed = page.locator('#gate-rows tr[data-changed]:not([data-changed=""])')
    assert changed.count() == 1
    row = changed.first
    assert row.get_attribute("data-registration") == "V008" and row.get_attribute("data-changed") == "decision"
    assert "G4" in row.locator("td.recorded").inner_text() and "negado" in row.locator("td.recorded").inner_text()
    assert row.locator("td.what-if").inner_text().startswith("liberado")
    assert page.locator("#gate-rows tbody tr").count() > 1  # every read of the gate is listed
    with engine.connect() as c:  # the first read's time in the port's time, as the watchman saw it
        first = c.execute(select(func.min(events.c.occurred_at)).where(
            events.c.gate_id == "g-aurora", events.c.type == "tap")).scalar()
    local = as_utc(first).astimezone(ZoneInfo("America/Sao_Paulo")).strftime("%H:%M:%S")
    assert page.locator("#gate-rows tbody tr").first.locator("td").first.inner_text() == local
    assert _counts(engine) == before


def test_the_recorded_gate_rulebook_changes_nothing(demo_office, page):
    url, engine, run_dir = demo_office
    page.goto(url + "/whatif")
    _advanced(page)
    page.locator("#g-day").fill(DAY)
    page.locator("#g-gate").fill("g-aurora")
    page.locator("#g-book").fill((run_dir / "g-aurora" / "gate-rules.toml").read_text())
    page.locator("#gate-form").get_by_role("button", name="Simular").click()
    page.locator("#gate-summary").wait_for()
    assert page.locator("#gate-summary").inner_text().startswith("Nenhuma decisão muda (")
    assert page.locator("#gate-rows tr.changed").count() == 0


def test_the_rulebook_in_force_is_loaded_and_an_untouched_what_if_changes_nothing(demo_office, page):
    """Issue 34 item 11: the gate journals the rulebook it decides by (``rulebook`` event); the page
    loads the one in force at g-aurora on the day (the demo's card + badge rulebook, not the
    shipped default) and, run untouched, changes 0 decisions; the pay what-if starts from the
    port's own pay rulebook and, untouched, changes 0 statements."""
    url, engine, run_dir = demo_office
    page.goto(url + "/whatif")
    page.locator("#f-day").fill(DAY)
    page.locator("#f-gate").fill("g-aurora")
    page.get_by_role("button", name="Carregar o regulamento em vigor").click()
    page.locator("#in-force").wait_for()
    assert page.locator("#in-force").get_attribute("data-found") == "yes"
    _advanced(page)
    assert page.locator("#g-book").input_value() == (run_dir / "g-aurora" / "gate-rules.toml").read_text()
    assert page.locator("#g-gate").input_value() == "g-aurora" and page.locator("#g-day").input_value() == DAY
    page.locator("#gate-form").get_by_role("button", name="Simular").click()
    page.locator("#gate-summary").wait_for()
    assert page.locator("#gate-summary").inner_text().startswith("Nenhuma decisão muda (")
    page.goto(url + "/whatif?gate=g-nowhere&day=" + DAY)
    assert page.locator("#in-force").get_attribute("data-found") == "no"
    page.goto(url + "/whatif")
    assert page.locator("#w-book").input_value() == "decreto-83611-1979"  # the port's own
    page.locator("#w-from").fill(DAY)
    page.locator("#w-to").fill(DAY)
    page.locator("#pay-form").get_by_role("button", name="Simular").click()  # untouched
    page.locator("#pay-summary").wait_for()
    assert page.locator("#pay-summary").inner_text().startswith("decreto-83611-1979: 0 de ")


def test_pay_under_the_example_cct_shows_v017s_new_total_beside_696_60(demo_office, page):
    url, engine, _ = demo_office
    before = _counts(engine)
    page.goto(url + "/whatif")
    page.locator("#w-from").fill(DAY)
    page.locator("#w-to").fill(DAY)
    page.locator("#w-book").select_option("example-cct-2026")
    page.locator("#pay-form").get_by_role("button", name="Simular").click()
    page.locator("#pay-summary").wait_for()
    row = page.locator('#pay-workers tr[data-registration="V017"]')
    assert row.locator("td.recorded").inner_text() == "R$ 696,60"
    new = row.locator("td.what-if").inner_text()
    assert new.startswith("R$ ") and new != "R$ 696,60"
    total = page.locator('#pay-lines tr[data-registration="V017"][data-rule="TOTAL"]')
    assert total.locator("td.recorded").inner_text() == "R$ 696,60" and total.locator("td.what-if").inner_text() == new
    assert "nada gravado" in page.locator("#pay-summary").inner_text()
    assert _counts(engine) == before


def test_a_gate_rulebook_that_is_not_toml_is_one_message_on_the_page(demo_office, page):
    url, engine, _ = demo_office
    page.goto(url + "/whatif")
    _advanced(page)
    page.locator("#g-day").fill(DAY)
    page.locator("#g-book").fill("[[version]\nnot toml")
    page.locator("#gate-form").get_by_role("button", name="Simular").click()
    assert "TOML" in page.locator("#gate-error").inner_text()


def test_one_parameter_of_the_rulebook_in_force_changed_in_the_form(demo_office, page):
    """The parameter form (issue 34): g-aurora's rulebook in force on the day (card + badge) offers
    its parameters; a value that is not one is refused beside the field and kept; the value in
    force typed again says "nothing changed"; card + badge switched off shows V008's G4 denial
    admitted and nothing else, and stores nothing."""
    url, engine, _ = demo_office
    before = _counts(engine)
    page.goto(url + f"/whatif?gate=g-aurora&day={DAY}")
    form = page.locator("#param-form")
    choice = form.get_by_label("Parâmetro")
    label = next(o for o in choice.locator("option").all_inner_texts() if "card_and_badge_required" in o)
    assert label.startswith("G4 · card_and_badge_required = true")
    assert not page.locator("#advanced").evaluate("d => d.open")  # the raw TOML waits behind its toggle

    choice.select_option(label=label)
    form.get_by_label("Novo valor").fill("talvez")
    form.get_by_role("button", name="Simular").click()
    error = page.locator("#p-value-error")
    error.wait_for()
    assert error.inner_text() == "'talvez' não é sim nem não"
    assert page.locator("#p-value").input_value() == "talvez"
    assert page.locator("#p-param").input_value() == "g4.card_and_badge_required"
    assert page.locator("#p-value").get_attribute("aria-invalid") == "true"

    page.locator("#p-value").fill("sim")  # what is in force
    page.locator("#param-form").get_by_role("button", name="Simular").click()
    page.locator("#param-nothing").wait_for()
    assert page.locator("#param-nothing").inner_text().startswith("Nada mudou")
    assert page.locator("#gate-summary").count() == 0

    page.locator("#p-value").fill("não")
    page.locator("#param-form").get_by_role("button", name="Simular").click()
    page.locator("#gate-summary").wait_for()
    assert page.locator("#param-changed").inner_text() == "G4 · card_and_badge_required: true → não"
    summary = page.locator("#gate-summary").inner_text()
    assert summary.startswith("1 de") and "negado → liberado: 1" in summary, summary
    changed = page.locator('#gate-rows tr[data-changed="decision"]')
    assert changed.count() == 1 and changed.first.get_attribute("data-registration") == "V008"
    assert _counts(engine) == before
