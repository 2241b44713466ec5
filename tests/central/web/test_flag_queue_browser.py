"""The inspector's flag queue on a phone (390 px) in a real browser (Playwright driving Debian's
chromium) against the real app under uvicorn over a real SQLite ledger: a flag is found by its
state, acknowledged with a comment, and turned into a case in one step (issue 33, R7)."""

from __future__ import annotations

import pytest
from sqlalchemy.orm import Session

from central.web.users import add_user
from testkit.browser import launch_chromium
from tests.central.web.events import add_flag_event
from tests.central.web.live import PASSWORD, LiveOffice


@pytest.fixture(scope="module")
def office(tmp_path_factory):
    o = LiveOffice(tmp_path_factory.mktemp("flags")).start()
    with Session(o.engine) as s, s.begin():
        add_user(s, "fiscal", role="inspector", password=PASSWORD, name="Fiscal", actor="test")
    try:
        yield o
    finally:
        o.stop()


@pytest.fixture(scope="module")
def phone(office):
    with launch_chromium() as b:
        context = b.new_context(viewport={"width": 390, "height": 844})
        pg = context.new_page()
        pg.set_default_timeout(20_000)
        pg.goto(office.url + "/login")
        pg.get_by_label("Usuário").fill("fiscal")
        pg.get_by_label("Senha").fill(PASSWORD)
        pg.get_by_role("button", name="Entrar").click()
        pg.wait_for_url(office.url + "/")
        yield pg
        context.close()


def test_a_flag_is_seen_then_made_a_case_on_a_phone(office, phone):
    borrowed = add_flag_event(office.engine, flags=["BORROWED_CARD"], registration="V008",
                              badge_registration="V009", gate_id="g-a")
    phone.goto(office.url + "/flags")
    counts = phone.locator("#flag-counts")
    assert "nova (1)" in counts.inner_text() and "tratada (0)" in counts.inner_text()
    row = phone.locator(f'tr[data-event="{borrowed}"]')
    state_cell = row.locator('td[data-label="Estado"]')
    # a stacked row keeps its column labels: the cell's ::before shows its data-label
    assert state_cell.evaluate("td => getComputedStyle(td, '::before').content") == '"Estado: "'
    assert "nova" in state_cell.inner_text()
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390  # no sideways scroll
    row.get_by_role("link", name="tratar").click()
    phone.wait_for_url(f"{office.url}/flags/{borrowed}")
    phone.get_by_label("Comentário").fill("cartão com o fiscal; chamar o vigia-chefe")
    phone.get_by_role("button", name="Marcar como vista").click()
    phone.wait_for_url(f"{office.url}/flags/{borrowed}")
    assert phone.locator("#flag-state").get_attribute("data-state") == "seen"
    assert "chamar o vigia-chefe" in phone.locator("#flag-comment").inner_text()
    phone.get_by_role("button", name="Processo com a acusação padrão").click()
    phone.wait_for_url(f"{office.url}/cases/**")
    case = phone.locator("#case-status").inner_text()
    assert "cartão emprestado (G4)" in case and "83.611 art. 20 j/l" in case
    assert "leitura sinalizada: g-a seq" in case
    phone.goto(office.url + "/flags?state=handled")
    assert phone.locator(f'tr[data-event="{borrowed}"]').count() == 1
    assert "tratada (1)" in phone.locator("#flag-counts").inner_text()
