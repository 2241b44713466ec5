"""The CSV exports of the alarm list, of each table of the reports page and of the day's escala
(issue 34 item 12) over the real app (SQLite and PostgreSQL): each linked from its page, pt-BR
headers on a pt-BR page and English ones on an English page, the page's rows (names beside
registrations, times in UTC and in port time, numbers as numbers), a bad month or date refused."""

from __future__ import annotations

import csv
import datetime as dt
import io

import pytest
from sqlalchemy.orm import Session

from central.calls import acks
from central.calls.schema import coverage_alarms
from central.calls.service import ShipCall, save_call
from central.ledger.schema import reader_alarms
from central.rotation.engine import Requisition
from central.rotation.service import dispatch_day
from portgate.records import Berth, Voyage
from tests.central.web.conftest import engine_of, logged_in

T0 = dt.datetime(2026, 3, 10, 12, 0, tzinfo=dt.UTC)
DAY = dt.date(2026, 3, 10)


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request, tmp_path, ledgers):
    """The web suite's ``engine``; a test that uses ``data`` starts with the demo registry in it (a
    copy of a ledger the session filled once: tests/central/web/conftest.py's FILLS, issue 32)."""
    yield from engine_of(request, tmp_path, ledgers, "demo_registry" if "data" in request.fixturenames else None)


@pytest.fixture
def data(engine, users, clock):
    with Session(engine) as s, s.begin():
        req = Requisition(ref="r1", date=DAY, period="07-13", operator="Op A", ship="9300001", ship_name="Aurora",
                          voyage=Voyage.LONG_HAUL, berth=Berth.BERTHED, gate_id="g1", post="portalo",
                          function="vigia", workers=2, category="vigia")
        dispatch_day(s, DAY, [req], actor="t", now=T0)
        call = save_call(s, ShipCall("9300009", "Star", "long_haul", "berthed", "g9",
                                     dt.datetime(2026, 3, 1, tzinfo=dt.UTC), None), actor="t", now=T0)
        alarm = s.execute(coverage_alarms.insert().values(
            call_id=call, ship="9300009", gate_id="g9", period_start=dt.datetime(2026, 3, 2, 10, tzinfo=dt.UTC),
            raised_at=dt.datetime(2026, 3, 2, 10, 30, tzinfo=dt.UTC),
            ended_at=dt.datetime(2026, 3, 2, 13, tzinfo=dt.UTC))).inserted_primary_key[0]
        s.execute(reader_alarms.insert().values(gate_id="g2", reader_id="r1", kind="control",
                                                raised_at=dt.datetime(2026, 3, 3, 9, tzinfo=dt.UTC), ended_at=None,
                                                detail="leitor sem resposta"))
        acks.acknowledge(s, "coverage", alarm, "vigia chamado", actor="web:office", now=T0)
    return engine


def _csv(r) -> list[list[str]]:
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv"), r.text[:300]
    assert r.headers["content-disposition"].startswith("attachment; filename=")
    return list(csv.reader(io.StringIO(r.text)))


def _english(app, role="office"):
    c, token = logged_in(app, role)
    assert c.post("/lang", data={"csrf_token": token, "lang": "en"}).status_code == 303
    return c


def test_the_alarm_export_is_linked_and_lists_both_kinds_with_the_acknowledgement(app, data):
    c, _ = logged_in(app, "office")
    assert 'id="alarms-csv" href="/alarms.csv"' in c.get("/alarms").text
    rows = _csv(c.get("/alarms.csv"))
    assert rows[0][:4] == ["tipo", "id", "navio", "nome_do_navio"] and rows[0][-1] == "comentário"
    cov = next(r for r in rows if r[0] == "coverage")
    assert cov[2:5] == ["9300009", "Star", "g9"] and cov[7] == "2026-03-02T10:30:00+00:00"
    assert cov[8] == "02/03/2026 07:30:00" and cov[10] == "02/03/2026 10:00:00"  # port time (UTC-3)
    assert cov[-3:] == ["web:office", T0.isoformat(), "vigia chamado"]
    rdr = next(r for r in rows if r[0] == "reader")
    assert rdr[4:6] == ["g2", "r1"] and rdr[9] == "" and rdr[11] == "leitor sem resposta" and rdr[-1] == ""
    assert len(rows) == 3
    en = _csv(_english(app).get("/alarms.csv"))
    assert en[0][:4] == ["kind", "id", "ship", "ship_name"] and en[1:] == rows[1:]


