"""An auditor reads every office page it may open and sees no selection control it cannot act on
(issue 33 item 10): no checkbox, no "select all", no selection column on the pay run (the held
statements and the statements to mark paid: releasing and paying are the office's), the flags, the
flag page, alarms, cases, registry, escala and reports — in a real browser (Playwright driving
Debian's chromium) on a ledger with a statement on hold (tests/central/web/paydata.py). The office
clerk, on the same pages, has the checkboxes (so the check can fail)."""

from __future__ import annotations

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from central.ledger.schema import events
from central.registry import cases as case_svc
from central.web.users import add_user
from tests.central.web.live import PASSWORD, LiveOffice
from tests.central.web.paydata import seed_pay

AUDITOR_PASSWORD = "auditor password 1"
PERIOD = "from=2026-03-01&to=2026-03-31"


@pytest.fixture(scope="module")
def office(tmp_path_factory):
    o = LiveOffice(tmp_path_factory.mktemp("auditor-office")).start()
    try:
        seed_pay(o.engine)
        with Session(o.engine) as s, s.begin():
            add_user(s, "auditora", role="auditor", password=AUDITOR_PASSWORD, name="Auditora", actor="test")
            o.event_id = s.execute(select(events.c.event_id).where(events.c.registration == "V008",
                                                                   events.c.decision == "exit")).scalar_one()
            o.case_id = case_svc.open_from_event(s, o.event_id, flag="EARLY_EXIT", charge="Saída antes do fim",
                                                 article=None, evidence="leitura de saída", actor="web:fiscal")
        yield o
    finally:
        o.stop()


def _session(browser, office, login: str, password: str):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="pt-BR")
    page = context.new_page()
    page.set_default_timeout(20_000)
    page.goto(office.url + "/login")
    page.locator("#login").fill(login)
    page.locator("#password").fill(password)
    page.locator("form[action='/login'] button[type=submit]").click()
    page.wait_for_url(office.url + "/")
    return context, page


SELECTION = """() => ({
    boxes: document.querySelectorAll('input[type=checkbox], input[type=radio]').length,
    selectAll: document.querySelectorAll('#select-all, #select-none').length,
    selectColumn: [...document.querySelectorAll('th')].filter(th => /^(Selecionar|Select)$/.test(th.textContent.trim())).length,
    actions: [...document.querySelectorAll('form[method=post] button[type=submit], form[method=post] button:not([type])')]
        .filter(b => !b.closest('form[action="/logout"], form[action="/lang"], form[action^="/whatif"]'))
        .map(b => b.textContent.trim()),  // the what-if is his to run (read-only)
})"""


def test_an_auditor_sees_no_selection_control_it_cannot_act_on(office, browser):
    pages = ("/", f"/pay?{PERIOD}", "/flags", f"/flags/{office.event_id}", "/alarms", "/cases",
             f"/cases/{office.case_id}", "/workers", "/workers/V008", "/escala?date=2026-03-15",
             "/reports?month=2026-03", "/whatif")
    context, page = _session(browser, office, "auditora", AUDITOR_PASSWORD)
    seen, found = [], {}
    try:
        for path in pages:
            response = page.goto(office.url + path)
            assert response is not None
            if response.status == 403:  # not his to read (the menu does not offer it either)
                continue
            assert response.status == 200, (path, response.status)
            seen.append(path)
            got = page.evaluate(SELECTION)
            if got["boxes"] or got["selectAll"] or got["selectColumn"] or got["actions"]:
                found[path] = got
        # the held statement and the payable ones are shown to him, without a way to select them
        page.goto(office.url + f"/pay?{PERIOD}")
        assert page.locator('#held tr[data-statement]').count() == 1
        assert page.locator('#statements tr[data-worker]').count() >= 3
    finally:
        context.close()
    assert f"/pay?{PERIOD}" in seen and "/flags" in seen and f"/flags/{office.event_id}" in seen, seen
    assert found == {}, found
    # the office clerk, who can release and mark paid, has the controls on the same page
    context, page = _session(browser, office, "escritorio", PASSWORD)
    try:
        page.goto(office.url + f"/pay?{PERIOD}")
        got = page.evaluate(SELECTION)
        assert got["boxes"] == 4 and got["selectAll"] == 2 and got["selectColumn"] == 2, got
    finally:
        context.close()
