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

from tests.central.web.demo_pages import DEMO_PAGES
from tests.pt_words import english_in

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
    """``login``'s pages from ``START[login]``, each page's links followed once; each page loaded at
    1280 px once for every check of the session (tests/central/web/demo_pages.py)."""
    bad: dict[str, list[str]] = {}
    queue, seen, shapes = list(START[login]), set(), collections.Counter()
    while queue:
        path = queue.pop(0)
        if path in seen:
            continue
        seen.add(path)
        print(login, path, flush=True)  # the walk so far, shown when it fails
        report = DEMO_PAGES.visit(browser, url, login, 1280, path, "text")
        assert report.status in (200, 403), (login, path, report.status)
        if report.status != 200:
            continue
        if report.english:
            bad[f"{login} {path}"] = report.english
        for href in report.links:
            parts = urlsplit(href)
            if parts.netloc or not parts.path.startswith("/") or SKIP.search(parts.path):
                continue
            link = parts.path + (f"?{parts.query}" if parts.query else "")
            shape = re.sub(r"\d+", "N", parts.path)
            if link not in seen and link not in queue and shapes[shape] < SAME_SHAPE:
                shapes[shape] += 1
                queue.append(link)
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
