"""Reports with pictures over the real app (SQLite and PostgreSQL): R6 sizing over 12 months
from a stored escala, fairness of the month, coverage gaps per ship, flags per week; every chart
an SVG rendered on the server (pygal) with its own restrictive CSP, the numbers in a table."""

from __future__ import annotations

import datetime as dt
import xml.etree.ElementTree as ET

import pytest
from sqlalchemy.orm import Session

from central.calls.schema import coverage_alarms
from central.calls.service import ShipCall, save_call
from central.rotation.engine import Requisition
from central.rotation.service import dispatch_day
from portgate.records import Berth, Voyage
from tests.central.web.conftest import engine_of, logged_in
from tests.central.web.events import add_flag_event

T0 = dt.datetime(2026, 3, 10, 12, 0, tzinfo=dt.UTC)


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request, tmp_path, ledgers):
    """The web suite's ``engine``; a test that uses ``data`` starts with the demo registry in it (a
    copy of a ledger the session filled once: tests/central/web/conftest.py's FILLS, issue 32)."""
    yield from engine_of(request, tmp_path, ledgers, "demo_registry" if "data" in request.fixturenames else None)


@pytest.fixture
def data(engine, users, clock):
    with Session(engine) as s, s.begin():
        for day in (dt.date(2026, 3, 10), dt.date(2026, 3, 11)):
            req = Requisition(ref=f"r{day}", date=day, period="07-13", operator="Op A", ship="9300001",
                              ship_name="Aurora", voyage=Voyage.LONG_HAUL, berth=Berth.BERTHED, gate_id="g1",
                              post="portalo", function="vigia", workers=10, category="vigia")
            dispatch_day(s, day, [req], actor="t", now=T0)
        call = save_call(s, ShipCall("9300009", "Star", "long_haul", "berthed", "g9",
                                     dt.datetime(2026, 3, 1, tzinfo=dt.UTC), None), actor="t", now=T0)
        s.execute(coverage_alarms.insert().values(call_id=call, ship="9300009", gate_id="g9",
                                                  period_start=dt.datetime(2026, 3, 2, 10, tzinfo=dt.UTC),
                                                  raised_at=dt.datetime(2026, 3, 2, 10, 30, tzinfo=dt.UTC),
                                                  ended_at=dt.datetime(2026, 3, 2, 13, tzinfo=dt.UTC)))
    add_flag_event(engine, flags=["BORROWED_CARD"], at=dt.datetime(2026, 3, 10, 12, tzinfo=dt.UTC))
    add_flag_event(engine, flags=["EARLY_EXIT"], at=dt.datetime(2026, 3, 17, 12, tzinfo=dt.UTC))
    return engine


def test_the_reports_page_has_every_table_beside_its_chart(app, data):
    c, _ = logged_in(app, "auditor")
    r = c.get("/reports", params={"month": "2026-03"})
    assert r.status_code == 200
    for name in ("sizing", "hours", "fairness", "coverage", "flags"):
        assert f'src="/reports/chart/{name}.svg?month=2026-03"' in r.text
    sizing = r.text.split('id="r-sizing"')[1].split("</section>")[0]
    # March's trailing 12 months hold 20 shifts over 40 registered vigias: 20/12/40 = 0.04, with the
    # decimal comma on a pt-BR page
    # decimal comma on a pt-BR page; the month as a pt-BR reader writes it (portgate.l10n.month)
    assert ("<td data-month=\"2026-03\">03/2026</td><td class=\"num\">20</td><td class=\"num\">40</td>"
            "<td class=\"num\">0,04</td>") in sizing
    assert "<td class=\"num\">0,1</td></tr>" in sizing and "0.04" not in sizing  # 20/12 ÷ 25 workers: 0.1
    fairness = r.text.split('id="r-fairness"')[1].split("</section>")[0]
    assert "dispersão 1 · menor dispersão possível 1" in fairness  # 20 shifts among 40: round robin
    coverage = r.text.split('id="r-coverage"')[1].split("</section>")[0]
    assert "<td>9300009</td><td class=\"num\">1</td><td class=\"num\">3</td>" in coverage
    flags = r.text.split('id="r-flags"')[1].split("</section>")[0]
    # a week as a person reads it (portgate.l10n.week, issue 33); the ISO week stays in the attribute
    assert '<td class="nb" data-week="2026-W11">semana de 09/03 a 15/03/2026</td>' in flags
    assert '<td class="nb" data-week="2026-W12">semana de 16/03 a 22/03/2026</td>' in flags
    assert "cartão emprestado (G4) 1" in flags and ">2026-W11<" not in flags
    assert c.get("/reports", params={"month": "março"}).status_code == 400


