"""The audit log of a one-port clerk (issue 37 item 4; ``audit_log.port``, 0031) in a real chromium
against the real app under uvicorn over a real SQLite ledger of two ports (santos home, rio): rio's
clerk finds the entries about rio's worker (his move to rio and what followed), none about santos's
workers (the demo import, written while V008 was the home port's) nor an entry of every port (an
office account); his search for a santos worker shows the page of a subject with no entry; no serious axe
violation at 1280 and 390 px."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy.orm import Session

from central.registry.changes import audit
from central.registry.worker_ports import set_port
from central.web.users import add_user
from testkit.axe import axe_violations, describe
from tests.central.web.live import PASSWORD, LiveOffice

DAYS = "from=2025-01-01&to=2030-12-31"


@pytest.fixture(scope="module")
def office(tmp_path_factory):
    o = LiveOffice(tmp_path_factory.mktemp("auditports"))
    o.app.state.web.ports = ("santos", "rio")  # central.toml ports = ["santos", "rio"], as office serve sets it
    now = dt.datetime.now(dt.UTC)
    with Session(o.engine) as s, s.begin():
        add_user(s, "escritorio-rio", role="office", password=PASSWORD, name="Escritório Rio", actor="test",
                 ports="rio")
        set_port(s, "V008", "rio", actor="web:escritorio", now=now, served=("santos", "rio"))
    with Session(o.engine) as s, s.begin():
        for reg in ("V008", "V009"):  # an edit of each: rio's and santos's worker
            audit(s, actor="web:escritorio", action="worker.edit", subject=reg,
                  detail={"changed": {"name": ["a", "b"]}}, now=now)
    o.start()
    try:
        yield o
    finally:
        o.stop()


@pytest.mark.parametrize("width", [1280, 390])
def test_a_rio_clerk_reads_rios_audit_entries_only(office, browser, width, tmp_path):
    context = browser.new_context(viewport={"width": width, "height": 900}, bypass_csp=True)
    try:
        pg = context.new_page()
        pg.set_default_timeout(20_000)
        pg.goto(office.url + "/login")
        pg.get_by_label("Usuário").fill("escritorio-rio")
        pg.get_by_label("Senha").fill(PASSWORD)
        pg.get_by_role("button", name="Entrar").click()
        pg.wait_for_url(office.url + "/")
        assert pg.goto(f"{office.url}/audit?{DAYS}").status == 200
        subjects = {pg.locator("#audit tbody tr td[data-subject]").nth(i).get_attribute("data-subject")
                    for i in range(pg.locator("#audit tbody tr").count())}
        assert subjects == {"V008"}  # his worker's move and edit; not V009, the import, the accounts
        assert "só para quem vê todos os portos" in pg.locator("#audit-port-note").inner_text()
        actions = {pg.locator("#audit tbody tr").nth(i).get_attribute("data-action") for i in range(2)}
        assert actions == {"worker.port", "worker.edit"}
        assert axe_violations(pg, impacts=("serious", "critical")) == [], describe(axe_violations(pg))
        pg.screenshot(path=str(tmp_path / f"audit-rio-{width}.png"), full_page=True)
        pg.get_by_label("Sobre").fill("V009")
        with pg.expect_navigation():  # a GET form: read the rows of the new page
            pg.get_by_role("button", name="Filtrar").click()
        assert pg.locator("#audit").count() == 0 and pg.locator("#no-audit").is_visible()
        assert axe_violations(pg, impacts=("serious", "critical")) == []
    finally:
        context.close()
