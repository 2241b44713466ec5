"""Every office page, the worker's pages and the login page on the demo day, in a real browser
(Playwright driving Debian's chromium) with axe-core (testkit/axe.py): no accessibility violation of
impact serious or critical (issue 33), at a desktop width and at a phone's; the read log and the
audit log (issue 34 item 12) among them."""

from __future__ import annotations

import pytest

from testkit.axe import axe_violations, describe

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
def logged_in(browser, demo_day):
    """``logged_in(login, width)``: the module's page logged in as ``login`` in a browser context
    ``width`` px wide, made at its first use and kept for the module (issue 32: one login per user
    and width instead of one per walk; each walk loads its own pages); closed at the module's end."""
    url = demo_day.url.rstrip("/")
    made: dict[tuple[str, int], object] = {}

    def page_of(login: str, width: int):
        if (login, width) not in made:
            made[login, width] = _log_in(browser, url, login, width)
        return made[login, width][1]

    yield page_of
    for context, _page in made.values():
        context.close()


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


def _walk(page, url: str, paths) -> dict[str, str]:
    """Each of ``paths`` loaded in ``page`` (200) and checked by axe: its serious or critical
    violations by path."""
    bad = {}
    for path in paths:
        response = page.goto(url + path)
        assert response is not None and response.status == 200, (path, response and response.status)
        found = axe_violations(page, impacts=("serious", "critical"))
        if found:
            bad[path] = describe(found)
    return bad


@pytest.mark.parametrize("width", [1280, 390])
def test_the_office_pages_have_no_serious_accessibility_violation(demo_day, logged_in, width):
    url = demo_day.url.rstrip("/")
    bad = _walk(logged_in("escritorio", width), url, OFFICE_PAGES)
    bad |= {f"inspector {k}": v for k, v in _walk(logged_in("demo", width), url, INSPECTOR_PAGES).items()}
    assert bad == {}, bad


@pytest.mark.parametrize("width", [1280, 390])
def test_the_read_log_and_the_audit_log_have_no_serious_accessibility_violation(demo_day, logged_in, width):
    url = demo_day.url.rstrip("/")
    page = logged_in("escritorio", width)
    bad = _walk(page, url, LOG_PAGES)
    bad |= {f"inspector {k}": v for k, v in _walk(logged_in("demo", width), url, INSPECTOR_LOG_PAGES).items()}
    assert bad == {}, bad
    for path, rows in ((LOG_PAGES[0], "#reads tbody tr"), (LOG_PAGES[2], "#audit tbody tr")):
        page.goto(url + path)  # the walk saw the logs' tables, not only their empty states
        assert page.locator(rows).count() > 0, path


def test_the_worker_pages_and_the_login_have_no_accessibility_violation(demo_day, browser, logged_in):
    url = demo_day.url.rstrip("/")
    bad = _walk(logged_in("V017", 360), url, WORKER_PAGES)
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