def test_each_report_table_is_exported_as_the_page_shows_it(app, data):
    c, _ = logged_in(app, "auditor")
    page = c.get("/reports", params={"month": "2026-03"}).text
    for name in ("sizing", "hours", "fairness", "coverage", "flags"):
        assert f'href="/reports/{name}.csv?month=2026-03"' in page
    sizing = _csv(c.get("/reports/sizing.csv", params={"month": "2026-03"}))
    assert sizing[0] == ["mês", "turnos_12_meses", "registrados", "média_mês_por_trabalhador",
                         "trabalhadores_para_25"]
    assert len(sizing) == 13 and sizing[-1][:3] == ["2026-03", "2", "40"]  # 12 months; 2 shifts, 40 vigias
    fairness = _csv(c.get("/reports/fairness.csv", params={"month": "2026-03"}))
    assert sum(int(r[2]) for r in fairness[1:]) == 2 and {r[0] for r in fairness[1:]} == {"2026-03"}
    coverage = _csv(c.get("/reports/coverage.csv", params={"month": "2026-03"}))
    assert coverage == [["navio", "alarmes", "horas_sem_vigia"], ["9300009", "1", "3.0"]]  # 10:00 to 13:00; a point, not a comma
    en = _english(app, "auditor")
    assert _csv(en.get("/reports/coverage.csv", params={"month": "2026-03"}))[0] == ["ship", "alarms",
                                                                                     "hours_uncovered"]
    r = en.get("/reports/hours.csv", params={"month": "2026-03"})
    assert _csv(r)[0][0] == "month" and 'filename="hours-2026-03.csv"' in r.headers["content-disposition"]


@pytest.mark.parametrize("path, params, status", [
    ("/reports/nothing.csv", {"month": "2026-03"}, 404),
    ("/reports/sizing.csv", {"month": "03/2026"}, 400),
    ("/escala.csv", {"date": "10/03/2026"}, 400),
])
def test_an_unknown_report_or_a_bad_month_or_date_is_refused_with_a_page(app, data, path, params, status):
    c, _ = logged_in(app, "office")
    r = c.get(path, params=params)
    assert r.status_code == status and r.headers["content-type"].startswith("text/html")


def test_the_day_s_escala_is_exported_with_names_beside_registrations(app, data):
    c, _ = logged_in(app, "inspector")
    assert 'id="escala-csv" href="/escala.csv?date=2026-03-10"' in c.get("/escala", params={"date": "2026-03-10"}).text
    rows = _csv(c.get("/escala.csv", params={"date": "2026-03-10"}))
    assert rows[0] == ["data", "período", "navio", "nome_do_navio", "portaló", "posto", "função", "matrícula", "nome",
                       "operador"]
    assert len(rows) == 3 and all(r[:7] == ["2026-03-10", "07-13", "9300001", "Aurora", "g1", "portalo", "vigia"]
                                  and r[-1] == "Op A" for r in rows[1:])
    assert all(r[7].startswith("V") and r[8] and r[8] != r[7] for r in rows[1:])  # a name beside each registration
    en = _csv(_english(app).get("/escala.csv", params={"date": "2026-03-10"}))
    assert en[0][7:9] == ["registration", "name"] and en[1:] == rows[1:]
    assert _csv(c.get("/escala.csv", params={"date": "2026-03-11"})) == [rows[0]]  # a day without escala: the header
