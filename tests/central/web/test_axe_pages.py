"""Every office page, the worker's pages and the login page on the demo day, in a real browser
(Playwright driving Debian's chromium) with axe-core (testkit/axe.py): no accessibility violation of
impact serious or critical (issue 33), at a desktop width and at a phone's; the read log and the
audit log (issue 34 item 12) among them."""

from __future__ import annotations

import pytest

from testkit.axe import axe_violations, describe
from testkit.browser import launch_chromium

PASSWORD = "portgate-demo"
OFFICE_PAGES = ("/", "/flags", "/alarms", "/workers", "/workers/V017", "/workers/new",
                "/pay?from=2026-03-15&to=2026-03-16", "/escala?date=2026-03-15", "/whatif", "/reports?month=2026-03",
                "/ships", "/worker-requests")
INSPECTOR_PAGES = ("/", "/flags", "/cases", "/cases/1", "/alarms")
# the read log and the audit log (issue 34 item 12): a walk of their own (its own time budget)
LOG_PAGES = ("/reads?from=2026-03-14&to=2026-03-16", "/reads?from=2026-03-14&to=2026-03-16&decision=deny",
             "/audit?from=2026-03-01&to=2026-12-31")
INSPECTOR_LOG_PAGES = ("/reads?from=2026-03-14&to=2026-03-16",)
WORKER_PAGES = ("/w/", "/w/turnos", "/w/pagamento", "/w/processos", "/w/cartao")


@pytest.fixture(scope="module")
def browser():
    with launch_chromium() as b:
        yield b


def _log_in(browser, url: str, login: str, width: int):
    context = browser.new_context(viewport={"width": width, "height": 900}, bypass_csp=True)  # axe is injected inline
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(url + "/login")
    page.locator("#login").fill(login)
    page.locator("#password").fill(PASSWORD)
    page.locator("form[action='/login'] button[type=submit]").click()
    page.wait_for_load_state()
    return context, page


def _walk(browser, url: str, login: str, paths, width: int) -> dict[str, str]:
    context, page = _log_in(browser, url, login, width)
    bad = {}
    try:
        for path in paths:
            response = page.goto(url + path)
            assert response is not None and response.status == 200, (path, response and response.status)
            found = axe_violations(page, impacts=("serious", "critical"))
            if found:
                bad[path] = describe(found)
    finally:
        context.close()
    return bad


@pytest.mark.parametrize("width", [1280, 390])
def test_the_office_pages_have_no_serious_accessibility_violation(demo_day, browser, width):
    url = demo_day.url.rstrip("/")
    bad = _walk(browser, url, "escritorio", OFFICE_PAGES, width)
    bad |= {f"inspector {k}": v for k, v in _walk(browser, url, "demo", INSPECTOR_PAGES, width).items()}
    assert bad == {}, bad


@pytest.mark.parametrize("width", [1280, 390])
def test_the_read_log_and_the_audit_log_have_no_serious_accessibility_violation(demo_day, browser, width):
    url = demo_day.url.rstrip("/")
    bad = _walk(browser, url, "escritorio", LOG_PAGES, width)
    bad |= {f"inspector {k}": v for k, v in _walk(browser, url, "demo", INSPECTOR_LOG_PAGES, width).items()}
    assert bad == {}, bad
    context, page = _log_in(browser, url, "escritorio", width)
    try:  # the walk saw the logs' tables, not only their empty states
        for path, rows in ((LOG_PAGES[0], "#reads tbody tr"), (LOG_PAGES[2], "#audit tbody tr")):
            page.goto(url + path)
            assert page.locator(rows).count() > 0, path
    finally:
        context.close()


def test_the_worker_pages_and_the_login_have_no_accessibility_violation(demo_day, browser):
    url = demo_day.url.rstrip("/")
    bad = _walk(browser, url, "V017", WORKER_PAGES, 360)
    context = browser.new_context(viewport={"width": 360, "height": 800}, bypass_csp=True)
    try:
        page = context.new_page()
        page.goto(url + "/login")
        found = axe_violations(page)
        if found:
            bad["/login"] = describe(found)
    finally:
        context.close()
    assert bad == {}, bad
