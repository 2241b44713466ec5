"""The office web application in a real browser (Playwright driving Debian's chromium) against the
real app on a real ledger filled by real gate processes through a real broker and the real ingest.

One port for the module (tests/central/web/port.py); the tests run in file order, each building on the
port's state as an inspector's hour would: log in, gates online, a tap live, the coverage alarm
raised and cleared, a borrowed card flagged, a case opened from it, defence and suspension, the
suspended worker refused at the other gate, a gate going offline.
"""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo
import time

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from central.calls.schema import coverage_alarms
from central.calls.service import ShipCall, save_call
from central.db import make_engine
from central.registry.schema import audit_log, penalties, workers
from tests.central.web.port import PASSWORD, Port, wait_until

# No time limit here: the event -> browser figure (p95 <= 2 s) is bench/office_web.py's.


@pytest.fixture(scope="module")
def port(tmp_path_factory):
    p = Port(tmp_path_factory.mktemp("port"))
    try:
        yield p.start()
    finally:
        p.stop()


@pytest.fixture(scope="module")
def page(port, browser):
    context = browser.new_context(viewport={"width": 390, "height": 844})  # a phone on the quay
    pg = context.new_page()
    pg.set_default_timeout(20_000)
    yield pg
    context.close()


@pytest.fixture(scope="module")
def engine(port):
    e = make_engine(port.url_db)
    yield e
    e.dispose()


def test_an_inspector_logs_in_and_sees_both_gates_online(port, page):
    page.goto(port.url + "/")
    assert page.url.startswith(port.url + "/login")
    page.get_by_label("Usuário").fill("fiscal")
    page.get_by_label("Senha").fill("wrong password")
    page.get_by_role("button", name="Entrar").click()
    assert page.locator("#login-error").inner_text() == "Usuário ou senha incorretos."
    page.get_by_label("Usuário").fill("fiscal")
    page.get_by_label("Senha").fill(PASSWORD)
    page.get_by_role("button", name="Entrar").click()
    page.wait_for_url(port.url + "/")
    assert "Fiscal &lt;Ana&gt;" not in page.content()  # names are text, never markup
    for gate in ("g-a", "g-b"):
        page.locator(f'[data-gate="{gate}"][data-state="online"]').wait_for()
    # clock trusted, copies fresh: the gate says so in its status once its copies came (under
    # "Detalhes técnicos": the card's plain words first; textContent reads the closed toggle too)
    page.wait_for_function("""() => (document.querySelector('[data-gate="g-a"]') || {}).textContent
                              && document.querySelector('[data-gate="g-a"]').textContent.includes('em dia')""",
                           timeout=60_000)
    card = page.locator('[data-gate="g-a"]').text_content()
    assert "conectado" in card and "confiável" in card
    assert page.locator('[data-gate="g-a"] .outbox').inner_text().strip().isdigit()


def test_a_tap_appears_live_without_reloading(port, page):
    marker = page.evaluate("() => { window.__noReload = 1; return 1 }")
    shown = port.gates["g-a"].tap("V001")
    assert shown["outcome"] == "admit", shown
    started = time.monotonic()
    page.locator('[data-ship="9300001"] .person[data-registration="V001"]').wait_for(timeout=60_000)
    elapsed = time.monotonic() - started
    assert page.evaluate("() => window.__noReload") == marker  # the same document: updated, not reloaded
    # the gate's last event is the tap, or the end of the coverage gap that this admission closed (G11)
    last = page.locator('[data-gate="g-a"] .last-event').inner_text()
    assert "leitura: liberado V001" in last or "cobertura de vigia: falta encerrada V001" in last, last
    print(f"tap shown at the gate -> on the live page in {elapsed:.2f} s")