@pytest.mark.parametrize("name", ["sizing", "hours", "fairness", "coverage", "flags"])
def test_each_chart_is_an_svg_with_its_own_csp(app, data, name):
    c, _ = logged_in(app, "inspector")
    r = c.get(f"/reports/chart/{name}.svg", params={"month": "2026-03"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("image/svg+xml")
    assert r.headers["content-security-policy"].startswith("default-src 'none'")
    root = ET.fromstring(r.content)
    assert root.tag.endswith("svg")
    assert c.get("/reports/chart/nope.svg").status_code == 404


def test_the_sizing_chart_plots_the_months_figures(app, data):
    c, _ = logged_in(app, "office")
    svg = c.get("/reports/chart/sizing.svg", params={"month": "2026-03"}).text
    assert "2025-04" in svg and "2026-03" in svg and ">0,04<" in svg  # the page's decimal comma


def test_english_reports_write_the_decimal_point(app, data):
    c, token = logged_in(app, "auditor")
    assert c.post("/lang", data={"csrf_token": token, "lang": "en"}).status_code == 303
    sizing = c.get("/reports", params={"month": "2026-03"}).text.split('id="r-sizing"')[1].split("</section>")[0]
    assert '<td class="num">0.04</td>' in sizing and "0,04" not in sizing
    assert ">0.04<" in c.get("/reports/chart/sizing.svg", params={"month": "2026-03"}).text


def test_the_flags_chart_names_each_flag_and_its_title_in_the_pages_language(app, data):
    """The legend showed the raw code (``BORROWED_CARD``) and the titles were pt-BR on English
    pages (issue 33 item 9); the code stays in the CSV export."""
    c, token = logged_in(app, "office")
    svg = c.get("/reports/chart/flags.svg", params={"month": "2026-03"}).text
    assert "cartão emprestado (G4)" in svg and "BORROWED_CARD" not in svg
    assert c.post("/lang", data={"csrf_token": token, "lang": "en"}).status_code == 303
    svg = c.get("/reports/chart/flags.svg", params={"month": "2026-03"}).text
    assert "borrowed card (G4)" in svg and "Flags per week" in svg
    assert "Rotation: shifts per worker in 2026-03" in c.get("/reports/chart/fairness.svg",
                                                             params={"month": "2026-03"}).text


def test_the_flag_report_shows_weeks_as_people_read_them_and_the_csv_keeps_iso_weeks(app, data):
    """``2026-W11`` read as a code on the flag report (issue 33): the page and the chart's axis say
    the week's days in the page's language, the CSV export keeps the ISO week for a script."""
    c, token = logged_in(app, "inspector")
    svg = c.get("/reports/chart/flags.svg", params={"month": "2026-03"}).text
    assert "09/03–15/03" in svg and "16/03–22/03" in svg and "2026-W11" not in svg
    rows = c.get("/reports/flags.csv", params={"month": "2026-03"}).text.strip().splitlines()[1:]
    assert [r.split(",")[0] for r in rows] == ["2026-W11", "2026-W12"]
    assert c.post("/lang", data={"csrf_token": token, "lang": "en"}).status_code == 303
    flags = c.get("/reports", params={"month": "2026-03"}).text.split('id="r-flags"')[1].split("</section>")[0]
    assert '<td class="nb" data-week="2026-W11">week of Mar 9 – Mar 15, 2026</td>' in flags
    assert "Mar 9–Mar 15" in c.get("/reports/chart/flags.svg", params={"month": "2026-03"}).text
    rows = c.get("/reports/flags.csv", params={"month": "2026-03"}).text.strip().splitlines()[1:]
    assert [r.split(",")[0] for r in rows] == ["2026-W11", "2026-W12"]
