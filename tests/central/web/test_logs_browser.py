"""The read log and the audit log (issue 34 item 12) in a real chromium on the office app served
by uvicorn over SQLite (tests/central/web/live.py) with the RULES.md P worked examples' taps: the
clerk searches by worker, sees the taps with the worker's name, downloads the CSV of everything
found, searches a card typed in another UID form, opens the audit log of a worker; a refused
search keeps the typed values; no serious axe violation at 1280 and 390 px."""

from __future__ import annotations

import csv
import io

import pytest

from testkit.axe import axe_violations, describe
from tests.central.web.live import LiveOffice, log_in
from tests.central.web.paydata import seed_pay

DAYS = "from=2026-03-01&to=2026-04-01"


@pytest.fixture(scope="module")
def office(tmp_path_factory):
    o = LiveOffice(tmp_path_factory.mktemp("logs-office")).start()
    try:
        seed_pay(o.engine)
        yield o
    finally:
        o.stop()


@pytest.mark.parametrize("width", [1280, 390])
def test_the_clerk_searches_the_read_log_exports_it_and_reads_the_audit_log(office, browser, width, tmp_path):
    context = browser.new_context(viewport={"width": width, "height": 900}, bypass_csp=True, accept_downloads=True)
    try:
        pg = context.new_page()
        pg.set_default_timeout(20_000)
        log_in(pg, office)
        pg.goto(f"{office.url}/reads?{DAYS}")
        assert pg.locator("#reads tbody tr").count() == 8  # 4 shifts: an admit and an exit each
        pg.get_by_label("Matrícula").fill("V017")
        with pg.expect_navigation():  # a GET form: read the rows of the new page
            pg.get_by_role("button", name="Filtrar").click()
        rows = pg.locator("#reads tbody tr")
        assert rows.count() == 2 and "Quitéria Almeida" in rows.first.inner_text()
        assert [rows.nth(i).get_attribute("data-decision") for i in range(2)] == ["exit", "admit"]
        assert axe_violations(pg, impacts=("serious", "critical")) == [], describe(axe_violations(pg))
        pg.screenshot(path=str(tmp_path / f"reads-{width}.png"), full_page=True)
        with pg.expect_download() as info:
            pg.locator("#reads-csv").click()
        text = (tmp_path / "reads.csv")
        info.value.save_as(text)
        found = list(csv.reader(io.StringIO(text.read_text(encoding="utf-8"))))
        assert found[0][4] == "matrícula" and [r[4] for r in found[1:]] == ["V017", "V017"]
        pg.get_by_label("Matrícula").fill("")
        pg.get_by_label("Cartão").fill("C3B2A104")  # the demo card 04A1B2C3 read reversed
        with pg.expect_navigation():  # a GET form: read the rows of the new page
            pg.get_by_role("button", name="Filtrar").click()
        assert pg.locator("#reads tbody tr").count() == 8
        pg.get_by_label("Cartão").fill("zz")
        with pg.expect_navigation():  # a GET form: read the rows of the new page
            pg.get_by_role("button", name="Filtrar").click()
        assert "não é um UID de cartão" in pg.locator('[data-field="card"]').inner_text()
        assert pg.get_by_label("Cartão").input_value() == "zz"
        pg.goto(f"{office.url}/audit?from=2025-01-01&to=2030-12-31&subject=V017")
        assert pg.locator('#audit tbody tr[data-action="worker.import"]').count() == 1
        assert axe_violations(pg, impacts=("serious", "critical")) == []
        pg.screenshot(path=str(tmp_path / f"audit-{width}.png"), full_page=True)
    finally:
        context.close()
