"""Impossible shift rows are refused by the pay core (``pay_shifts_csv``: one ``BadInput`` naming
every bad row, nothing paid); a few tests check that ``portgate pay`` / ``portgate ledger`` turn a
refusal into exit status 2 and one line per bad row (nothing printed for the file), and refuse bad
options. A double assignment is held in the CSV path exactly as in the ledger path."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from pathlib import Path

import pytest

from central.db import make_engine
from central.ledger.migrate import upgrade
from central.ledger.store import insert_events
from central.pay.cli import load_setup
from central.pay.shifts_csv import pay_shifts_csv
from portgate.errors import BadInput
from testkit.cli import run_here
from testkit.shift_events import ShiftEvents, dispatch
from tests.central.pay.test_pay_cli import SHIFTS, Z, loc, run, write_csv

HEADER = "registration,function,ship,berth,period_start,period_end,admit_at,exit_at,meal_worked"
GOOD = "100,vigia,9300001,berthed,2026-03-10T07:00:00-03:00,2026-03-10T13:00:00-03:00," \
       "2026-03-10T06:55:00-03:00,2026-03-10T13:05:00-03:00,false"
_PORT, RULEBOOK, CALENDAR = load_setup(None)  # the port the CLI pays by default


@pytest.fixture
def db_url(migrated_url):
    """This module's ledgers start migrated: each test gets a copy of the session's migrated ledger
    (``migrated_url``, tests/central/conftest.py) on SQLite and on PostgreSQL instead of running the
    migrations itself (they have their own tests: tests/central/ledger/test_migrations.py)."""
    return migrated_url


def csv_file(tmp_path: Path, *rows: str, name: str = "shifts.csv") -> Path:
    path = tmp_path / name
    path.write_text("\n".join([HEADER, GOOD, *rows]) + "\n", encoding="utf-8")
    return path


def row(reg="101", ship="9300001", start="2026-03-10T07:00:00-03:00", end="2026-03-10T13:00:00-03:00",
        admit="2026-03-10T07:00:00-03:00", exit_="2026-03-10T13:00:00-03:00", function="vigia") -> str:
    return f"{reg},{function},{ship},berthed,{start},{end},{admit},{exit_},false"


def refusal(path: Path) -> list[str]:
    """The lines of the ``BadInput`` the pay core raises for ``path``: one per bad row, each
    ``shifts.csv:LINE: reason`` (the rows are named in the reason, so ``where`` is empty)."""
    with pytest.raises(BadInput) as caught:
        pay_shifts_csv(path, RULEBOOK, CALENDAR)
    assert caught.value.where is None
    return caught.value.reason.splitlines()


def refused(path: Path, start: str, *more: str) -> str:
    """``path`` is refused for one row, whose line starts with ``start`` and holds each of ``more``."""
    lines = refusal(path)
    assert len(lines) == 1 and lines[0].startswith(start), lines
    for text in more:
        assert text in lines[0], lines
    return lines[0]


def test_the_same_shift_twice_names_both_rows(tmp_path):
    refused(csv_file(tmp_path, GOOD),
            "shifts.csv:3: shift 100/9300001/2026-03-10/07-13 is given twice (first at shifts.csv:2)")


def test_period_end_not_after_start(tmp_path):
    refused(csv_file(tmp_path, row(end="2026-03-10T07:00:00-03:00")),
            "shifts.csv:3: period_end is not after period_start")


@pytest.mark.parametrize("start,end,text", [
    ("2026-03-10T07:30:00-03:00", "2026-03-10T13:30:00-03:00", "period_start 2026-03-10T07:30:00-03:00 is not on a whole local hour"),
    ("2026-03-10T07:00:00-03:00", "2026-03-10T19:00:00-03:00", "lasts 12:00:00 on the local clock; the ordinary period"),
    ("2026-03-10T07:00:00-03:00", "2026-03-12T07:00:00-03:00", "lasts 2 days, 0:00:00 on the local clock"),
    ("2026-03-10T07:00:00-03:00", "2026-03-10T10:00:00-03:00", "lasts 3:00:00 on the local clock"),
])
def test_a_period_that_is_not_an_ordinary_period_is_refused(tmp_path, start, end, text):
    if "lasts" in text:
        text = f"period {start}..{end} {text}"
    refused(csv_file(tmp_path, row(start=start, end=end, admit=start, exit_=end)),
            f"shifts.csv:3: {text}", "is 6 h (83.611 art. 9)" if "lasts" in text else "")


def test_admit_after_period_end(tmp_path):
    refused(csv_file(tmp_path, row(admit="2026-03-10T13:01:00-03:00", exit_="")),
            "shifts.csv:3: admit_at 2026-03-10T16:01:00+00:00 is after period_end")


def test_exit_before_admit(tmp_path):
    refused(csv_file(tmp_path, row(exit_="2026-03-10T06:00:00-03:00")),
            "shifts.csv:3: exit_at is before admit_at")


def test_exit_more_than_24_hours_after_period_end(tmp_path):
    refused(csv_file(tmp_path, row(exit_="2026-03-11T13:01:00-03:00")),
            "shifts.csv:3: exit_at 2026-03-11T16:01:00+00:00 is more than 24 h after period_end")


def test_exit_24_hours_after_period_end_is_still_paid(tmp_path, capsys):
    code, rows, _ = run(capsys, "pay", "--shifts",
                        str(csv_file(tmp_path, row(exit_="2026-03-11T13:00:00-03:00"))))
    assert code == 0
    total = [r for r in rows if r["rule"] == "TOTAL" and r["registration"] == "101"][0]
    assert total["flags"] == ["EXTENSION_OVER_CAP"]


@pytest.mark.parametrize("field,value,text", [
    ("start", "0001-01-01T07:00:00-03:00", "period_start '0001-01-01T07:00:00-03:00' is outside the years 2000..2100"),
    ("start", "0001-01-01T00:00:00+03:00", "period_start '0001-01-01T00:00:00+03:00' is out of the representable"),
    ("admit", "9999-12-31T23:00:00-03:00", "admit_at '9999-12-31T23:00:00-03:00' is out of the representable"),
    ("exit_", "9999-12-31T12:00:00-03:00", "exit_at '9999-12-31T12:00:00-03:00' is outside the years 2000..2100"),
    ("admit", "1999-12-31T23:59:00+00:00", "admit_at '1999-12-31T23:59:00+00:00' is outside the years 2000..2100"),
])
def test_years_outside_2000_2100_are_refused(tmp_path, field, value, text):
    refused(csv_file(tmp_path, row(**{field: value})), f"shifts.csv:3: {text}")


@pytest.mark.parametrize("ship", ["IMO 9300001", "930001", "93000011", "MSC ANNA", "９３０００００"])
def test_ship_must_be_an_imo_number(tmp_path, ship):
    refused(csv_file(tmp_path, row(ship=ship)), f"shifts.csv:3: ship {ship!r} is not an IMO number")


def test_every_bad_row_is_named_at_once(tmp_path):
    lines = refusal(csv_file(tmp_path, row(ship="x"), row(reg="102", exit_="2026-03-10T06:00:00-03:00"), GOOD))
    assert [line.split(": ")[:2] for line in lines] == [
        ["shifts.csv:3", "ship 'x' is not an IMO number (7 digits)"],
        ["shifts.csv:4", "exit_at is before admit_at"],
        ["shifts.csv:5", "shift 100/9300001/2026-03-10/07-13 is given twice (first at shifts.csv:2)"]]


def test_the_cli_refuses_a_bad_file_with_exit_2_one_line_a_row_and_no_output(tmp_path, capsys):
    code, rows, err = run(capsys, "pay", "--shifts",
                          str(csv_file(tmp_path, row(ship="x"), row(reg="102", exit_="2026-03-10T06:00:00-03:00"))))
    assert code == 2
    assert rows == []  # the whole file is refused: not even the good row 2 is printed
    assert "Traceback" not in err
    assert err.splitlines() == ["portgate: shifts.csv:3: ship 'x' is not an IMO number (7 digits)",
                                "shifts.csv:4: exit_at is before admit_at"], err


# -- one worker on two ships at once: held in both paths, the same rows -------------------------------

DOUBLE = [  # worker 200 on two ships at overlapping times; worker 201 fine; 202 consecutive on one ship
    ("200", "vigia", "9300001", "berthed", dt.date(2026, 3, 10), "07-13", (3, 10, 6, 55), (3, 10, 13, 5)),
    ("200", "vigia", "9300002", "berthed", dt.date(2026, 3, 10), "07-13", (3, 10, 7, 10), None),
    ("201", "vigia", "9300002", "berthed", dt.date(2026, 3, 10), "07-13", (3, 10, 7, 0), (3, 10, 13, 0)),
    ("202", "vigia", "9300001", "berthed", dt.date(2026, 3, 10), "07-13", (3, 10, 7, 0), (3, 10, 13, 20)),
    ("202", "vigia", "9300001", "berthed", dt.date(2026, 3, 10), "13-19", (3, 10, 13, 0), (3, 10, 19, 0)),
]


def _ledger(db_url, shifts):
    upgrade(db_url)
    gates = {ship: ShiftEvents(f"g{ship[-1]}") for ship in {s[2] for s in shifts}}
    evs = []
    for reg, fn, ship, berth, day, period, admit, exit_ in shifts:
        d = dispatch(day, period, ship, berth=berth, function=fn)
        evs.append((loc(admit), gates[ship], "admit", reg, d))
        if exit_:
            evs.append((loc(exit_), gates[ship], "exit", reg, d))
    evs.sort(key=lambda e: e[0])
    engine = make_engine(db_url)
    with engine.begin() as conn:
        insert_events(conn, [g.tap(k, reg, at.astimezone(dt.UTC), d) for at, g, k, reg, d in evs],
                      dt.datetime(2026, 4, 5, tzinfo=dt.UTC))
    engine.dispose()


def test_double_assignment_is_held_in_the_csv_path_as_in_the_ledger(db_url, tmp_path, capsys):
    _ledger(db_url, DOUBLE)
    code, from_csv, _ = run(capsys, "pay", "--shifts", str(write_csv(tmp_path / "s.csv", DOUBLE)))
    assert code == 0
    code, from_db, _ = run(capsys, "pay", "--db", db_url, "--from", "2026-03-10", "--to", "2026-03-10")
    assert code == 0
    held = sorted((r["shift_id"], tuple(r["flags"])) for r in from_csv if r["rule"] == "HELD")
    assert held == [
        ("200/9300001/2026-03-10/07-13", ("DOUBLE_ASSIGNMENT: overlaps 200/9300002/2026-03-10/07-13",)),
        ("200/9300002/2026-03-10/07-13", ("MISSING_EXIT: no exit: closed at the period end",
                                          "DOUBLE_ASSIGNMENT: overlaps 200/9300001/2026-03-10/07-13")),
    ]
    assert all(r["amount"] is None for r in from_csv if r["rule"] == "HELD")
    assert {r["registration"] for r in from_csv if r["rule"] == "TOTAL"} == {"201", "202"}
    key = lambda rows: sorted((r["shift_id"], r["rule"], r["amount"], r.get("due_at"),  # noqa: E731
                               tuple(r.get("flags") or ())) for r in rows)
    assert key(from_db) == key(from_csv)


def test_the_original_shifts_still_agree_with_the_new_checks(tmp_path, capsys):
    code, rows, _ = run(capsys, "pay", "--shifts", str(write_csv(tmp_path / "s.csv", SHIFTS)))
    assert code == 0 and len([r for r in rows if r["rule"] == "TOTAL"]) == len(SHIFTS)


def test_ledger_holds_a_period_that_is_not_ordinary(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'p.db'}"
    _ledger(url, [("300", "vigia", "9300001", "berthed", dt.date(2026, 3, 10), "07-19",
                   (3, 10, 7, 0), (3, 10, 19, 0))])
    code, rows, _ = run(capsys, "pay", "--db", url, "--from", "2026-03-10", "--to", "2026-03-10")
    assert code == 0 and [r["rule"] for r in rows] == ["HELD"]
    assert "the ordinary period of rulebook decreto-83611-1979 is 6 h" in rows[0]["flags"][0]


# -- command-line options: dates and database URLs --------------------------------------------------

@pytest.mark.parametrize("args,text", [
    (["pay", "--from", "0001-01-01", "--to", "9999-12-31"], "--from: '0001-01-01' is outside 2000-01-01..2100-12-31"),
    (["pay", "--from", "2026-01-01", "--to", "9999-12-31"], "--to: '9999-12-31' is outside"),
    (["pay", "--from", "2026-02-01", "--to", "2026-01-01"], "--from: 2026-02-01 is after --to 2026-01-01"),
    (["pay", "--from", "2026-13-01", "--to", "2026-01-01"], "--from: '2026-13-01' is not a date"),
    (["ledger", "shifts", "--from", "0001-01-01", "--to", "2026-01-01"], "--from: '0001-01-01' is outside"),
    (["ledger", "shifts", "--from", "2026-01-01", "--to", "2101-01-01"], "--to: '2101-01-01' is outside"),
])
def test_dates_outside_a_sane_range_are_refused(tmp_path, capsys, args, text, sqlite_ledger):
    url = sqlite_ledger(tmp_path / "l.db")
    code, rows, err = run(capsys, *args[:1 + (args[0] == "ledger")], "--db", url,
                          *args[1 + (args[0] == "ledger"):])
    assert code == 2 and rows == [] and text in err, err


@pytest.mark.parametrize("at", ["0001-01-01T00:00:00+03:00", "9999-12-31T23:00:00-03:00",
                                "2101-01-01T00:00:00+00:00"])
def test_overdue_at_outside_the_range_is_refused(tmp_path, capsys, at, sqlite_ledger):
    url = sqlite_ledger(tmp_path / "l.db")
    code, _, err = run(capsys, "pay", "overdue", "--db", url, "--at", at)
    assert code == 2 and f"--at {at!r}" in err, err


@pytest.mark.parametrize("args", [
    ["pay", "--db", "notaurl", "--from", "2026-03-01", "--to", "2026-03-31"],
    ["pay", "--db", "nosuchdialect://x/y", "--from", "2026-03-01", "--to", "2026-03-31"],
    ["pay", "overdue", "--db", "notaurl"],
    ["pay", "mark-paid", "--db", "notaurl", "a@b"],
    ["ledger", "migrate", "--db", "notaurl"],
    ["ledger", "shifts", "--db", "notaurl", "--from", "2026-03-01", "--to", "2026-03-31"],
])
def test_a_bad_database_url_is_a_clear_error(capsys, args):
    code, _, err = run(capsys, *args)
    assert code == 2 and "--db: '" in err and "is not a database URL" in err, err


@pytest.mark.parametrize("args", [
    ["pay", "--from", "2026-03-01", "--to", "2026-03-31"],
    ["pay", "overdue"],
    ["pay", "mark-paid", "a@b"],
    ["ledger", "shifts", "--from", "2026-03-01", "--to", "2026-03-31"],
])
def test_a_missing_sqlite_file_is_refused_not_created(tmp_path, capsys, args):
    """A mistyped file (its directory there) is refused naming the file; one in a mistyped directory,
    naming the directory; neither is created."""
    sub = args[:2] if args[1] in ("overdue", "mark-paid", "shifts") else args[:1]
    path = tmp_path / "mistyped.db"
    code, rows, err = run(capsys, *sub, "--db", f"sqlite:///{path}", *args[len(sub):])
    assert code == 2 and rows == []
    assert f"--db: SQLite file '{path}' does not exist" in err, err
    path = tmp_path / "mistyped" / "path.db"
    code, rows, err = run(capsys, *sub, "--db", f"sqlite:///{path}", *args[len(sub):])
    assert code == 2 and rows == []
    assert f"--db: the directory '{path.parent}' of SQLite file '{path}' does not exist" in err, err
    assert not path.parent.exists() and not (tmp_path / "mistyped.db").exists()


def test_in_memory_sqlite_is_refused_for_reading(capsys):
    code, _, err = run(capsys, "pay", "overdue", "--db", "sqlite://")
    assert code == 2 and "in-memory SQLite database holds no ledger" in err


def test_migrate_still_creates_a_new_sqlite_file(tmp_path, capsys):
    path = tmp_path / "new.db"
    code, _, _ = run(capsys, "ledger", "migrate", "--db", f"sqlite:///{path}")
    assert code == 0 and path.is_file()


def test_the_installed_command_prints_no_traceback(tmp_path):
    """The reported tracebacks: one line on stderr, exit status 2. The first through a real process
    (the installed entry point), the others through ``app.cli.main`` in this process
    (``testkit.cli.run_here``: an exception the command let out fails the test all the same)."""
    bad = csv_file(tmp_path, row(start="0001-01-01T00:00:00+03:00"))
    for n, args in enumerate((["pay", "--shifts", str(bad)],
                              ["pay", "--db", "notaurl", "--from", "0001-01-01", "--to", "9999-12-31"],
                              ["pay", "--db", f"sqlite:///{tmp_path / 'x.db'}", "--from", "0001-01-01",
                               "--to", "9999-12-31"],
                              ["ledger", "shifts", "--db", f"sqlite:///{tmp_path / 'x.db'}", "--from", "0001-01-01",
                               "--to", "2026-01-01"])):
        proc = (subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True) if n == 0
                else run_here(args))
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stdout == "" and "Traceback" not in proc.stderr and proc.stderr.startswith("portgate: ")
    assert not (tmp_path / "x.db").exists()