def test_the_coverage_alarm_of_a_long_haul_ship_raises_and_clears_live(port, page, engine):
    now = dt.datetime.now(dt.UTC)
    # arrived 5 minutes ago, but not before the start of the current period (01/07/13/19 local): a
    # call that began in the previous period would rightly raise an alarm for that period too
    local = now.astimezone(ZoneInfo("America/Sao_Paulo"))
    period_start = local.replace(minute=0, second=0, microsecond=0) - dt.timedelta(hours=(local.hour - 1) % 6)
    arrival = max(now - dt.timedelta(minutes=5), period_start.astimezone(dt.UTC))
    with Session(engine) as s, s.begin():
        save_call(s, ShipCall("9300002", "Nordic Star", "long_haul", "berthed", "g-b",
                              arrival, None), actor="test")
    alarm = page.locator('.alarm[data-ship="9300002"]')
    alarm.wait_for()
    assert "SEM VIGIA DE PORTALÓ" in alarm.inner_text()
    shown = port.gates["g-b"].tap("V003")  # the gangway watchman boards
    assert shown["outcome"] == "admit", shown
    alarm.wait_for(state="detached")
    page.locator("#no-alarms").wait_for()
    with Session(engine) as s:
        row = s.execute(select(coverage_alarms).where(coverage_alarms.c.ship == "9300002")).one()
    assert row.ended_at is not None and row.ended_by_event is not None and row.raised_at <= row.ended_at
    page.goto(port.url + "/alarms")
    assert page.locator('#alarm-list tr[data-ship="9300002"][data-open="no"]').count() == 1
    page.goto(port.url + "/")


def test_a_borrowed_card_becomes_a_case_with_defence_and_a_final_suspension(port, page, engine, tmp_path):
    shown = port.gates["g-a"].tap("V008", badge_of="V009")  # V008's card with V009's badge (G4)
    assert shown["outcome"] == "deny" and "BORROWED_CARD" in shown["flags"], shown
    page.goto(port.url + "/flags?flag=BORROWED_CARD")
    row = page.locator('tr[data-flags~="BORROWED_CARD"]').first
    wait_until(lambda: (page.reload() or True) and row.count() == 1, 60, interval=0.5, what="the flag in the queue")
    assert "V008 / V009" in row.inner_text()
    row.get_by_role("link").first.click()
    page.get_by_label("Acusação").fill("Uso do cartão de controle da matrícula V008 pelo portador da chapa V009")
    page.get_by_role("button", name="Abrir processo").click()
    page.wait_for_url("**/cases/*")
    assert page.locator("#case-status").get_attribute("data-status") == "open"
    proof = tmp_path / "declaracao.txt"
    proof.write_text("Declaro que emprestei o cartão.")
    page.get_by_label("Defesa prévia").fill("O trabalhador admite o empréstimo e pede clemência.")
    page.get_by_label("Anexo").set_input_files(str(proof))
    page.get_by_role("button", name="Registrar defesa").click()
    page.locator('#case-status[data-status="defended"]').wait_for()
    assert "declaracao.txt" in page.locator("#defence").inner_text()
    assert page.locator("#case-status dd").first.inner_text() == "defesa registrada"  # pt-BR, not "defended"
    case_url = page.url
    # a second defence is kept next to the first, each with its time and who recorded it (R7)
    page.get_by_label("Defesa prévia").fill("Complemento: o portador da chapa confirma.")
    page.get_by_role("button", name="Registrar defesa").click()
    page.locator("#defence", has_text="Complemento").wait_for()
    defence = page.locator("#defence").inner_text()
    assert "pede clemência" in defence and "Complemento: o portador" in defence
    assert defence.count("web:fiscal") == 2 and defence.count(" UTC ") == 2
    # the flag is handled by its case: its page links to the case and offers no second one
    page.goto(port.url + "/flags?flag=BORROWED_CARD")
    page.locator('tr[data-flags~="BORROWED_CARD"]').first.get_by_role("link").first.click()
    assert page.locator("#flag-state").get_attribute("data-state") == "handled"
    assert page.locator("#open-case").count() == 0 and page.locator("#case-now").count() == 0
    page.locator("#flag-state a").click()
    page.wait_for_url(case_url)
    page.get_by_label("Penalidade").select_option("suspension")
    page.get_by_label("Dias").fill("10")
    page.get_by_role("button", name="Decidir").click()
    page.locator('#case-status[data-status="decided"]').wait_for()
    assert "recurso até" in page.locator("#decision").inner_text()
    with Session(engine) as s:  # not final yet: nothing on the record, the worker still active
        assert s.execute(select(workers.c.status).where(workers.c.registration == "V008")).scalar() == "active"
    page.get_by_role("button", name="Trabalhador renuncia ao recurso").click()
    page.locator('#case-status[data-status="final"]').wait_for()
    with Session(engine) as s:
        pen = s.execute(select(penalties).where(penalties.c.registration == "V008",
                                                penalties.c.kind == "suspension")).one()
        assert pen.case_id is not None and pen.ends_on - pen.starts_on == dt.timedelta(days=9)
        actions = set(s.execute(select(audit_log.c.action).where(audit_log.c.actor == "web:fiscal")).scalars())
    assert {"case.open", "case.defence", "case.decide", "case.final", "worker.suspend"} <= actions


