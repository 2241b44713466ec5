"""Every office page, the worker's pages and the login page on the demo day, in a real browser
(Playwright driving Debian's chromium) with axe-core (testkit/axe.py): no accessibility violation of
impact serious or critical (issue 33), at a desktop width and at a phone's; the read log and the
audit log (issue 34 item 12) among them."""

from __future__ import annotations

import pytest

from testkit.axe import axe_violations, describe
from tests.central.web.demo_pages import AXE_PAGES, DEMO_PAGES

OFFICE_PAGES = ("/", "/flags", "/alarms", "/workers", "/workers/V017", "/workers/new",
                "/pay?from=2026-03-15&to=2026-03-16", "/escala?date=2026-03-15", "/whatif", "/reports?month=2026-03",
                "/ships", "/worker-requests")
INSPECTOR_PAGES = ("/", "/flags", "/cases", "/cases/1", "/alarms")
# the read log and the audit log (issue 34 item 12): a walk of their own (its own time budget)
LOG_PAGES = ("/reads?from=2026-03-14&to=2026-03-16", "/reads?from=2026-03-14&to=2026-03-16&decision=deny",
             "/audit?from=2026-03-01&to=2026-12-31")
INSPECTOR_LOG_PAGES = ("/reads?from=2026-03-14&to=2026-03-16",)
WORKER_PAGES = ("/w/", "/w/turnos", "/w/pagamento", "/w/processos", "/w/cartao")


SERIOUS = ("serious", "critical")
WIDTHS = (1280, 390)
# the pages axe-core checks where tests/central/web/demo_pages.py loads them for every check
AXE_PAGES.update({("escritorio", w, p) for w in WIDTHS for p in OFFICE_PAGES + LOG_PAGES}
                 | {("demo", w, p) for w in WIDTHS for p in INSPECTOR_PAGES + INSPECTOR_LOG_PAGES}
                 | {("V017", 360, p) for p in WORKER_PAGES})


def _walk(browser, url: str, login: str, width: int, paths) -> dict[str, str]:
    """Each of ``paths`` loaded (200) for ``login`` at ``width`` and checked by axe: its serious or
    critical violations by path. Each page is loaded once for every check of the session at that
    width (tests/central/web/demo_pages.py), signed in once per login, width and module."""
    bad = {}
    for path in paths:
        report = DEMO_PAGES.visit(browser, url, login, width, path, "axe")
        assert report.status == 200, (path, report.status)
        found = [v for v in report.axe if v.get("impact") in SERIOUS]
        if found:
            bad[path] = describe(found)
    return bad


@pytest.mark.parametrize("width", [1280, 390])
def test_the_office_pages_have_no_serious_accessibility_violation(demo_day, browser, width):
    url = demo_day.url.rstrip("/")
    bad = _walk(browser, url, "escritorio", width, OFFICE_PAGES)
    bad |= {f"inspector {k}": v for k, v in _walk(browser, url, "demo", width, INSPECTOR_PAGES).items()}
    assert bad == {}, bad


@pytest.mark.parametrize("width", [1280, 390])
def test_the_read_log_and_the_audit_log_have_no_serious_accessibility_violation(demo_day, browser, width):
    url = demo_day.url.rstrip("/")
    bad = _walk(browser, url, "escritorio", width, LOG_PAGES)
    bad |= {f"inspector {k}": v for k, v in _walk(browser, url, "demo", width, INSPECTOR_LOG_PAGES).items()}
    page = DEMO_PAGES.page_of(browser, url, "escritorio", width)
    assert bad == {}, bad
    for path, rows in ((LOG_PAGES[0], "#reads tbody tr"), (LOG_PAGES[2], "#audit tbody tr")):
        page.goto(url + path)  # the walk saw the logs' tables, not only their empty states
        assert page.locator(rows).count() > 0, path


def test_the_worker_pages_and_the_login_have_no_accessibility_violation(demo_day, browser):
    url = demo_day.url.rstrip("/")
    bad = _walk(browser, url, "V017", 360, WORKER_PAGES)
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
