"""``portgate pay`` and ``portgate ledger``: CSV path, ledger path (equal results), overdue, paid,
and bad input naming the row with exit status 2."""

from __future__ import annotations

import csv
import datetime as dt
import json
from zoneinfo import ZoneInfo

import pytest

from central.db import make_engine
from central.ledger.migrate import upgrade
from central.ledger.store import insert_events
from app.cli import main
from testkit.shift_events import ShiftEvents, dispatch

Z = ZoneInfo("America/Sao_Paulo")

# (registration, function, ship, berth, date, period, admit local, exit local or None)
SHIFTS = [
    ("100", "vigia", "9300001", "berthed", dt.date(2026, 3, 10), "07-13", (3, 10, 6, 55), (3, 10, 13, 5)),
    ("101", "vigia_chefe", "9300002", "anchored", dt.date(2026, 3, 15), "19-01", (3, 15, 18, 58), (3, 16, 2, 30)),
    ("102", "vigia", "9300001", "berthed", dt.date(2026, 3, 31), "19-01", (3, 31, 19, 0), (4, 1, 1, 40)),
    ("103", "vigia", "9300003", "berthed", dt.date(2026, 3, 14), "13-19", (3, 14, 13, 0), None),
]


@pytest.fixture
def db_url(migrated_url):
    """This module's ledgers start migrated: each test gets a copy of the session's migrated ledger
    (``migrated_url``, tests/central/conftest.py) on SQLite and on PostgreSQL instead of running the
    migrations itself (they have their own tests: tests/central/ledger/test_migrations.py)."""
    return migrated_url


def loc(parts) -> dt.datetime:
    return dt.datetime(2026, *parts, tzinfo=Z)


def bounds(day, period):
    from central.ledger.shifts import period_bounds
    return period_bounds(day, period, Z)


def write_csv(path, rows=SHIFTS):
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["registration", "function", "ship", "berth", "period_start", "period_end",
                    "admit_at", "exit_at", "meal_worked"])
        for reg, fn, ship, berth, day, period, admit, exit_ in rows:
            start, end = bounds(day, period)
            w.writerow([reg, fn, ship, berth, start.astimezone(Z).isoformat(), end.astimezone(Z).isoformat(),
                        loc(admit).isoformat(), loc(exit_).isoformat() if exit_ else "", "false"])
    return path


def run(capsys, *args) -> tuple[int, list[dict], str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines() if line.startswith("{")], err


def test_pay_from_csv_prints_lines_and_totals(tmp_path, capsys):
    code, rows, _ = run(capsys, "pay", "--shifts", str(write_csv(tmp_path / "shifts.csv")))
    assert code == 0
    totals = {r["registration"]: r["amount"] for r in rows if r["rule"] == "TOTAL"}
    assert totals == {"100": "180.00", "101": "696.60", "102": "261.00", "103": "180.00"}
    p2 = [r for r in rows if r["rule"] == "P2" and r["registration"] == "101"][0]
    assert p2 == {"registration": "101", "work_day": "2026-03-15",
                  "shift_id": "101/9300002/2026-03-15/19-01", "rule": "P2",
                  "article": "83.611 art. 26 a", "amount": "108.00"}


