"""A one-port inspector's flag -> case path on an office of two ports (issue 37 item 4, the path of
issue 33 item 5) in a real browser (Playwright driving Debian's chromium) against the real app
under uvicorn over a real SQLite ledger: rio's inspector finds rio's flag (not santos's) in his
queue, opens a case from it in one step, finds it in his cases and opens the accused rio worker's
page; santos's flag and worker are, for him, as if they did not exist."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy.orm import Session

from central.registry.worker_ports import set_port
from central.web.users import add_user
from testkit.browser import launch_chromium
from tests.central.web.events import add_flag_event
from tests.central.web.live import PASSWORD, LiveOffice


@pytest.fixture(scope="module")
def office(tmp_path_factory):
    o = LiveOffice(tmp_path_factory.mktemp("regports"))
    o.app.state.web.ports = ("santos", "rio")  # central.toml ports = ["santos", "rio"], as office serve sets it
    with Session(o.engine) as s, s.begin():
        add_user(s, "fiscal-rio", role="inspector", password=PASSWORD, name="Fiscal Rio", actor="test", ports="rio")
        set_port(s, "V008", "rio", actor="test", now=dt.datetime.now(dt.UTC), served=("santos", "rio"))
    o.start()
    try:
        yield o
    finally:
        o.stop()


@pytest.fixture(scope="module")
def page(office):
    with launch_chromium() as b:
        context = b.new_context(viewport={"width": 1280, "height": 900})
        pg = context.new_page()
        pg.set_default_timeout(20_000)
        pg.goto(office.url + "/login")
        pg.get_by_label("Usuário").fill("fiscal-rio")
        pg.get_by_label("Senha").fill(PASSWORD)
        pg.get_by_role("button", name="Entrar").click()
        pg.wait_for_url(office.url + "/")
        yield pg
        context.close()


def test_a_rio_inspector_opens_a_case_from_rios_flag(office, page):
    rio = add_flag_event(office.engine, flags=["BORROWED_CARD"], registration="V008", badge_registration="V009",
                         gate_id="rio-g1", port="rio")
    santos = add_flag_event(office.engine, flags=["BORROWED_CARD"], registration="V009", gate_id="g-a")
    page.goto(office.url + "/flags")
    assert page.locator(f'tr[data-event="{rio}"]').count() == 1
    assert page.locator(f'tr[data-event="{santos}"]').count() == 0
    page.locator(f'tr[data-event="{rio}"]').get_by_role("link", name="tratar").click()
    page.wait_for_url(f"{office.url}/flags/{rio}")
    page.get_by_role("button", name="Processo com a acusação padrão").click()
    page.wait_for_url(f"{office.url}/cases/**")
    case_url = page.url
    status = page.locator("#case-status").inner_text()
    assert "cartão emprestado (G4)" in status and "leitura sinalizada: rio-g1 seq" in status
    page.goto(office.url + "/cases")
    page.locator(f'a[href="{case_url.removeprefix(office.url)}"]').first.click()
    page.wait_for_url(case_url)
    worker = page.goto(office.url + "/workers/V008")
    assert worker.status == 200 and "V008" in page.locator("h1").inner_text()
    assert page.goto(office.url + "/workers/V009").status == 404  # santos's worker: no such worker for him
    assert page.goto(f"{office.url}/flags/{santos}").status == 404
