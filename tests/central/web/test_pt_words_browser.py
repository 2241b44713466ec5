"""Every pt-BR page of the demo day in a real browser (Playwright driving Debian's chromium): the office
as each role, the inspector's pages and the worker's pages, each page's links followed once (the
watchman's screen: tests/edge/display/test_pt_words_screen.py); none shows an English word of
``tests.pt_words.ENGLISH`` or a raw flag code in its visible text (issue 33 item 9: the words live in the gettext catalogs, docs/i18n.md; codes stay in attributes
and exports)."""

from __future__ import annotations

import collections
import re
from urllib.parse import urlsplit

import pytest

from tests.pt_words import VISIBLE_TEXT, english_in

PASSWORD = "portgate-demo"
START = {
    "escritorio": ("/", "/flags", "/alarms", "/workers", "/workers/V017", "/workers/new", "/pay?from=2026-03-15&to=2026-03-16",
                   "/escala?date=2026-03-15", "/whatif", "/reports?month=2026-03", "/ships", "/worker-requests",
                   "/audit"),
    "demo": ("/", "/flags", "/cases", "/cases/1", "/alarms"),
    "V017": ("/w/", "/w/turnos", "/w/pagamento", "/w/processos", "/w/cartao"),
}
SKIP = re.compile(r"/(logout|lang)\b|\.(pdf|csv|json)\b|/export|/payslip|/attachments?/|/photo|/static/|/sse|/stream")
SAME_SHAPE = 2  # links that differ only in their numbers (/workers/V001, /workers/V002): the first two


def _walk(browser, url: str, login: str) -> dict[str, list[str]]:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="pt-BR")
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.on("dialog", lambda dialog: dialog.dismiss())
    bad: dict[str, list[str]] = {}
    try:
        page.goto(url + "/login")
        page.locator("#login").fill(login)
        page.locator("#password").fill(PASSWORD)
        page.locator("form[action='/login'] button[type=submit]").click()
        page.wait_for_load_state()
        queue, seen, shapes = list(START[login]), set(), collections.Counter()
        while queue:
            path = queue.pop(0)
            if path in seen:
                continue
            seen.add(path)
            print(login, path, flush=True)  # the walk so far, shown when it fails
            response = page.goto(url + path)
            assert response is not None and response.status in (200, 403), (login, path, response and response.status)
            if response.status != 200:
                continue
            found = english_in(page.evaluate(VISIBLE_TEXT))
            if found:
                bad[f"{login} {path}"] = found
            for href in page.eval_on_selector_all("a[href]", "els => els.map(e => e.getAttribute('href'))"):
                parts = urlsplit(href)
                if parts.netloc or not parts.path.startswith("/") or SKIP.search(parts.path):
                    continue
                link = parts.path + (f"?{parts.query}" if parts.query else "")
                shape = re.sub(r"\d+", "N", parts.path)
                if link not in seen and link not in queue and shapes[shape] < SAME_SHAPE:
                    shapes[shape] += 1
                    queue.append(link)
    finally:
        context.close()
    return bad


def test_the_checker_finds_english_words_and_raw_flag_codes():
    assert english_in("leitura: saída V016 · tap admit V001") == ["tap admit"]
    assert english_in("processo 1: BORROWED_CARD (83.611)") == ["BORROWED_CARD"]
    assert english_in("Leitor sem sinal; cartão emprestado (G4); leitores") == []
    assert english_in("Reader NOT responding") == ["reader"]
    assert english_in("Enviar workers.csv e cards.csv; dispatched workers.") == ["workers"]
    assert english_in("portalo/vigia_chefe: V017 · contramestre_geral") == ["contramestre_geral", "vigia_chefe"]
    assert english_in("portaló/vigia-chefe: V017 · contramestre geral") == []
    assert english_in('processo aberto {"event_id": "g-a:41"}') == ['{"…":']


@pytest.mark.timeout(900)  # some 60 pages on a shared machine
def test_every_pt_br_page_of_the_demo_day_is_in_portuguese(demo_day, browser):
    url = demo_day.url.rstrip("/")
    bad: dict[str, list[str]] = {}
    for login in START:
        bad |= _walk(browser, url, login)
    assert bad == {}, bad


def test_the_command_line_prints_amounts_the_pt_br_way(demo_day):
    """``portgate demo`` (pt-BR) prints its pay and billing amounts through Babel (``portgate.l10n``):
    ``R$ 696,60``, never ``R$ 696.60`` as the pages did not."""
    out = demo_day.out
    amounts = re.findall(r"R\$ ?\d[\d.,]*\d", out)
    assert "R$ 696,60" in amounts, out[-3000:]
    assert [a for a in amounts if not re.fullmatch(r"R\$ \d{1,3}(\.\d{3})*,\d\d", a)] == []
