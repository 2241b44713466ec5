"""Numeric columns right-aligned with their headers on every office and worker page of the demo
day at 1280 px (issue 34 item 14), in a real browser (Playwright driving Debian's chromium):
``testkit.aligned.misaligned_headers`` compares the computed ``text-align`` of each column's body
cells with its header's, every ``<details>`` opened. The pages: those the wrapped-words test walks
(each menu entry of the office clerk and the inspector, and the pages behind them) and the worker's
own pages of V017 and E001."""

from __future__ import annotations

import pytest

from testkit.aligned import misaligned_headers
from tests.central.web.demo_pages import DEMO_PAGES, LAYOUT_PAGES
from tests.central.web.test_wrapped_words_browser import PAGES

WORKERS = {"V017": ("/w/", "/w/turnos?from=2026-03-15&to=2026-03-15", "/w/pagamento?from=2026-03-15&to=2026-03-15"),
           "E001": ("/w/turnos?from=2026-02-01&to=2026-03-15", "/w/pagamento?from=2026-02-01&to=2026-03-15")}
for _login, _pages in WORKERS.items():  # measured where tests/central/web/demo_pages.py loads them
    LAYOUT_PAGES.setdefault(_login, set()).update(_pages)


def _menu(hrefs: list[str], prefix: str) -> list[str]:
    return sorted({p for p in hrefs if p and p.startswith(prefix) and not p.startswith("/logout")})


@pytest.mark.timeout(900)  # some 30 pages on a shared machine
def test_every_right_aligned_column_has_a_right_aligned_header(demo_day, browser):
    """Each page loaded once at 1280 px for every check of the session (tests/central/web/demo_pages.py):
    its ``<details>`` opened, its tables counted and measured there."""
    url = demo_day.url.rstrip("/")
    found: dict[str, list] = {}
    tables = 0
    walks = [(login, "/", list(pages)) for login, pages in PAGES.items()]
    walks += [(login, "/w/", list(pages)) for login, pages in WORKERS.items()]
    for login, home, pages in walks:
        menu = DEMO_PAGES.visit(browser, url, login, 1280, home, "text").nav_all
        paths = pages + [p for p in _menu(menu, home) if p not in pages and p != "/w/sair"]
        if login == "demo":
            paths.append(DEMO_PAGES.visit(browser, url, login, 1280, "/flags", "text").flag)
        for path in paths:
            assert path, "no flag on the demo day"
            report = DEMO_PAGES.visit(browser, url, login, 1280, path, "layout")
            assert report.status == 200, (login, path, report.status)
            tables += report.tables
            if report.aligned:
                found[f"{login} {path}"] = report.aligned
    assert tables >= 20, tables
    assert found == {}, found


def test_the_measure_finds_a_left_header_over_right_cells_and_nothing_else(browser):
    """The measure on a page made for it: a left header over ``.num`` cells is found (colspans
    counted, a nested table measured on its own); a right-aligned header, a column whose cells are
    left-aligned, an empty header and a hidden table are not."""
    context = browser.new_context(viewport={"width": 1280, "height": 600})
    try:
        page = context.new_page()
        page.set_content("""<style>th, td { text-align: left; } .num { text-align: right; }</style>
            <table id="a"><thead><tr><th colspan="2">Trabalhador</th><th>Total</th><th class="num">Horas</th><th></th></tr></thead>
            <tbody><tr><td>V001</td><td>Ana</td><td class="num">R$ 10,00</td><td class="num">8</td><td class="num">1</td></tr>
            <tr><td colspan="5"><table class="inner"><tr><th>Regra</th><th>Valor</th></tr>
              <tr><td>P1</td><td style="text-align: end">R$ 1,00</td></tr></table></td></tr></tbody></table>
            <table id="b"><tr><th>Nome</th><th>Dias</th></tr><tr><td>Ana</td><td>3</td></tr></table>
            <table id="c" hidden><tr><th>X</th></tr><tr><td class="num">1</td></tr></table>""")
        found = misaligned_headers(page)
    finally:
        context.close()
    assert [(f["table"], f["column"], f["header"]) for f in found] == [("table#a", 2, "Total"),
                                                                      ("table.inner", 1, "Valor")], found
