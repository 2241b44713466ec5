"""R8 (DL 2.032 art. 6) through ``portgate production import`` and ``portgate rotation hours`` on a
real SQLite file: the monthly return of hours per stevedore and the semester verdict."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from app.cli import main
from central.production.hours import semester_verdict
from tests.central.registry.conftest import WORKER_COLUMNS, worker_rows, write_csv


@pytest.fixture
def ledger(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'office.db'}"
    write_csv(tmp_path / "workers.csv", WORKER_COLUMNS, worker_rows(4, category="estivador", prefix="S"))
    assert main(["registry", "import", "--db", url, "--workers", str(tmp_path / "workers.csv")]) == 0
    (tmp_path / "gang.csv").write_text(
        "gang_id,registration,role,minutes_worked,boarded\n"
        "T1,S001,stevedore,300,yes\nT1,S002,stevedore,300,yes\nT1,S003,stevedore,,no\n"
        "T2,S001,stevedore,330,yes\nT3,S001,stevedore,600,yes\n", encoding="utf-8")
    (tmp_path / "tally.csv").write_text(
        "gang_id,ship,date,period,cargo_class,quantity\nT1,9123456,2026-03-10,07-13,general,10\n"
        "T2,9123456,2026-03-11,07-13,general,10\nT3,9123456,2026-07-01,07-13,general,10\n", encoding="utf-8")
    (tmp_path / "tariffs.csv").write_text("cargo_class,unit,labour_tariff,effective_from\n"
                                          "general,t,4.50,2026-01-01\n", encoding="utf-8")
    (tmp_path / "stops.csv").write_text("gang_id,kind,minutes\nT3,anchorage_travel,40\n", encoding="utf-8")
    assert main(["production", "import", "--db", url, "--rulebook", "dl-2032-1940",
                 "--gang", str(tmp_path / "gang.csv"), "--tally", str(tmp_path / "tally.csv"),
                 "--tariffs", str(tmp_path / "tariffs.csv"), "--interruptions", str(tmp_path / "stops.csv")]) == 0
    capsys.readouterr()
    return url


def _run(capsys, *args):
    code = main(["rotation", "hours", *args])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 else err)


def test_monthly_return_of_hours_per_stevedore(ledger, capsys):
    code, report = _run(capsys, "--db", ledger, "--month", "2026-03")
    assert code == 0 and report["rule"] == "R8" and report["article"] == "DL 2.032 art. 6"
    # S001: 300 + 330 min = 10.50 h in 2 gangs; S002: 300 min = 5.00 h; S003 did not board
    assert report["stevedores"] == [{"registration": "S001", "gangs": 2, "hours": "10.50"},
                                    {"registration": "S002", "gangs": 1, "hours": "5.00"}]
    assert report["total_hours"] == "15.50"


def test_semester_average_and_verdict(ledger, capsys):
    code, report = _run(capsys, "--db", ledger, "--semester", "2026-1")
    # R8 as amended: 4 stevedores with no registration date count from the ledger's first month
    # (March, T1): month-end counts 0, 0, 4, 4, 4, 4, mean 16 ÷ 6 = 2.67; 15.50 h ÷ 2.666… =
    # 5.8125 -> 5.81 h: not above 1,000 h, so the registry is closed
    assert code == 0 and report["total_hours"] == "15.50" and report["registered"] == "2.67"
    assert [m["registered"] for m in report["months"]] == [0, 0, 4, 4, 4, 4]
    assert report["average_hours"] == "5.81" and report["verdict"] == "close"
    assert [m["total_hours"] for m in report["months"]] == ["0.00", "0.00", "15.50", "0.00", "0.00", "0.00"]
    code, report = _run(capsys, "--db", ledger, "--semester", "2026-2")
    # T3 on 2026-07-01 belongs to the second semester: 600 min + 40 min of E7 travel = 10.67 h
    assert report["total_hours"] == "10.67"


def test_verdict_enlarge_and_the_exact_limit():
    # 3 registered, 3,100 h: 1,033.33 h each > 1,000 -> enlarge (the figure and the verdict, no
    # number of places: RULES.md R8)
    assert semester_verdict(Decimal(3100 * 60), Decimal(3)) == {"average_hours": "1033.33", "verdict": "enlarge"}
    # exactly 1,000 h each is not "superior": closed; a mean head count of 4.5: 4,500 h -> 1,000 h
    assert semester_verdict(Decimal(3000 * 60), Decimal(3))["verdict"] == "close"
    assert semester_verdict(Decimal(4500 * 60), Decimal("4.5"))["verdict"] == "close"
    assert semester_verdict(Decimal(60), Decimal(0))["verdict"] == "no stevedores registered"


@pytest.mark.parametrize("args", [["--month", "2026-13"], ["--semester", "2026-3"], []])
def test_bad_period_exit_2(ledger, capsys, args):
    code, err = _run(capsys, "--db", ledger, *args)
    assert code == 2 and ("--month" in err or "--semester" in err)


def test_one_stevedores_own_return_per_month_counts_the_anchorage_travel(ledger):
    """``worker_months`` (the worker's shifts page): his months of the period, each whole, the
    figure of the office's monthly return; T3 (July) at anchorage: 600 min aboard + 40 min of
    travel (E7, art. 16: work time) = 10.67 h; a month without work is 0."""
    import datetime as dt

    from sqlalchemy.orm import Session

    from central.db import make_engine
    from central.production.hours import monthly_return, worker_months
    from portgate.errors import BadInput

    engine = make_engine(ledger)
    try:
        with Session(engine) as s:
            months = worker_months(s, "S001", dt.date(2026, 3, 11), dt.date(2026, 7, 1))
            assert months == [{"month": "2026-03", "gangs": 2, "hours": "10.50"},
                              {"month": "2026-04", "gangs": 0, "hours": "0.00"},
                              {"month": "2026-05", "gangs": 0, "hours": "0.00"},
                              {"month": "2026-06", "gangs": 0, "hours": "0.00"},
                              {"month": "2026-07", "gangs": 1, "hours": "10.67"}]
            office = {r["registration"]: r["hours"] for r in monthly_return(s, "2026-07")["stevedores"]}
            assert office["S001"] == "10.67"
            assert worker_months(s.connection(), "S002", dt.date(2026, 3, 1), dt.date(2026, 3, 31)) == [
                {"month": "2026-03", "gangs": 1, "hours": "5.00"}]  # his own only
            assert worker_months(s, "S003", dt.date(2026, 3, 1), dt.date(2026, 3, 31)) == [
                {"month": "2026-03", "gangs": 0, "hours": "0.00"}]  # in the gang, did not board
            with pytest.raises(BadInput):
                worker_months(s, "S001", dt.date(2026, 3, 2), dt.date(2026, 3, 1))
    finally:
        engine.dispose()