def test_the_suspended_worker_is_refused_at_the_other_gate(port):
    gate = port.gates["g-b"]
    wait_until(lambda: gate.worker_status("V008") == "suspended", 20, what="the suspension at g-b")
    shown = gate.tap("V008")
    assert shown["outcome"] == "deny" and "G3" in shown["rules"], shown


def test_a_gate_goes_offline_on_the_live_view_when_its_process_stops(port, page):
    page.goto(port.url + "/")
    page.locator('[data-gate="g-a"][data-state="online"]').wait_for()
    port.gates["g-a"].stop()
    page.locator('[data-gate="g-a"][data-state="offline"]').wait_for()
    card = page.locator('[data-gate="g-a"]').inner_text()
    assert "desconectado" in card
    assert "(desligado normalmente)" in card or "(caiu sem avisar)" in card, card  # not "(graceful)"/"(will)"
    assert page.locator('[data-gate="g-b"][data-state="online"]').count() == 1


def test_english_is_one_switch_away(port, page):
    page.goto(port.url + "/")
    page.get_by_label("Idioma").select_option("en")
    page.get_by_role("button", name="Idioma").click()
    page.wait_for_url(port.url + "/")
    assert page.locator("h1").inner_text() == "Live port"
    assert "offline" in page.locator('[data-gate="g-a"]').inner_text()


def test_the_login_and_the_flag_filters_work_with_the_keyboard_alone_on_a_desktop(port, browser):
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    pg = context.new_page()
    pg.set_default_timeout(20_000)
    try:
        pg.goto(port.url + "/login")
        pg.wait_for_function("() => document.activeElement && document.activeElement.id === 'login'")
        pg.keyboard.type("fiscal")  # the login field has the focus (autofocus)
        pg.keyboard.press("Tab")
        pg.keyboard.type(PASSWORD)
        pg.keyboard.press("Enter")
        pg.wait_for_url(port.url + "/")
        pg.goto(port.url + "/flags")
        pg.get_by_label("Ocorrência").focus()
        pg.get_by_label("Ocorrência").select_option("BORROWED_CARD")
        pg.keyboard.press("Tab")  # the state field (new / seen / handled) follows the flag field
        assert pg.evaluate("() => document.activeElement.id") == "f-state"
        pg.keyboard.press("Tab")  # the filter button follows the last field
        focused = pg.evaluate("() => document.activeElement.textContent")
        assert focused.strip() == "Filtrar"
        pg.keyboard.press("Enter")  # the focused filter button
        pg.wait_for_url("**/flags?*flag=BORROWED_CARD*")
        assert pg.locator('tr[data-flags~="BORROWED_CARD"]').count() >= 1
    finally:
        context.close()


def test_a_1366x768_desktop_fits_the_gate_cards_and_shows_dates_in_pt_br(port, browser):
    context = browser.new_context(viewport={"width": 1366, "height": 768}, locale="pt-BR")
    pg = context.new_page()
    pg.set_default_timeout(20_000)
    try:
        pg.goto(port.url + "/login")
        pg.get_by_label("Usuário").fill("fiscal")
        pg.get_by_label("Senha").fill(PASSWORD)
        pg.get_by_role("button", name="Entrar").click()
        pg.wait_for_url(port.url + "/")
        pg.locator("[data-gate]").first.wait_for()
        overflow = pg.evaluate("""() => [...document.querySelectorAll('article.gate')].flatMap(card => {
            const box = card.getBoundingClientRect();
            return [...card.querySelectorAll('dd, h3')].filter(el => {
                const r = el.getBoundingClientRect();
                return r.right > box.right + 0.5 || el.scrollWidth > el.clientWidth + 1;
            }).map(el => card.dataset.gate + ': ' + el.textContent.trim());
        })""")
        assert overflow == [], overflow
        pg.goto(port.url + "/flags")
        assert pg.locator("#f-date").get_attribute("lang") == "pt-BR"
        assert pg.locator("html").get_attribute("lang") == "pt-BR"
    finally:
        context.close()
