"""Numeric columns right-aligned with their headers on every office and worker page of the demo
day at 1280 px (issue 34 item 14), in a real browser (Playwright driving Debian's chromium):
``testkit.aligned.misaligned_headers`` compares the computed ``text-align`` of each column's body
cells with its header's, every ``<details>`` opened. The pages: those the wrapped-words test walks
(each menu entry of the office clerk and the inspector, and the pages behind them) and the worker's
own pages of V017 and E001."""

from __future__ import annotations

import pytest

from testkit.aligned import misaligned_headers
from tests.central.web.test_wrapped_words_browser import PAGES, PASSWORD, _first_flag

WORKERS = {"V017": ("/w/", "/w/turnos?from=2026-03-15&to=2026-03-15", "/w/pagamento?from=2026-03-15&to=2026-03-15"),
           "E001": ("/w/turnos?from=2026-02-01&to=2026-03-15", "/w/pagamento?from=2026-02-01&to=2026-03-15")}
OPEN_DETAILS = "() => document.querySelectorAll('details:not([open])').forEach(d => d.open = true)"


def _log_in(page, url: str, login: str, home: str) -> None:
    page.goto(url + "/login")
    page.locator("#login").fill(login)
    page.locator("#password").fill(PASSWORD)
    page.locator("form[action='/login'] button[type=submit]").click()
    page.wait_for_url(url + home)


def _menu(page, prefix: str) -> list[str]:
    hrefs = page.evaluate("() => [...document.querySelectorAll('header nav a, nav a')].map(a => a.getAttribute('href'))")
    return sorted({p for p in hrefs if p and p.startswith(prefix) and not p.startswith("/logout")})


@pytest.mark.timeout(900)  # some 30 pages on a shared machine
def test_every_right_aligned_column_has_a_right_aligned_header(demo_day, browser):
    url = demo_day.url.rstrip("/")
    found: dict[str, list] = {}
    tables = 0
    walks = [(login, "/", list(pages)) for login, pages in PAGES.items()]
    walks += [(login, "/w/", list(pages)) for login, pages in WORKERS.items()]
    for login, home, pages in walks:
        context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="pt-BR")
        try:
            page = context.new_page()
            page.set_default_timeout(30_000)
            _log_in(page, url, login, home)
            paths = pages + [p for p in _menu(page, home) if p not in pages and p != "/w/sair"]
            if login == "demo":
                paths.append(_first_flag(page, url))
            for path in paths:
                assert path, "no flag on the demo day"
                response = page.goto(url + path)
                assert response is not None and response.status == 200, (login, path, response and response.status)
                page.evaluate(OPEN_DETAILS)
                tables += page.locator("table").count()
                wrong = misaligned_headers(page)
                if wrong:
                    found[f"{login} {path}"] = wrong
        finally:
            context.close()
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
