"""A day's dispatch run from the office's escala screen in a real browser, published to real gates
(tests/central/web/port.py: broker, ``central run`` publishing from the registry, two ``edge run`` gates):
the new entry reaches gate g-b's local escala, a worker passed over shows why (R2), and a late
substitution reaches the gate too, whose worker is then admitted at the gangway."""

from __future__ import annotations

import contextlib
import datetime as dt
import sqlite3

import pytest
from sqlalchemy.orm import Session

from central.calls.service import ShipCall, save_call
from central.db import make_engine
from central.web.users import add_user
from testkit.browser import launch_chromium
from tests.central.web.port import PASSWORD, Port, current_period, wait_until


@pytest.fixture(scope="module")
def port(tmp_path_factory):
    p = Port(tmp_path_factory.mktemp("escala-port"))
    try:
        p.start()
        engine = make_engine(p.url_db)
        with Session(engine) as s, s.begin():
            add_user(s, "escritorio", role="office", password=PASSWORD, name="Escritório", actor="test")
            # Nordic Star in port since yesterday at g-b: the requisition form's ship
            arrived = dt.datetime.now(dt.UTC) - dt.timedelta(days=1)
            save_call(s, ShipCall("9300002", "Nordic Star", "long_haul", "berthed", "g-b", arrived, None), actor="test")
        engine.dispose()
        yield p
    finally:
        p.stop()


def _gate_escala(gate, day: dt.date) -> set[str]:
    path = gate.dir / "state" / "store.db"
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        return {r[0] for r in db.execute("SELECT registration FROM escala WHERE date = ? AND gate_id = ?",
                                          (day.isoformat(), gate.gate_id))}


def test_running_a_days_dispatch_and_publishing_it_to_the_gates(port):
    day, period = current_period(dt.datetime.now(dt.UTC))
    gate = port.gates["g-b"]
    assert _gate_escala(gate, day) == {"V003"}
    with launch_chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(20_000)
        page.goto(port.url + "/login")
        page.get_by_label("Usuário").fill("escritorio")
        page.get_by_label("Senha").fill(PASSWORD)
        page.get_by_role("button", name="Entrar").click()
        page.wait_for_url(port.url + "/")
        page.goto(port.url + f"/escala?date={day.isoformat()}")
        form = page.locator("#req-form")
        ship = form.get_by_label("Navio no porto")
        ship.select_option(label=next(o for o in ship.locator("option").all_inner_texts() if "9300002" in o))
        form.get_by_label("Período").fill(period)
        form.get_by_label("Operador").fill("Op B")
        form.get_by_label("Posto").fill("proa")
        form.get_by_role("button", name="Despachar esta requisição e publicar").click()
        result = page.locator("#dispatch-result")
        result.wait_for()
        assert "1 escalado(s) e publicado(s)" in result.inner_text()
        group = result.locator('[data-ship="9300002"]')
        assert "escalados 1" in group.inner_text()
        # V001 (first in the rotation) is on the gangway of g-a this period: passed over (R2)
        assert "V001: R2 escalação sobreposta" in group.locator(".skips").inner_text()
        taken = group.locator("a").first.inner_text()
        wait_until(lambda: _gate_escala(gate, day) == {"V003", taken}, 20, what="the dispatch at gate g-b")

        # a late substitution: V009 takes the place, and the gate admits V009 at once
        page.goto(port.url + f"/escala?date={day.isoformat()}")
        row = page.locator(f'#escala tr[data-registration="{taken}"]')
        row.locator("summary").click()  # the row's menu
        row.locator("form.substitute-form").get_by_label("Motivo").fill("substituição tardia")
        row.locator("form.substitute-form").get_by_label("Matrícula").fill("V009")
        row.get_by_role("button", name="Substituir").click()
        page.locator("#escala-done").wait_for()
        assert page.locator('#escala tr[data-registration="V009"]').count() == 1
        wait_until(lambda: _gate_escala(gate, day) == {"V003", "V009"}, 20, what="the substitution at gate g-b")
    decision = gate.tap("V009")
    assert decision["outcome"] == "admit", decision
