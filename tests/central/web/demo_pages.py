"""One load of each demo-day page per login and screen width, shared by the page checks (issue 32:
the checks of tests/central/web/test_aligned_columns_browser.py, test_wrapped_words_browser.py,
test_pt_words_browser.py and test_axe_pages.py each walked the same pages at 1280 px, each loading
and measuring them again: ~0.2-0.3 s of chromium and a render of the demo's office a load).

``DEMO_PAGES.visit(browser, url, login, width, path)`` loads ``path`` signed in as ``login`` in a
browser context ``width`` x 900 px, runs on it every check that walks that page (``_wanted``) and keeps
the results (``PageReport``) for the session: a later check of the same page at the same width reads
them instead of loading it again. The checks run on a load are those that walk that page (the
lists the test modules register here, the menus seen), so no check runs on a page for nothing. Each test keeps its own walk (its pages, menus, links followed)
and its own assertions over the reports. On a page the checks run in the order that leaves each
what it measured alone: axe-core first (the page as loaded, ``<details>`` closed), then the visible
text and the links, then the wrapped words (which open every ``<details>``) and the column
alignment. A check asked for on a page loaded without it loads the page again.

The contexts: locale pt-BR (as the layout checks had), and ``bypass_csp`` (axe-core is injected
inline); the office's pages have no inline style or script (central/web/templates), so what the
CSP would block renders the same either way. A context is logged in at its first use and kept
while the module's ``browser`` lives; a later module's browser logs in again.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from testkit.aligned import misaligned_headers
from testkit.axe import axe_violations
from testkit.wrapped import wrapped_words
from tests.pt_words import VISIBLE_TEXT, english_in

PASSWORD = "portgate-demo"
HOMES = {"V017": "/w/", "E001": "/w/"}  # the worker accounts' landing page; the office's is "/"
OPEN_DETAILS = "() => document.querySelectorAll('details:not([open])').forEach(d => d.open = true)"
NAV = "() => [...document.querySelectorAll('header nav a')].map(a => a.getAttribute('href'))"
NAV_ALL = "() => [...document.querySelectorAll('header nav a, nav a')].map(a => a.getAttribute('href'))"
FLAG = "table.flags a[href^='/flags/']"
# Which checks a page's load runs besides the one asked for: the checks that walk it. "text"
# (visible text, links, menus: the pt-BR walk, at 1280 px); "layout" (wrapped words, column
# alignment, at 1280 and 1440 px) on the pages the layout tests list and those of the login's menu
# (and the first flag); "axe" (axe-core, every impact) on the pages of ``AXE_PAGES``.
TEXT_WIDTHS = (1280,)
LAYOUT_WIDTHS = (1280, 1440)
LAYOUT_PAGES: dict[str, set[str]] = {}  # login -> paths: filled by the layout tests' modules
AXE_PAGES: set[tuple[str, int, str]] = set()  # (login, width, path): filled by test_axe_pages.py


@dataclasses.dataclass
class PageReport:
    """What the checks found on one page (``None``: that check did not run on it)."""

    status: int
    done: set[str]
    english: list[str] | None = None  # tests.pt_words.english_in of the visible text
    links: list[str] | None = None  # every ``a[href]``'s href
    nav: list[str] | None = None  # the hrefs of ``header nav a``
    nav_all: list[str] | None = None  # the hrefs of ``header nav a, nav a``
    flag: str | None = None  # the first flag's link in ``table.flags``
    axe: list[dict] | None = None  # axe-core's violations, every impact
    wrapped: list[dict] | None = None  # testkit.wrapped.wrapped_words, every <details> opened
    aligned: list[dict] | None = None  # testkit.aligned.misaligned_headers, every <details> opened
    tables: int | None = None  # how many <table> the page holds


class DemoPages:
    """The session's page reports and the logged-in pages that made them."""

    def __init__(self) -> None:
        self.reports: dict[tuple[str, int, str], PageReport] = {}
        self.menus: dict[tuple[str, int], set[str]] = {}  # the menu entries and first flag seen
        self.pages: dict[tuple[str, int], tuple[Any, Any]] = {}  # (browser, page)

    def page_of(self, browser, url: str, login: str, width: int):
        """The page signed in as ``login`` at ``width`` in ``browser`` (made and logged in at its
        first use in that browser)."""
        held = self.pages.get((login, width))
        if held and held[0] is browser and browser.is_connected():
            return held[1]
        context = browser.new_context(viewport={"width": width, "height": 900}, locale="pt-BR",
                                      bypass_csp=True)
        page = context.new_page()
        page.set_default_timeout(30_000)
        page.on("dialog", lambda dialog: dialog.dismiss())
        home = HOMES.get(login, "/")
        page.goto(url + "/login")
        page.locator("#login").fill(login)
        page.locator("#password").fill(PASSWORD)
        page.locator("form[action='/login'] button[type=submit]").click()
        page.wait_for_url(url + home)
        self.pages[login, width] = (browser, page)
        return page

    def visit(self, browser, url: str, login: str, width: int, path: str, need: str) -> PageReport:
        """The report of ``path`` for ``login`` at ``width`` holding check ``need`` ("text",
        "layout" or "axe"): the kept one, or ``path`` loaded now with every check that walks it."""
        key = (login, width, path)
        kept = self.reports.get(key)
        if kept is not None and (need in kept.done or kept.status != 200):
            return kept
        wanted = {need} | self._wanted(login, width, path) | (kept.done if kept else set())
        self.reports[key] = report = self._load(self.page_of(browser, url, login, width), url + path, wanted)
        if report.status == 200 and "text" in report.done:
            seen = self.menus.setdefault((login, width), set())
            seen.update(report.nav_all)
            if report.flag:
                seen.add(report.flag)
        return report

    def _wanted(self, login: str, width: int, path: str) -> set[str]:
        """The checks that walk ``path`` for ``login`` at ``width`` (as far as known now)."""
        wanted = {"text"} if width in TEXT_WIDTHS else set()
        if width in LAYOUT_WIDTHS and (path in LAYOUT_PAGES.get(login, ()) or path in self.menus.get((login, width), ())):
            wanted.add("layout")
        if (login, width, path) in AXE_PAGES:
            wanted.add("axe")
        return wanted

    def _load(self, page, address: str, wanted: set[str]) -> PageReport:
        response = page.goto(address)
        assert response is not None, address
        report = PageReport(status=response.status, done=set())
        if response.status != 200:
            return report
        if "axe" in wanted:
            report.axe = axe_violations(page)
        if "text" in wanted:
            report.english = english_in(page.evaluate(VISIBLE_TEXT))
            report.links = page.eval_on_selector_all("a[href]", "els => els.map(e => e.getAttribute('href'))")
            report.nav, report.nav_all = page.evaluate(NAV), page.evaluate(NAV_ALL)
            flag = page.locator(FLAG).first
            report.flag = flag.get_attribute("href") if flag.count() else None
        if "layout" in wanted:
            report.wrapped = wrapped_words(page)
            page.evaluate(OPEN_DETAILS)
            report.tables = page.locator("table").count()
            report.aligned = misaligned_headers(page)
        report.done = wanted
        return report


DEMO_PAGES = DemoPages()
