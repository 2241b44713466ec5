"""The stored rebuild (narrow one-pass decode, only changed rows written) stores exactly the shifts
and flags of the reference path: every event fully decoded (``load_events``) and ``reconstruct``,
on the month-close bench's data at a small size plus the events that raise every flag, on SQLite
and PostgreSQL; a re-close writes only what changed."""

from __future__ import annotations

import datetime as dt
import importlib.util
import random
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select, update

from central.db import make_engine
from central.ledger.breaks import apply_chain_breaks
from central.ledger.corrections import apply_corrections, record_meal
from central.ledger.schema import events
from central.ledger.shifts import reconstruct
from central.ledger.store import as_utc, insert_events, load_events, read_shifts, rebuild_shifts
from central.ledger.tables import shift_flags, shifts
from central.ledger.taps import decode_taps
from portgate.errors import BadInput
from testkit.shift_events import ShiftEvents, dispatch
from wire.events import encode

ROOT = Path(__file__).resolve().parents[3]
Z = ZoneInfo("America/Sao_Paulo")
NOW = dt.datetime(2026, 4, 2, tzinfo=dt.UTC)
LATER = NOW + dt.timedelta(hours=1)
RECEIVED = dt.datetime(2026, 4, 1, tzinfo=dt.UTC)


def _bench():
    spec = importlib.util.spec_from_file_location("pay_month", ROOT / "bench/pay_month.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def t(day: int, hour: int, minute: int = 0) -> dt.datetime:
    return dt.datetime(2026, 3, day, hour, minute, tzinfo=Z).astimezone(dt.UTC)


def _flagged_events() -> list:
    """Events raising every flag of the rebuild (G5, G8, G9, P6)."""
    g1, g2 = ShiftEvents("gx1"), ShiftEvents("gx2")
    untrusted = ShiftEvents("gx3", mono_origin=dt.datetime(2026, 3, 1, tzinfo=dt.UTC))
    lonely = ShiftEvents("gx4")
    d = lambda day, period, ship="9300001", **kw: dispatch(dt.date(2026, 3, day), period, ship, **kw)  # noqa: E731
    return [
        g1.admit("900", t(3, 6, 55), d(3, "07-13")),  # MISSING_EXIT
        g1.exit("901", t(3, 13, 2), d(3, "07-13")),  # NO_ENTRY
        g1.admit("902", t(4, 6, 50), d(4, "07-13")), g1.admit("902", t(4, 6, 58), d(4, "07-13")),
        g1.exit("902", t(4, 13, 1), d(4, "07-13")),  # REPEATED_ADMIT
        g1.admit("903", t(5, 7), d(5, "07-13", "9300001")), g1.exit("903", t(5, 13), d(5, "07-13", "9300001")),
        g2.admit("903", t(5, 7, 5), d(5, "07-13", "9300002")),
        g2.exit("903", t(5, 13), d(5, "07-13", "9300002")),  # DOUBLE_ASSIGNMENT on both
        g1.admit("904", t(6, 7), d(6, "07-13")),
        g1.exit("904", t(6, 11), d(6, "07-13"), flags=("EARLY_EXIT",)),  # EARLY_EXIT
        untrusted.admit("905", t(7, 19), d(7, "19-01")),  # trusted anchor...
        untrusted.exit("905", t(8, 1, 5), d(7, "19-01"), trusted=False),  # ...CLOCK_PLACED
        lonely.admit("906", t(9, 7), d(9, "07-13"), trusted=False),  # CLOCK_UNPLACEABLE
        lonely.exit("906", t(9, 13), d(9, "07-13"), trusted=False),
        g2.admit("907", t(10, 7), d(10, "07-13")),
        g2.exit("907", t(10, 6), d(10, "07-13")),  # CLOCK_BACKWARDS (exit before admit)
        g2.admit("908", t(11, 13), d(11, "13-19")), g2.meal("908", t(11, 16), d(11, "13-19")),
        g2.exit("908", t(11, 19, 3), d(11, "13-19")),  # MEAL_AT_GATE
        g2.tap("deny", "909", t(12, 7), d(12, "07-13")),  # no shift
        g1.admit("910", t(31, 19), d(31, "19-01")), g1.exit("910", dt.datetime(2026, 4, 1, 1, 5, tzinfo=Z),
                                                            d(31, "19-01")),  # across the month end
    ]


def _reference(engine, first: dt.date, last: dt.date) -> dict:
    """The shifts as the reference path finds them: full decode of every event, then reconstruct."""
    with engine.connect() as conn:
        found = [s for s in reconstruct(load_events(conn, first, last, Z), Z)
                 if first <= s.work_date <= last]
        return {s.shift_id: s for s in apply_chain_breaks(conn, apply_corrections(conn, found))}


def _stored(engine, first: dt.date, last: dt.date) -> dict:
    with engine.connect() as conn:
        return {s.shift_id: s for s in read_shifts(conn, first, last)}


def _stamps(engine) -> dict:
    with engine.connect() as conn:
        return {sid: as_utc(at) for sid, at in conn.execute(select(shifts.c.shift_id, shifts.c.rebuilt_at))}


def test_rebuild_stores_what_the_reference_path_finds_and_a_reclose_writes_only_changes(db_url):
    bench = _bench()
    bench.populate(db_url, 12, 25, random.Random(7))  # the month-close bench's data, 12 workers
    engine = make_engine(db_url)
    with engine.begin() as conn:
        insert_events(conn, _flagged_events(), RECEIVED)
    first, last = bench.FIRST, bench.LAST

    returned = rebuild_shifts(engine, first, last, Z, now=NOW)
    expected = _reference(engine, first, last)
    assert {s.shift_id: s for s in returned} == expected
    assert _stored(engine, first, last) == expected and len(expected) == 12 * 25 + 11
    codes = {f.code for s in expected.values() for f in s.flags}
    assert codes >= {"MISSING_EXIT", "NO_ENTRY", "REPEATED_ADMIT", "DOUBLE_ASSIGNMENT", "EARLY_EXIT",
                     "CLOCK_PLACED", "CLOCK_UNPLACEABLE", "CLOCK_BACKWARDS", "MEAL_AT_GATE"}

    # a re-close with nothing new leaves every row (and its stamp) as it is
    with engine.connect() as conn:
        flag_ids = conn.execute(select(shift_flags.c.id).order_by(shift_flags.c.id)).scalars().all()
    rebuild_shifts(engine, first, last, Z, now=LATER)
    assert _stored(engine, first, last) == expected
    assert set(_stamps(engine).values()) == {NOW}
    with engine.connect() as conn:
        assert conn.execute(select(shift_flags.c.id).order_by(shift_flags.c.id)).scalars().all() == flag_ids

    # new events and an office correction: only the shifts they touch are rewritten
    g = ShiftEvents("gx9")
    open_shift = "900/9300001/2026-03-03/07-13"
    with engine.begin() as conn:
        insert_events(conn, [g.exit("900", t(3, 13, 4), dispatch(dt.date(2026, 3, 3), "07-13"))], RECEIVED)
    record_meal(engine, "902/9300001/2026-03-04/07-13", worked=True, actor="chefe", reason="r", now=NOW)
    before = _stamps(engine)
    rebuild_shifts(engine, first, last, Z, now=LATER)
    expected = _reference(engine, first, last)
    assert _stored(engine, first, last) == expected
    assert expected[open_shift].closed_by == "exit"
    assert expected["902/9300001/2026-03-04/07-13"].meal_worked
    after = _stamps(engine)
    changed = {sid for sid in after if after[sid] != before[sid]}
    assert changed == {open_shift, "902/9300001/2026-03-04/07-13"}
    assert {after[sid] for sid in changed} == {LATER}

    # a stored row edited behind the rebuild's back is put right; a shift no longer found is deleted
    stray = "999/9300001/2026-03-20/07-13"
    with engine.begin() as conn:
        conn.execute(update(shifts).where(shifts.c.shift_id == open_shift).values(berth="anchored"))
        row = dict(conn.execute(select(shifts).where(shifts.c.shift_id == open_shift)).mappings().one())
        conn.execute(shifts.insert().values({**row, "shift_id": stray, "registration": "999"}))
    rebuild_shifts(engine, first, last, Z, now=LATER)
    stored = _stored(engine, first, last)
    assert stored == expected and stray not in stored
    engine.dispose()


def test_the_narrow_decode_reads_the_fields_of_the_full_decode():
    evs = _flagged_events()
    views = decode_taps([encode(e) for e in evs])
    assert len(views) == len(evs)
    for full, view in zip(evs, views):
        for name in ("event_id", "gate_id", "boot_id", "seq", "occurred_at", "clock_trusted", "mono_ns"):
            assert getattr(view, name) == getattr(full, name)
        p, q = full.payload, view.payload
        assert q.registration == p.registration and q.dispatch.ship == p.dispatch.ship
        assert q.dispatch.date == p.dispatch.date and q.dispatch.function == p.dispatch.function
        if hasattr(p, "decision"):
            assert (q.decision, tuple(q.flags)) == (p.decision, tuple(p.flags))
        else:
            assert (q.inspector_uid, q.inspector_registration) == (p.inspector_uid, p.inspector_registration)
    assert reconstruct(views, Z) == reconstruct(evs, Z)


@pytest.mark.parametrize("raw, why", [
    (b"{not json", "malformed"),
    (b'{"event_id":"x","gate_id":"g","boot_id":"b","seq":1,"occurred_at":"2026-03-01T10:00:00",'
     b'"clock_trusted":true,"mono_ns":1,"payload":{"type":"tap","decision":"admit"}}', "timezone"),
    (b'{"event_id":"x","gate_id":"g","boot_id":"b","seq":1,"occurred_at":"2026-03-01T10:00:00Z",'
     b'"clock_trusted":true,"mono_ns":1,"payload":{"type":"alert","code":"X"}}', "alert"),
])
def test_a_damaged_stored_tap_is_a_clear_error(raw, why):
    with pytest.raises(BadInput, match="malformed tap event in the ledger") as info:
        decode_taps([raw])
    assert why in str(info.value)


def test_a_damaged_row_in_the_events_table_stops_the_rebuild_with_bad_input(tmp_path, sqlite_ledger):
    url = sqlite_ledger(tmp_path / "l.db")
    engine = make_engine(url)
    g = ShiftEvents()
    with engine.begin() as conn:
        insert_events(conn, [g.admit("1", t(3, 7), dispatch(dt.date(2026, 3, 3), "07-13"))], RECEIVED)
        conn.execute(update(events).values(raw=b"{damaged"))
    with pytest.raises(BadInput, match="malformed tap event"):
        rebuild_shifts(engine, dt.date(2026, 3, 1), dt.date(2026, 3, 31), Z, now=NOW)
    with engine.connect() as conn:
        assert conn.execute(select(shifts)).all() == []
    engine.dispose()


def test_a_stored_time_that_is_not_iso_8601_is_a_store_error(tmp_path, sqlite_ledger):
    from sqlalchemy import text

    from portgate.errors import StoreError

    url = sqlite_ledger(tmp_path / "l.db")
    engine = make_engine(url)
    g = ShiftEvents()
    day = dt.date(2026, 3, 3)
    with engine.begin() as conn:
        insert_events(conn, [g.admit("1", t(3, 7), dispatch(day, "07-13")),
                             g.exit("1", t(3, 13), dispatch(day, "07-13"))], RECEIVED)
    rebuild_shifts(engine, day, day, Z, now=NOW)
    with engine.begin() as conn:
        conn.execute(text("UPDATE shifts SET admit_at = 'yesterday'"))
    with pytest.raises(StoreError, match="not ISO 8601: 'yesterday'"), engine.connect() as conn:
        read_shifts(conn, day, day)
    engine.dispose()