def test_pay_csv_format(tmp_path, capsys):
    assert main(["pay", "--shifts", str(write_csv(tmp_path / "s.csv")), "--format", "csv"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "registration,work_day,shift_id,rule,article,amount,due_at,flags,hold,released"
    assert "101,2026-03-15,101/9300002/2026-03-15/19-01,TOTAL,,696.60," in "\n".join(out)


def test_bad_rows_are_named_and_exit_2(tmp_path, capsys):
    path = write_csv(tmp_path / "bad.csv")
    text = path.read_text().splitlines()
    text[2] = text[2].replace("anchored", "floating")
    text.append("104,estivador,9300001,berthed,2026-03-10T07:00:00-03:00,2026-03-10T13:00:00-03:00,"
                "2026-03-10T07:00:00-03:00,,no")
    text.append("105,vigia,9300001,berthed,2026-03-10T07:00:00,2026-03-10T13:00:00-03:00,x,,no")
    path.write_text("\n".join(text) + "\n")
    code, rows, err = run(capsys, "pay", "--shifts", str(path))
    assert code == 2 and rows == []
    assert "bad.csv:3: berth 'floating'" in err
    assert "bad.csv:6:" in err and "estivador" in err
    assert "bad.csv:7: period_start" in err


def test_missing_column_is_named(tmp_path, capsys):
    path = tmp_path / "cols.csv"
    path.write_text("registration,function\n100,vigia\n")
    code, _, err = run(capsys, "pay", "--shifts", str(path))
    assert code == 2 and "cols.csv:1: header lacks column(s) ship" in err


def _shifts_ledger(db_url) -> None:
    """The ledger at ``db_url`` holding the taps of SHIFTS (migrated)."""
    upgrade(db_url)
    gates = {ship: ShiftEvents(f"g{ship[-1]}") for ship in ("9300001", "9300002", "9300003")}
    evs = []
    for reg, fn, ship, berth, day, period, admit, exit_ in sorted(SHIFTS, key=lambda s: s[6]):
        d = dispatch(day, period, ship, berth=berth, function=fn)
        evs.append((loc(admit), gates[ship], "admit", reg, d))
        if exit_:
            evs.append((loc(exit_), gates[ship], "exit", reg, d))
    evs.sort(key=lambda e: e[0])
    built = [g.tap(kind, reg, at.astimezone(dt.UTC), d) for at, g, kind, reg, d in evs]
    engine = make_engine(db_url)
    with engine.begin() as conn:
        insert_events(conn, built, dt.datetime(2026, 4, 5, tzinfo=dt.UTC))
    engine.dispose()


def test_ledger_pay_equals_csv_pay(db_url, tmp_path, capsys):
    """Events built with wire.events, inserted, reconstructed and paid == the same shifts as CSV."""
    _shifts_ledger(db_url)
    _, from_csv, _ = run(capsys, "pay", "--shifts", str(write_csv(tmp_path / "s.csv")))
    code, from_db, _ = run(capsys, "pay", "--db", db_url, "--from", "2026-03-01", "--to", "2026-03-31")
    assert code == 0
    strip = lambda rows: sorted((r["shift_id"], r["rule"], r["amount"], r.get("due_at")) for r in rows)  # noqa: E731
    assert strip(from_db) == strip(from_csv)
    assert len([r for r in from_db if r["rule"] == "TOTAL"]) == 4

    # statements are stored with their due time: overdue after 48 h, gone once paid
    code, overdue, _ = run(capsys, "pay", "overdue", "--db", db_url, "--at", "2026-03-13T00:00:00+00:00")
    assert [o["shift_id"] for o in overdue] == ["100/9300001/2026-03-10/07-13"]
    code, _, err = run(capsys, "pay", "mark-paid", "--db", db_url, "--ref", "x" * 129,
                       overdue[0]["statement_id"])
    assert code == 2 and len(err.strip().splitlines()) == 1 and "129 characters (at most 128)" in err
    code, _, _ = run(capsys, "pay", "mark-paid", "--db", db_url, "--ref", "lote-1",
                     overdue[0]["statement_id"])
    assert code == 0
    _, overdue, _ = run(capsys, "pay", "overdue", "--db", db_url, "--at", "2026-03-13T00:00:00+00:00")
    assert overdue == []
    code, _, err = run(capsys, "pay", "mark-paid", "--db", db_url, "nope@x")
    assert code == 2 and "unknown: nope@x" in err
    # a second run keeps the paid statement and still lists the rest as overdue later
    run(capsys, "pay", "--db", db_url, "--from", "2026-03-01", "--to", "2026-03-31")
    _, overdue, _ = run(capsys, "pay", "overdue", "--db", db_url, "--at", "2026-05-01T00:00:00+00:00")
    assert len(overdue) == 3


def test_ledger_cli_migrate_and_shifts_list_flags(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'l.db'}"
    code = main(["ledger", "migrate", "--db", url])
    from central.ledger.migrate import head

    assert code == 0 and f"at revision {head()}" in capsys.readouterr().out
    g = ShiftEvents()
    engine = make_engine(url)
    with engine.begin() as conn:
        insert_events(conn, [g.admit("100", loc((3, 10, 7, 0)).astimezone(dt.UTC),
                                     dispatch(dt.date(2026, 3, 10), "07-13"))], dt.datetime.now(dt.UTC))
    engine.dispose()
    code, rows, _ = run(capsys, "ledger", "shifts", "--db", url, "--from", "2026-03-10", "--to", "2026-03-10")
    assert code == 0 and rows[0]["closed_by"] == "period_end"
    assert rows[0]["flags"][0]["flag"] == "MISSING_EXIT" and rows[0]["state"] == "closed"
    # judged at 14:00 local, inside the 2 h exit grace after 13:00: still open, as pay holds it OPEN
    code, rows, _ = run(capsys, "ledger", "shifts", "--db", url, "--from", "2026-03-10", "--to", "2026-03-10",
                        "--at", "2026-03-10T14:00:00-03:00")
    assert code == 0 and rows[0]["state"] == "open" and rows[0]["open_until"] == "2026-03-10T18:00:00+00:00"
    assert [f["flag"] for f in rows[0]["flags"]] == [] and rows[0]["closed_by"] == "none"
    # judged at 06:00 local, before the 07:00 admit: not started, not open
    code, rows, _ = run(capsys, "ledger", "shifts", "--db", url, "--from", "2026-03-10", "--to", "2026-03-10",
                        "--at", "2026-03-10T06:00:00-03:00", "--no-rebuild")
    assert code == 0 and rows[0]["state"] == "not_started" and rows[0]["closed_by"] == "none"
    assert rows[0]["open_until"] is None
    code, _, err = run(capsys, "ledger", "shifts", "--db", url, "--from", "2026-03-10", "--to", "2026-03-10",
                       "--at", "")
    assert code == 2 and "--at" in err
    code, _, err = run(capsys, "ledger", "shifts", "--db", url, "--from", "2026-03-10", "--to", "2026-03-10",
                       "--at", "yesterday")
    assert code == 2 and "--at" in err


def test_held_shift_is_printed_as_held_not_paid(tmp_path, capsys, sqlite_ledger):
    url = sqlite_ledger(tmp_path / "h.db")
    g = ShiftEvents()
    engine = make_engine(url)
    with engine.begin() as conn:
        insert_events(conn, [g.exit("100", loc((3, 10, 13, 0)).astimezone(dt.UTC),
                                    dispatch(dt.date(2026, 3, 10), "07-13"))], dt.datetime.now(dt.UTC))
    engine.dispose()
    code, rows, _ = run(capsys, "pay", "--db", url, "--from", "2026-03-10", "--to", "2026-03-10")
    assert code == 0
    assert [(r["rule"], r["amount"]) for r in rows] == [("HELD", None)]
    assert rows[0]["flags"][0].startswith("NO_ENTRY")


def _early_exit_ledger(tmp_path, sqlite_ledger) -> str:
    """One vigia admitted 06:55 and out at 11:00 on a 07-13 period, the exit flagged EARLY_EXIT."""
    url = sqlite_ledger(tmp_path / "early.db")
    g = ShiftEvents()
    d = dispatch(dt.date(2026, 3, 10), "07-13")
    engine = make_engine(url)
    with engine.begin() as conn:
        insert_events(conn, [g.admit("100", loc((3, 10, 6, 55)).astimezone(dt.UTC), d),
                             g.exit("100", loc((3, 10, 11, 0)).astimezone(dt.UTC), d,
                                    flags=("EARLY_EXIT",))], dt.datetime.now(dt.UTC))
    engine.dispose()
    return url


def test_g9_early_exit_statement_is_computed_and_on_hold_for_review(tmp_path, capsys, sqlite_ledger):
    url = _early_exit_ledger(tmp_path, sqlite_ledger)
    code, rows, _ = run(capsys, "pay", "--db", url, "--from", "2026-03-10", "--to", "2026-03-10")
    assert code == 0
    total = [r for r in rows if r["rule"] == "TOTAL"][0]
    assert total["amount"] == "180.00"  # paid as computed (RULES.md P)
    assert total["hold"] == ("EARLY_EXIT: exit at 11:00, 120 min before the period end 13:00 "
                             "(G9; 83.611 arts. 9, 20 b, e)")
    code, shifts, _ = run(capsys, "ledger", "shifts", "--db", url, "--from", "2026-03-10",
                          "--to", "2026-03-10")
    assert [f["flag"] for f in shifts[0]["flags"]] == ["EARLY_EXIT"]
    code, overdue, _ = run(capsys, "pay", "overdue", "--db", url, "--at", "2026-03-20T00:00:00+00:00")
    assert overdue[0]["hold"].startswith("EARLY_EXIT")
    sid = overdue[0]["statement_id"]

    # not payable while on hold; released by the office, then payable; a rebuild keeps the release
    code, _, err = run(capsys, "pay", "mark-paid", "--db", url, sid)
    assert code == 2 and f"on hold for review (release it first): {sid}" in err
    code, _, err = run(capsys, "pay", "release", "--db", url, "--note", " ", sid)
    assert code == 2 and "note" in err
    code, _, _ = run(capsys, "pay", "release", "--db", url, "--note", "Ana: saída autorizada", sid)
    assert code == 0
    code, _, err = run(capsys, "pay", "release", "--db", url, "--note", "again", sid)
    assert code == 2 and f"not on hold: {sid}" in err
    _, rows, _ = run(capsys, "pay", "--db", url, "--from", "2026-03-10", "--to", "2026-03-10")
    total = [r for r in rows if r["rule"] == "TOTAL"][0]
    assert "hold" not in total  # released: the marker replaces the hold
    assert total["released"]["note"] == "Ana: saída autorizada"
    assert total["released"]["hold"].startswith("EARLY_EXIT: exit at 11:00")
    assert dt.datetime.fromisoformat(total["released"]["at"]).tzinfo is not None
    _, overdue, _ = run(capsys, "pay", "overdue", "--db", url, "--at", "2026-03-20T00:00:00+00:00")
    assert "hold" not in overdue[0]
    assert run(capsys, "pay", "mark-paid", "--db", url, sid)[0] == 0


def test_g9_early_exit_hold_in_csv_output(tmp_path, capsys, sqlite_ledger):
    url = _early_exit_ledger(tmp_path, sqlite_ledger)
    assert main(["pay", "--db", url, "--from", "2026-03-10", "--to", "2026-03-10", "--format", "csv"]) == 0
    rows = list(csv.DictReader(capsys.readouterr().out.splitlines()))
    total = [r for r in rows if r["rule"] == "TOTAL"][0]
    assert total["amount"] == "180.00" and total["hold"].startswith("EARLY_EXIT: exit at 11:00")
    assert all(r["hold"] == "" for r in rows if r["rule"] != "TOTAL")


def test_pay_close_pays_the_month_then_skips_it_when_nothing_changed(db_url, capsys):
    """``portgate pay close``: the first close rebuilds and pays every worker; a second close of the
    same days skips them all and writes nothing; the statements are those of ``portgate pay``."""
    _shifts_ledger(db_url)
    args = ("pay", "close", "--db", db_url, "--from", "2026-03-01", "--to", "2026-03-31",
            "--at", "2026-04-05T12:00:00+00:00")
    code, (first,), _ = run(capsys, *args)
    assert code == 0
    assert (first["workers"], first["rebuilt"], first["paid"], first["shifts"]) == (4, 4, 4, 4)
    assert first["statements"] == first["written"] == 4 and first["superseded"] == 0
    code, (again,), _ = run(capsys, *args)
    assert code == 0
    assert (again["rebuilt"], again["shifts_skipped"], again["paid"], again["pay_skipped"]) == (0, 4, 0, 4)
    assert again["written"] == 0 and again["statements"] == 4
    assert first["read"] == again["read"] == 0  # a first close digests what it wrote; a re-close: nothing written since
    # the full pay run finds the same statements stored: nothing new written
    code, rows, err = run(capsys, "pay", "--db", db_url, "--from", "2026-03-01", "--to", "2026-03-31")
    assert code == 0 and "stored 0 statement version(s)" in err
    assert len([r for r in rows if r["rule"] == "TOTAL"]) == 4


def test_pay_close_refuses_a_missing_ledger_and_a_bad_range(tmp_path, capsys):
    missing = f"sqlite:///{tmp_path / 'none.db'}"
    code, _, err = run(capsys, "pay", "close", "--db", missing, "--from", "2026-03-01", "--to", "2026-03-31")
    assert code == 2 and len(err.strip().splitlines()) == 1 and not (tmp_path / "none.db").exists()
    code, _, err = run(capsys, "pay", "close", "--db", missing, "--from", "2026-03-31", "--to", "2026-03-01")
    assert code == 2 and len(err.strip().splitlines()) == 1
