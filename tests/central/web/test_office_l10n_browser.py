"""Issue 33 on the office's and the worker's pages of the demo day (read-only), in a real browser
(Playwright driving Debian's chromium): a post's function by its name in the page's language with its
code kept in ``data-function`` (``vigia_chefe`` -> "vigia-chefe" / "chief watchman"); the audit log's
detail as a field list in the page's language, never the stored JSON; every date, time and period in
port time through Babel (``portgate.l10n``): ``dd/mm/aaaa`` on pt-BR pages, Babel's English on English
pages (the office wrote ``dd/mm/aaaa`` by hand on both)."""

from __future__ import annotations

import contextlib
import re

import pytest

from tests.pt_words import VISIBLE_TEXT

PASSWORD = "portgate-demo"
DAY = "/escala?date=2026-03-15"
AUDIT = "/audit?from=2026-03-01&to=2026-12-31"


@contextlib.contextmanager
def signed_in(browser, url: str, login: str, lang: str, width: int = 1280):
    """A page of ``login`` signed in on the demo, in ``lang`` (the switch on the login page)."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    try:
        page = context.new_page()
        page.set_default_timeout(30_000)
        page.goto(url + "/login")
        if lang == "en":
            page.locator("#lang-select").select_option("en")
            page.locator("form[action='/lang']").get_by_role("button").click()
            page.wait_for_load_state()
        page.locator("#login").fill(login)
        page.locator("#password").fill(PASSWORD)
        page.locator("form[action='/login'] button[type=submit]").click()
        page.wait_for_load_state()
        yield page
    finally:
        context.close()


@pytest.mark.parametrize("lang, name", [("pt", "vigia-chefe"), ("en", "chief watchman")])
def test_a_function_is_named_in_the_page_s_language_and_its_code_kept_in_an_attribute(demo_day, browser, lang, name):
    url = demo_day.url.rstrip("/")
    with signed_in(browser, url, "escritorio", lang) as page:
        for path in (DAY, "/workers/V017"):
            page.goto(url + path)
            cell = page.locator('[data-function="vigia_chefe"]').first
            assert name in cell.inner_text(), (path, cell.inner_text())
            assert "vigia_chefe" not in page.evaluate(VISIBLE_TEXT), path
    with signed_in(browser, url, "V017", lang, width=390) as phone:
        phone.goto(url + "/w/turnos")
        assert phone.locator('[data-function="vigia_chefe"]').first.inner_text() == name
        assert "vigia_chefe" not in phone.evaluate(VISIBLE_TEXT)


def test_the_audit_log_reads_as_fields_in_portuguese_and_in_english_never_as_json(demo_day, browser):
    url = demo_day.url.rstrip("/")
    with signed_in(browser, url, "escritorio", "pt") as page:
        page.goto(url + AUDIT)
        confiscated = page.locator('#audit tr[data-action="card.confiscated"]').first
        cells = confiscated.locator("td")
        assert cells.nth(2).inner_text() == "cartão apreendido"
        detail = cells.nth(4).inner_text()
        assert "situação: apreendido" in detail and "tipo: de controle" in detail, detail
        assert "cartão emprestado (G4)" in detail and "BORROWED_CARD" not in detail, detail
        assert re.fullmatch(r"\d\d/\d\d/2026 \d\d:\d\d:\d\d", cells.nth(0).inner_text()), cells.nth(0).inner_text()
        call = page.locator('#audit tr[data-action="ship_call.save"]:has([data-subject="9300002"])').first
        call = call.locator("td").nth(4).inner_text()
        assert "chegada: 15/03/2026 01:00:00" in call and "navegação: longo curso" in call, call
        text = page.locator("#audit").inner_text()
        assert '{"' not in text and '":' not in text
    with signed_in(browser, url, "escritorio", "en") as page:
        page.goto(url + AUDIT)
        cells = page.locator('#audit tr[data-action="card.confiscated"]').first.locator("td")
        assert cells.nth(2).inner_text() == "card confiscated"
        assert "status: confiscated" in cells.nth(4).inner_text() and "borrowed card (G4)" in cells.nth(4).inner_text()
        assert re.fullmatch(r"Mar 15, 2026, \d{1,2}:\d\d:\d\d [AP]M", cells.nth(0).inner_text()), cells.nth(0).inner_text()
        call = page.locator('#audit tr[data-action="ship_call.save"]:has([data-subject="9300002"])').first
        call = call.locator("td").nth(4).inner_text()
        assert "arrival: Mar 15, 2026, 1:00:00 AM" in call and "voyage: long haul" in call, call
        assert '{"' not in page.locator("#audit").inner_text()


def test_dates_and_periods_read_dd_mm_aaaa_in_portuguese_and_as_babel_s_english_in_english(demo_day, browser):
    url = demo_day.url.rstrip("/")
    with signed_in(browser, url, "escritorio", "pt") as page:
        page.goto(url + DAY)
        assert page.locator("h1").inner_text().endswith("15/03/2026")
        page.goto(url + "/alarms")
        period = page.locator('tr[data-ship="9300003"] td').nth(2).all_inner_texts()
        assert re.fullmatch(r"\d\d-\d\d \d\d/03/2026", period[0]), period
        page.goto(url + "/workers/V017")
        assert "01/06/2025, válido até 31/05/2027" in page.locator("#w-exam").inner_text()
    with signed_in(browser, url, "escritorio", "en") as page:
        page.goto(url + DAY)
        assert page.locator("h1").inner_text().endswith("Mar 15, 2026")
        page.goto(url + "/alarms")
        period = page.locator('tr[data-ship="9300003"] td').nth(2).inner_text()
        assert re.fullmatch(r"\d\d-\d\d Mar 1[56], 2026", period), period
        page.goto(url + "/workers/V017")
        assert "Jun 1, 2025" in page.locator("#w-exam").inner_text()
        assert not re.search(r"\b\d\d/\d\d/\d{4}\b", page.evaluate(VISIBLE_TEXT))  # no dd/mm/aaaa on an English page
        page.goto(url + "/reports?month=2026-03")
        assert "Mar 2026" in page.locator("h1").inner_text()
