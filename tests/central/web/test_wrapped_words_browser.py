"""No word, number, id, amount or date broken across lines inside a table cell or a button on any
office page of the demo day at 1280 and 1440 px (issue 34 item 14), in a real browser (Playwright
driving Debian's chromium): ``testkit.wrapped.wrapped_words`` measures each word's line boxes
(DOM ``Range.getClientRects``) with every ``<details>`` opened. The pages: each menu entry the
office clerk and the inspector see, and the detail pages behind them (a worker, the pay run with
its statements, a day's escala, a month's reports, a flag, a case)."""

from __future__ import annotations

import pytest

from testkit.wrapped import wrapped_words
from tests.central.web.demo_pages import DEMO_PAGES, LAYOUT_PAGES

PAGES = {
    "escritorio": ("/", "/flags", "/alarms", "/workers", "/workers/V017", "/workers/E001", "/workers/new",
                   "/pay?from=2026-03-13&to=2026-03-16", "/escala?date=2026-03-15", "/whatif",
                   "/reports?month=2026-03", "/ships", "/worker-requests"),
    "demo": ("/", "/flags", "/cases", "/cases/1", "/alarms", "/reports?month=2026-03"),
}
for _login, _pages in PAGES.items():  # measured where tests/central/web/demo_pages.py loads them
    LAYOUT_PAGES.setdefault(_login, set()).update(_pages)


@pytest.mark.parametrize("width", [1280, 1440])
def test_no_word_is_broken_across_lines_in_a_table_or_a_button(demo_day, browser, width):
    """Each page loaded once at each width for every check of the session
    (tests/central/web/demo_pages.py) and measured there."""
    url = demo_day.url.rstrip("/")
    broken: dict[str, list] = {}
    walked = 0
    for login, pages in PAGES.items():
        menu = DEMO_PAGES.visit(browser, url, login, width, "/", "text").nav
        paths = list(pages) + sorted({p for p in menu if p and p.startswith("/") and p not in pages})
        if login == "demo":
            paths.append(DEMO_PAGES.visit(browser, url, login, width, "/flags", "text").flag)
        for path in paths:
            assert path, "no flag on the demo day"
            report = DEMO_PAGES.visit(browser, url, login, width, path, "layout")
            assert report.status == 200, (login, path, report.status)
            walked += 1
            if report.wrapped:
                broken[f"{login} {path}"] = report.wrapped[:5]
    assert walked >= 20, walked
    assert broken == {}, broken


def test_the_measure_finds_a_broken_word_an_amount_and_an_id_and_nothing_else(browser):
    """The measure itself on a page made for it: a word broken by ``overflow-wrap: anywhere``, an
    amount split at its space and an id split at its hyphen are found; the same cells with
    ``white-space: nowrap``, a screen-reader-only label and a closed ``<details>`` whose content fits
    are not."""
    context = browser.new_context(viewport={"width": 1280, "height": 600})
    try:
        page = context.new_page()
        page.set_content("""<style>td { width: 4.5em; max-width: 4.5em; } .any { overflow-wrap: anywhere; }
            .nb { white-space: nowrap; } .sr { position: absolute; width: 1px; height: 1px; overflow: hidden;
            clip: rect(0 0 0 0); white-space: nowrap; }</style>
            <table><tr><td class="any">Matrícula</td><td>R$ 180,00</td><td>g-aurora-norte</td></tr>
            <tr><td class="nb">Matrícula</td><td class="nb">R$ 180,00</td><td class="nb">g-aurora-norte</td></tr>
            <tr><td><span class="sr">Comentário longo</span> ok</td>
            <td><details><summary>a</summary><span class="nb">V001/9300001</span></details></td></tr></table>
            <button style="width: 3em; overflow-wrap: anywhere">Confirmar</button>""")
        found = wrapped_words(page)
    finally:
        context.close()
    assert [f["word"] for f in found] == ["Matrícula", "R$ 180,00", "g-aurora-norte", "Confirmar"], found
