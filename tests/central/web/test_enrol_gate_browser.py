"""Enrol mode on a chosen gate (issue 34 item 3), end to end in real browsers: real mosquitto,
``portgate central run`` (registry source), ``portgate office serve`` (tests/central/web/port.py)
and a third gate ``g-c`` (``portgate edge run``, serial readers on pseudo-terminals) with its
screen (``portgate edge display``, 800x480). The clerk starts enrol mode on the worker's page; the
screen says "CARTÃO EM CADASTRO"; the next unknown card read at g-c is refused (nobody admitted
with it) and offered on the worker's page without a reload; the clerk binds it; the gate knows it
then. Failure paths: a known card read meanwhile (decided as always, not offered), cancel, the
timeout ([web] enrol_timeout_s), an offline gate. Every step is in the audit log."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from central.audit import audit_log
from central.db import make_engine
from central.ingest.keys import add_gate
from central.ledger.schema import gate_status
from central.web.users import add_user
from testkit.axe import axe_violations, describe
from testkit.display import GateWithScreen, main_shown, record_main
from tests.central.web.port import UIDS, Port, wait_until
from tests.central.web.sizes import SIZES, looked_at

CLERK, CLERK_PASSWORD = "escritorio", "office clerk password"
NEW_CARD = "0C0C0C0C01"  # a blank card: on nobody's roster
TIMEOUT_S = 12  # [web] enrol_timeout_s of this port


@pytest.fixture(scope="module")
def port(tmp_path_factory):
    root = tmp_path_factory.mktemp("port")
    p = Port(root, web_extra=f"enrol_timeout_s = {TIMEOUT_S}\n")
    gate = None
    try:
        p.start()
        engine = make_engine(p.url_db)
        with Session(engine) as s, s.begin():
            add_user(s, CLERK, role="office", password=CLERK_PASSWORD, name="Escritório", actor="test")
        gate = GateWithScreen(root / "g-c", gate_id="g-c", ship="9300001", card_and_badge=False, idle_after_s=3,
                              extra=f'\n[mqtt]\nhost = "127.0.0.1"\nport = {p.broker.port}\nclient_id = "gate-g-c"\n\n'
                                    '[sync]\nstatus_every_s = 1.0\n')
        shutil.copyfile(add_gate(root / "keys", "g-c"), gate.root / "gate.key")  # the office knows its key
        gate.start_gate()
        gate.start_display()
        p.gc = gate
        p.engine = engine
        wait_until(lambda: _online(engine, "g-c"), 120, what="g-c online at the office")
        yield p
    finally:
        if gate is not None:
            gate.stop()
        p.stop()


def _online(engine, gate_id: str) -> bool:
    with engine.connect() as c:
        return c.execute(select(gate_status.c.state).where(gate_status.c.gate_id == gate_id)).scalar() == "online"


@pytest.fixture(scope="module")
def page(port, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 800}, bypass_csp=True)  # axe is injected inline
    pg = context.new_page()
    pg.set_default_timeout(20_000)
    pg.goto(port.url + "/login")
    pg.get_by_label("Usuário").fill(CLERK)
    pg.get_by_label("Senha").fill(CLERK_PASSWORD)
    pg.get_by_role("button", name="Entrar").click()
    pg.wait_for_url(port.url + "/")
    yield pg
    context.close()


@pytest.fixture(scope="module")
def screen(port, browser):
    pg = browser.new_page(viewport={"width": 800, "height": 480})
    pg.goto(port.gc.url)
    pg.wait_for_selector("#now[data-state='idle']")
    yield pg
    pg.close()


def _start(page, port, reg: str, gate_id: str = "g-c") -> None:
    page.goto(f"{port.url}/workers/{reg}")
    page.locator("#en-gate_id").select_option(gate_id)
    page.get_by_role("button", name="Iniciar o cadastro neste portaló").click()


def _audit(engine, reg: str) -> list[tuple[str, str, dict]]:
    with engine.connect() as c:
        return [(r.action, r.actor, r.detail) for r in c.execute(
            select(audit_log).where(audit_log.c.subject == reg, audit_log.c.action.like("enrol.%"))
            .order_by(audit_log.c.id))]


def _gate_card(gate, uid: str):
    with contextlib.closing(sqlite3.connect(f"file:{gate.state / 'store.db'}?mode=ro", uri=True)) as db:
        return db.execute("SELECT registration, status FROM cards WHERE uid = ?", (uid,)).fetchone()


def test_the_next_unknown_card_at_the_gate_is_offered_and_bound(port, page, screen):
    reg, old = "V008", UIDS["V008"][0]
    page.goto(f"{port.url}/workers/{reg}")  # his control card is lost: enrol the new one at the gate
    page.locator(f'#cards tr[data-uid="{old}"]').get_by_role("button", name="Comunicar perda").click()
    page.locator('#card-done[data-done="lost"]').wait_for()
    _start(page, port, reg)
    page.locator("#enrol[data-state='waiting'] #enrol-waiting").wait_for()
    assert "g-c" in page.locator("#enrol-waiting").inner_text()
    assert axe_violations(page, impacts=("serious", "critical")) == []
    screen.wait_for_selector("#now[data-state='enrol']", timeout=60_000)
    assert screen.locator("#now .words").inner_text() == "CARTÃO EM CADASTRO"
    assert screen.locator("#st-enrol").is_visible()
    assert screen.evaluate("() => document.documentElement.scrollWidth") <= 800
    assert axe_violations(screen) == [], describe(axe_violations(screen))
    record_main(screen, rule=".rules [data-rule='ENROL']", name=".person .name")  # shown 3 s (idle_after_s)
    port.gc.tap(NEW_CARD)
    tap = port.gc.wait_taps(1)[-1]
    assert (tap.payload.uid, tap.payload.decision, tap.payload.rules_failed) == (NEW_CARD, "deny", ["G1", "ENROL"])
    read = main_shown(screen, tap.seq, then_idle=False)[0]
    assert read["outcome"] == "deny", read  # nobody admitted with it
    # the rule by its words (issue 33), its code in the attribute
    assert read["rule"] == "cartão em cadastro" and read["name"] == f"Cartão novo {NEW_CARD}", read
    offered = page.locator(f"#enrol-read[data-uid='{NEW_CARD}']")
    offered.wait_for(timeout=60_000)  # htmx's poll: no reload by the clerk
    assert axe_violations(page, impacts=("serious", "critical"), context="#enrol") == []
    page.get_by_role("button", name=f"Vincular o cartão {NEW_CARD} a {reg}").click()
    page.locator('#card-done[data-done="issued"]').wait_for()
    assert page.locator(f'#cards tr[data-uid="{NEW_CARD}"]').count() == 1
    wait_until(lambda: _gate_card(port.gc, NEW_CARD) == (reg, "active"), 60, what="the new card at g-c")
    screen.wait_for_selector("#now[data-state='idle']", timeout=60_000)  # enrol mode ended with the read
    steps = _audit(port.engine, reg)
    assert [a for a, _who, _d in steps] == ["enrol.start", "enrol.read", "enrol.bound"]
    assert steps[0][1] == f"web:{CLERK}" and steps[0][2]["gate_id"] == "g-c"
    assert steps[1][1] == "gate:g-c" and steps[1][2]["uid"] == NEW_CARD
    assert steps[2][1] == f"web:{CLERK}" and steps[2][2]["uid"] == NEW_CARD


def test_a_known_card_read_during_enrol_mode_is_not_offered_and_cancel_ends_the_mode(port, page, screen):
    reg = "V009"
    seen = len(port.gc.taps())
    _start(page, port, reg)
    page.locator("#enrol-waiting").wait_for()
    screen.wait_for_selector("#now[data-state='enrol']", timeout=60_000)
    port.gc.tap(UIDS["V003"][0])  # another worker's card: decided as always at this gate
    tap = port.gc.wait_taps(seen + 1)[-1]
    assert tap.payload.registration == "V003" and "ENROL" not in tap.payload.rules_failed
    page.locator("#enrol-known").wait_for(timeout=60_000)
    assert "V003" in page.locator("#enrol-known").inner_text()
    assert page.locator("#enrol-read").count() == 0
    page.get_by_role("button", name="Cancelar o cadastro").click()
    page.locator("#enrol-ended[data-ended='cancelled']").wait_for()
    screen.wait_for_selector("#st-enrol", state="detached", timeout=60_000)  # the gate was told
    assert [a for a, _w, _d in _audit(port.engine, reg)] == ["enrol.start", "enrol.cancel"]


def test_enrol_mode_ends_at_its_timeout_with_no_card(port, page, screen):
    reg = "V009"
    _start(page, port, reg)
    page.locator("#enrol-waiting").wait_for()
    screen.wait_for_selector("#st-enrol", timeout=60_000)
    page.locator("#enrol-ended[data-ended='expired']").wait_for(timeout=(TIMEOUT_S + 60) * 1000)
    screen.wait_for_selector("#st-enrol", state="detached", timeout=60_000)
    seen = len(port.gc.taps())
    port.gc.tap("0C0C0C0C02")  # after the end: a plain unknown card
    assert port.gc.wait_taps(seen + 1)[-1].payload.rules_failed == ["G1"]
    actions = [a for a, _w, _d in _audit(port.engine, reg)]
    assert actions[-2:] == ["enrol.start", "enrol.expired"]


def test_an_offline_gate_is_refused_beside_the_gate_field(port, page):
    port.gates["g-b"].stop()
    wait_until(lambda: not _online(port.engine, "g-b"), 20, what="g-b offline at the office")
    _start(page, port, "V009", "g-b")
    error = page.locator("#en-gate_id-error")
    error.wait_for()
    assert "g-b" in error.inner_text()
    assert page.locator("#en-gate_id").get_attribute("aria-invalid") == "true"
    assert page.locator("#enrol-waiting").count() == 0
    assert _audit(port.engine, "V009")[-1][0] == "enrol.expired"  # nothing started


@pytest.mark.parametrize("size", SIZES)
def test_the_enrol_list_reads_at_every_size(port, browser, page, size, tmp_path):
    """The worker page's "enrol a card at a gate" section at the gate's 800x480 panel, a 390 px phone
    and a desktop: its gate list (each gate with its state, pt-BR), the kind and the start button
    inside the screen, no text cut, no serious axe violation; then waiting for a card at g-c. The
    clerk's session is the module's ``page``'s (its cookies: one login, the login form has its own
    tests)."""
    context = browser.new_context(viewport=SIZES[size], bypass_csp=True, locale="pt-BR",  # axe is injected
                                  storage_state=page.context.storage_state())
    try:
        pg = context.new_page()
        pg.set_default_timeout(20_000)
        pg.goto(f"{port.url}/workers/V009")
        assert pg.url == f"{port.url}/workers/V009", pg.url  # logged in: not sent to /login
        gates = pg.locator("#en-gate_id option").all_inner_texts()
        assert "g-c — conectado" in gates, gates
        box, section = pg.locator("#en-gate_id").bounding_box(), pg.locator("#enrol").bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= section["x"] + section["width"] + 1, (box, section)
        start = pg.get_by_role("button", name="Iniciar o cadastro neste portaló")
        assert start.is_visible()
        looked_at(pg, f"enrol-{size}", tmp_path)
        _start(pg, port, "V009")
        pg.locator("#enrol-waiting").wait_for()
        looked_at(pg, f"enrol-waiting-{size}", tmp_path)
        with pg.expect_navigation():
            pg.get_by_role("button", name="Cancelar o cadastro").click()
        pg.locator("#enrol-ended[data-ended='cancelled']").wait_for()
    finally:
        context.close()
