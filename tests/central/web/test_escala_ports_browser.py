"""A one-port clerk's escala on an office of two ports (issue 37 item 4) in a real browser
(Playwright driving Debian's chromium) against the real app under uvicorn over a real SQLite ledger:
Paranaguá's clerk sees only his port's ship on the requisition form, dispatches it, and the rotation
fills it from Paranaguá's workers (not santos's, ahead of them in rotation numbers); santos's escala
of the same day is not on his page, which has no serious accessibility violation (axe)."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy.orm import Session

from central.calls.service import ShipCall, save_call
from central.registry.worker_ports import set_port
from central.rotation import service
from central.rotation.ports import RotationPorts
from central.web.users import add_user
from testkit.axe import axe_violations, describe
from testkit.browser import launch_chromium
from tests.central.registry.conftest import requisition
from tests.central.web.live import PASSWORD, LiveOffice

SERVED = ("santos", "paranagua")
PARANAGUA_WORKERS = ("V005", "V006", "V007")  # santos's V001.. come first in the rotation numbers
TOMORROW = (dt.datetime.now(dt.UTC) + dt.timedelta(days=1)).date()


@pytest.fixture(scope="module")
def office(tmp_path_factory):
    o = LiveOffice(tmp_path_factory.mktemp("escalaports"))
    o.app.state.web.ports = SERVED  # central.toml ports, as office serve sets them
    o.app.state.web.gate_registry = {"pgua-g1": "paranagua", "g-a": "santos"}  # add-gate --port ...
    now = dt.datetime.now(dt.UTC)
    with Session(o.engine) as s, s.begin():
        add_user(s, "escritorio-paranagua", role="office", password=PASSWORD, name="Escritório Paranaguá",
                 actor="test", ports="paranagua")
        for reg in PARANAGUA_WORKERS:
            set_port(s, reg, "paranagua", actor="test", now=now, served=SERVED)
        arrived = now - dt.timedelta(days=1)
        save_call(s, ShipCall("9300001", "Santos Star", "long_haul", "berthed", "g-a", arrived, None), actor="test")
        save_call(s, ShipCall("9500003", "Rainha de Paranaguá", "long_haul", "berthed", "pgua-g1", arrived, None),
                  actor="test")
        # santos's escala of the same day, dispatched by santos's office: not his to see
        service.dispatch_day(s, TOMORROW, [requisition("S1", day=TOMORROW, ship="9300001", gate_id="g-a", workers=2)],
                             actor="test", now=now, ports=RotationPorts(SERVED, {"g-a": "santos"}))
    o.start()
    try:
        yield o
    finally:
        o.stop()


def test_a_paranagua_clerk_dispatches_his_ports_ship_from_his_ports_workers(office):
    with launch_chromium() as b:
        context = b.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)  # axe is injected inline
        page = context.new_page()
        page.set_default_timeout(20_000)
        page.goto(office.url + "/login")
        page.get_by_label("Usuário").fill("escritorio-paranagua")
        page.get_by_label("Senha").fill(PASSWORD)
        page.get_by_role("button", name="Entrar").click()
        page.wait_for_url(office.url + "/")
        response = page.goto(office.url + f"/escala?date={TOMORROW.isoformat()}")
        assert response is not None and response.status == 200
        assert page.locator("#escala tr[data-entry]").count() == 0  # santos's V001, V002: not his
        form = page.locator("#req-form")
        ship = form.get_by_label("Navio no porto")
        options = ship.locator("option").all_inner_texts()
        assert any("9500003" in o for o in options) and not any("9300001" in o for o in options), options
        ship.select_option(label=next(o for o in options if "9500003" in o))
        form.get_by_label("Período").fill("07-13")
        form.get_by_label("Operador").fill("Operadora Paranaguá")
        form.get_by_label("Trabalhadores").fill("2")
        form.get_by_role("button", name="Despachar esta requisição e publicar").click()
        result = page.locator("#dispatch-result")
        result.wait_for()
        assert "2 escalado(s) e publicado(s)" in result.inner_text()
        taken = result.locator('[data-ship="9500003"] a').all_inner_texts()
        assert taken == ["V005", "V006"]  # paranaguá's first two in rotation order
        rows = page.locator("#escala tr[data-entry]")
        assert sorted(rows.evaluate_all("rs => rs.map(r => r.dataset.registration)")) == ["V005", "V006"]
        main = page.locator("main").inner_text()
        assert "Santos Star" not in main and "9300001" not in main and "g-a" not in main
        found = axe_violations(page, impacts=("serious", "critical"))
        assert not found, describe(found)
        context.close()
