"""Shift reconstruction from gate events: pure core, then through the events table on SQLite and
PostgreSQL (``db_url`` runs each DB test on both)."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import func, select

from central.db import make_engine
from central.ledger.migrate import head, upgrade
from central.ledger.schema import events
from central.ledger.shifts import reconstruct
from central.ledger.store import insert_events, read_shifts, rebuild_shifts
from central.pay.statements_store import watch_shift
from testkit.shift_events import ShiftEvents, dispatch

Z = ZoneInfo("America/Sao_Paulo")
NOW = dt.datetime(2026, 4, 1, tzinfo=dt.UTC)
DAY = dt.date(2026, 3, 10)


def t(*args) -> dt.datetime:
    return dt.datetime(*args, tzinfo=Z).astimezone(dt.UTC)


def codes(shift) -> set[str]:
    return {f.code for f in shift.flags}


# -- pure core ------------------------------------------------------------------------------------

def test_admit_exit_pair_makes_one_shift_with_period_from_the_dispatch():
    g = ShiftEvents()
    d = dispatch(DAY, "07-13")
    admit, exit_ = g.admit("100", t(2026, 3, 10, 6, 55), d), g.exit("100", t(2026, 3, 10, 13, 5), d)
    [s] = reconstruct([exit_, admit], Z)  # any order in, time order out
    assert (s.admit_at, s.exit_at, s.closed_by) == (t(2026, 3, 10, 6, 55), t(2026, 3, 10, 13, 5), "exit")
    assert (s.period_start, s.period_end) == (t(2026, 3, 10, 7), t(2026, 3, 10, 13))
    assert s.shift_id == "100/9300001/2026-03-10/07-13" and s.flags == () and not s.held


def test_admit_without_exit_is_closed_at_period_end_and_flagged():
    g = ShiftEvents()
    [s] = reconstruct([g.admit("100", t(2026, 3, 10, 19), dispatch(DAY, "19-01"))], Z)
    assert s.closed_by == "period_end" and s.exit_at is None
    assert codes(s) == {"MISSING_EXIT"} and not s.held
    assert watch_shift(s).exit_at is None


def test_exit_without_admit_is_held():
    g = ShiftEvents()
    [s] = reconstruct([g.exit("100", t(2026, 3, 10, 13), dispatch(DAY, "07-13"))], Z)
    assert "NO_ENTRY" in codes(s) and s.held


def test_cross_gate_conflict_flags_both_shifts_and_drops_neither():
    g1, g2 = ShiftEvents("g1"), ShiftEvents("g2")
    a, b = dispatch(DAY, "07-13", "9300001"), dispatch(DAY, "07-13", "9300002")
    found = reconstruct([
        g1.admit("100", t(2026, 3, 10, 7), a), g1.exit("100", t(2026, 3, 10, 13), a),
        g2.admit("100", t(2026, 3, 10, 9), b), g2.exit("100", t(2026, 3, 10, 12), b),
    ], Z)
    assert len(found) == 2
    assert all("DOUBLE_ASSIGNMENT" in codes(s) and s.held for s in found)


def test_consecutive_shifts_on_two_ships_are_not_a_conflict():
    g1, g2 = ShiftEvents("g1"), ShiftEvents("g2")
    a, b = dispatch(DAY, "07-13", "9300001"), dispatch(DAY, "13-19", "9300002")
    found = reconstruct([
        g1.admit("100", t(2026, 3, 10, 7), a), g1.exit("100", t(2026, 3, 10, 13), a),
        g2.admit("100", t(2026, 3, 10, 13), b), g2.exit("100", t(2026, 3, 10, 19), b),
    ], Z)
    assert [s.flags for s in found] == [(), ()]


def test_untrusted_clock_is_placed_by_boot_sequence_and_monotonic_time():
    g = ShiftEvents()
    d = dispatch(DAY, "07-13")
    admit = g.admit("100", t(2026, 3, 10, 7), d)  # trusted anchor
    late = g.exit("100", t(2026, 3, 10, 14, 0), d, trusted=False)  # clock says 1970
    [s] = reconstruct([late, admit], Z)
    assert late.occurred_at.year == 1970
    assert s.exit_at == t(2026, 3, 10, 14, 0)
    assert "CLOCK_PLACED" in codes(s) and not s.held


def test_untrusted_clock_without_anchor_in_its_boot_is_held():
    g = ShiftEvents()
    d = dispatch(DAY, "07-13")
    [s] = reconstruct([g.admit("100", t(2026, 3, 10, 7), d, trusted=False),
                       g.exit("100", t(2026, 3, 10, 13), d, trusted=False)], Z)
    assert "CLOCK_UNPLACEABLE" in codes(s) and s.held


def test_trusted_clock_going_backwards_is_held():
    g = ShiftEvents()
    d = dispatch(DAY, "07-13")
    admit = g.admit("100", t(2026, 3, 10, 7), d)
    back = g.exit("100", t(2026, 3, 10, 13), d, trusted=True)
    back = type(back)(**{**{f: getattr(back, f) for f in back.__struct_fields__},
                         "occurred_at": t(2026, 3, 10, 6)})
    [s] = reconstruct([admit, back], Z)
    assert "CLOCK_BACKWARDS" in codes(s) and s.held


def test_non_tap_and_deny_events_make_no_shift():
    g = ShiftEvents()
    assert reconstruct([g.tap("deny", "100", t(2026, 3, 10, 7), dispatch(DAY, "07-13"))], Z) == []


# -- through the database (SQLite and PostgreSQL) ------------------------------------------------

def test_migrations_create_every_table_and_are_idempotent(db_url):
    assert upgrade(db_url) == head()
    assert upgrade(db_url) == head()
    engine = make_engine(db_url)
    from sqlalchemy import inspect
    names = set(inspect(engine).get_table_names())
    engine.dispose()
    assert {"events", "shifts", "shift_flags", "statements", "statement_lines"} <= names


def test_rebuild_from_events_table_pairs_flags_and_is_repeatable(migrated_url):
    db_url = migrated_url  # at head: a copy of the session's migrated ledger
    engine = make_engine(db_url)
    g1, g2 = ShiftEvents("g1"), ShiftEvents("g2")
    a, b = dispatch(DAY, "07-13", "9300001"), dispatch(DAY, "07-13", "9300002")
    evs = [
        g1.admit("100", t(2026, 3, 10, 7), a), g1.admit("200", t(2026, 3, 10, 7), a),
        g2.admit("100", t(2026, 3, 10, 8), b),                       # conflict, no exit
        g1.exit("100", t(2026, 3, 10, 13, 5), a),
        g1.exit("200", t(2026, 3, 10, 14), a, trusted=False),        # placed from boot anchor
        g1.admit("300", t(2026, 3, 20, 7), dispatch(dt.date(2026, 3, 20), "07-13")),  # out of range
    ]
    with engine.begin() as conn:
        insert_events(conn, evs, NOW)
    first = rebuild_shifts(engine, DAY, DAY, Z, now=NOW)
    again = rebuild_shifts(engine, DAY, DAY, Z, now=NOW)
    assert first == again
    with engine.connect() as conn:
        stored = read_shifts(conn, DAY, DAY)
        assert conn.execute(select(func.count()).select_from(events)).scalar() == 6
    engine.dispose()
    assert stored == first
    by_id = {s.shift_id: s for s in stored}
    assert set(by_id) == {"100/9300001/2026-03-10/07-13", "100/9300002/2026-03-10/07-13",
                          "200/9300001/2026-03-10/07-13"}
    assert codes(by_id["100/9300001/2026-03-10/07-13"]) == {"DOUBLE_ASSIGNMENT"}
    assert codes(by_id["100/9300002/2026-03-10/07-13"]) == {"DOUBLE_ASSIGNMENT", "MISSING_EXIT"}
    placed = by_id["200/9300001/2026-03-10/07-13"]
    assert codes(placed) == {"CLOCK_PLACED"} and placed.exit_at == t(2026, 3, 10, 14)
    assert by_id["100/9300001/2026-03-10/07-13"].exit_at == t(2026, 3, 10, 13, 5)


def test_events_table_keeps_the_gate_mac_and_raw_bytes(migrated_url):
    db_url = migrated_url  # at head: a copy of the session's migrated ledger
    engine = make_engine(db_url)
    g = ShiftEvents()
    ev = g.admit("100", t(2026, 3, 10, 7), dispatch(DAY, "07-13"))
    with engine.begin() as conn:
        insert_events(conn, [ev], NOW)
        mac, raw = conn.execute(select(events.c.mac, events.c.raw)).one()
    engine.dispose()
    from wire.events import decode, verify
    assert mac == ev.mac and verify(decode(raw), b"test-gate-key")
