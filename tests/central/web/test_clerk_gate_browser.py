"""A card reported lost on the worker's page, in a real browser, is refused at the running gates
within 2 s (G2; issue 34): real mosquitto, ``portgate central run`` publishing the registry's
changes, two ``portgate edge run`` gates and ``portgate office serve`` (tests/central/web/port.py)."""

from __future__ import annotations

import contextlib
import sqlite3
import time

import pytest
from sqlalchemy.orm import Session

from central.db import make_engine
from central.web.users import add_user
from testkit.browser import launch_chromium
from tests.central.web.port import UIDS, Port, wait_until

# No time limit here: the lost card -> blocked at every gate figure (G2's 2 s) is bench/card_block.py's.
CLERK, CLERK_PASSWORD = "escritorio", "office clerk password"


@pytest.fixture(scope="module")
def port(tmp_path_factory):
    p = Port(tmp_path_factory.mktemp("port"))
    try:
        p.start()
        engine = make_engine(p.url_db)
        with Session(engine) as s, s.begin():
            add_user(s, CLERK, role="office", password=CLERK_PASSWORD, name="Escritório", actor="test")
        engine.dispose()
        yield p
    finally:
        p.stop()


@pytest.fixture(scope="module")
def page(port):
    with launch_chromium() as browser:
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        pg = context.new_page()
        pg.set_default_timeout(20_000)
        pg.goto(port.url + "/login")
        pg.get_by_label("Usuário").fill(CLERK)
        pg.get_by_label("Senha").fill(CLERK_PASSWORD)
        pg.get_by_role("button", name="Entrar").click()
        pg.wait_for_url(port.url + "/")
        yield pg
        context.close()


def _card_status(gate, uid: str) -> str | None:
    path = gate.dir / "state" / "store.db"
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        row = db.execute("SELECT status FROM cards WHERE uid = ?", (uid,)).fetchone()
    return row[0] if row else None


def test_a_card_reported_lost_is_refused_at_the_running_gates_within_2_s(port, page):
    uid = UIDS["V003"][0]
    for gate in port.gates.values():
        assert _card_status(gate, uid) == "active"
    page.goto(port.url + "/workers/V003")
    row = page.locator(f'#cards tr[data-uid="{uid}"]')
    clicked = time.monotonic()
    row.get_by_role("button", name="Comunicar perda").click()
    page.locator('#card-done[data-done="lost"]').wait_for()
    assert page.locator(f'#cards tr[data-uid="{uid}"] [data-status="lost"]').inner_text() == "perdido"
    for gate in port.gates.values():
        wait_until(lambda g=gate: _card_status(g, uid) == "lost", 60, interval=0.02, what=f"lost at {gate.gate_id}")
    elapsed = time.monotonic() - clicked
    print(f"lost card blocked at both gates {elapsed:.2f} s after the click")
    shown = port.gates["g-b"].tap("V003")  # the control card only at g-b
    assert shown["outcome"] == "deny" and "G2" in shown["rules"], shown
