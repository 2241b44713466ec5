"""The incremental month close (``central.pay.close.close_month``): a re-close rebuilds and pays
only the workers whose inputs or stored rows changed, and what it leaves stored is what the full
path (every event decoded, ``reconstruct``, corrections, pay of every shift) finds, on SQLite and
PostgreSQL."""

from __future__ import annotations

import datetime as dt
import random

import msgspec
import pytest
from alembic import command
from sqlalchemy import inspect, select, update

from central.db import make_engine
from central.ledger.corrections import record_meal
from central.ledger.migrate import alembic_config, head, upgrade
from central.ledger.store import insert_events, read_shifts, rebuild_shifts
from central.ledger.tables import close_digests, shifts, statements
from central.pay.calendar import HolidayCalendar
from central.pay.cli import load_setup
from central.pay.close import close_month
from central.pay.statements_store import pay_from_ledger
from testkit.shift_events import ShiftEvents, dispatch
from tests.central.ledger.test_rebuild_equality import RECEIVED, Z, _bench, _flagged_events, _reference, t

NOW = dt.datetime(2026, 4, 3, tzinfo=dt.UTC)
LATER = NOW + dt.timedelta(hours=1)
WORKERS = 6 + 10  # the bench's 6 and the flagged events' 900..910 but 909 (its only tap is a deny)


@pytest.fixture()
def month(migrated_url):
    """A month of 16 workers' events in a ledger of its own (a copy of the session's migrated one:
    ``populate``'s own ``upgrade`` finds it at head) and the default rulebook and calendar."""
    bench = _bench()
    bench.populate(migrated_url, 6, 25, random.Random(7))
    engine = make_engine(migrated_url)
    with engine.begin() as conn:
        insert_events(conn, _flagged_events(), RECEIVED)
    _port, rulebook, calendar = load_setup(None)
    yield engine, bench.FIRST, bench.LAST, rulebook, calendar
    engine.dispose()


def _close(engine, first, last, rulebook, calendar, now=LATER, **kw):
    return close_month(engine, first, last, Z, rulebook, calendar, now=now, **kw)


def _current(engine) -> dict:
    """``{shift_id: (statement_id, rulebook, total_cents, digest)}`` of the current statements."""
    c = statements.c
    with engine.connect() as conn:
        return {r[0]: r[1:] for r in conn.execute(select(c.shift_id, c.statement_id, c.rulebook,
                                                         c.total_cents, c.digest)
                                                  .where(c.superseded_at.is_(None)))}


def _assert_as_the_full_path(engine, first, last, rulebook, calendar, now=LATER):
    """Stored shifts equal the reference rebuild; a full pay run over them changes nothing."""
    with engine.connect() as conn:
        assert {s.shift_id: s for s in read_shifts(conn, first, last)} == _reference(engine, first, last)
    before = _current(engine)
    run = pay_from_ledger(engine, first, last, rulebook, calendar, now=now, store=True)
    assert run.saved.written == 0 and run.saved.unchanged == len(before)
    assert _current(engine) == before


def test_a_first_close_goes_the_full_path_and_a_reclose_skips_every_worker(month):
    engine, first, last, rulebook, calendar = month
    done = _close(*month)
    assert (done.workers, done.rebuilt, done.shifts_skipped, done.paid) == (WORKERS, WORKERS, 0, WORKERS)
    assert done.shifts == 6 * 25 + 11 and done.statements == len(_current(engine)) > 6 * 25
    again = _close(*month)
    assert (again.rebuilt, again.shifts_skipped, again.paid, again.pay_skipped) == (0, WORKERS, 0, WORKERS)
    assert again.run.statements == [] and again.statements == done.statements
    _assert_as_the_full_path(*month)


def test_a_new_event_of_one_worker_rebuilds_and_pays_that_worker_only(month):
    engine, first, last, rulebook, calendar = month
    _close(*month)
    before = _current(engine)
    open_shift = "900/9300001/2026-03-03/07-13"  # MISSING_EXIT until this exit arrives
    with engine.begin() as conn:
        insert_events(conn, [ShiftEvents("gx9").exit("900", t(3, 13, 4), dispatch(dt.date(2026, 3, 3), "07-13"))],
                      RECEIVED)
    done = _close(*month)
    assert (done.rebuilt, done.shifts_skipped, done.paid, done.pay_skipped) == (1, WORKERS - 1, 1, WORKERS - 1)
    after = _current(engine)
    assert {sid for sid in after if after[sid] != before.get(sid)} <= {open_shift}
    _assert_as_the_full_path(*month)


def test_a_later_trusted_event_of_another_worker_moves_a_placed_time_and_rebuilds_both(migrated_url):
    """An untrusted-clock exit is placed from the nearest trusted event of its gate boot, whoever
    tapped it: a nearer one arriving later changes that shift too (RULES.md G8)."""
    engine = make_engine(migrated_url)
    boot = ShiftEvents("gb", mono_origin=dt.datetime(2026, 3, 1, tzinfo=dt.UTC))
    d = dispatch(dt.date(2026, 3, 7), "19-01")
    first_batch = [boot.admit("A", t(7, 19), d), boot.admit("B", t(7, 19, 1), d)]
    late_anchor = boot.exit("B", t(8, 1), d)  # seq 3: taken out, sent later
    placed_exit = boot.exit("A", t(8, 1, 5), d, trusted=False)  # seq 4
    with engine.begin() as conn:
        insert_events(conn, first_batch + [placed_exit], RECEIVED)
    _port, rulebook, calendar = load_setup(None)
    month = (engine, dt.date(2026, 3, 1), dt.date(2026, 3, 31), rulebook, calendar)
    _close(*month)
    with engine.begin() as conn:
        insert_events(conn, [late_anchor], RECEIVED)
    done = _close(*month)
    assert (done.rebuilt, done.shifts_skipped) == (2, 0)
    _assert_as_the_full_path(*month)
    with engine.connect() as conn:
        a = {s.registration: s for s in read_shifts(conn, month[1], month[2])}["A"]
    assert a.exit_at == t(8, 1, 5) and any("placed from seq 3" in f.detail for f in a.flags)
    engine.dispose()


def test_a_meal_correction_rebuilds_and_repays_that_worker(month):
    engine, first, last, rulebook, calendar = month
    _close(*month)
    before = _current(engine)
    sid = "902/9300001/2026-03-04/07-13"
    record_meal(engine, sid, worked=True, actor="chefe", reason="r", now=NOW)
    done = _close(*month)
    assert (done.rebuilt, done.paid) == (1, 1)
    after = _current(engine)
    assert {k for k in after if after[k] != before.get(k)} == {sid}
    assert after[sid][2] > before[sid][2]  # P6 paid
    _assert_as_the_full_path(*month)


def test_a_new_holiday_repays_every_worker_and_rebuilds_none(month):
    engine, first, last, rulebook, calendar = month
    _close(*month)
    before = _current(engine)
    feriado = HolidayCalendar(calendar.zone, {**calendar.days, dt.date(2026, 3, 4): "Feriado municipal"},
                              calendar.years)
    done = _close(engine, first, last, rulebook, feriado)
    assert (done.rebuilt, done.shifts_skipped, done.paid, done.pay_skipped) == (0, WORKERS, WORKERS, 0)
    after = _current(engine)
    changed = {k for k in after if after[k] != before.get(k)}
    assert changed and {k.split("/")[2] for k in changed} == {"2026-03-04"}
    assert _close(engine, first, last, rulebook, feriado).paid == 0
    _assert_as_the_full_path(engine, first, last, rulebook, feriado)


def test_another_rulebook_recomputes_and_supersedes_every_statement(month):
    engine, first, last, rulebook, calendar = month
    _close(*month)
    before = _current(engine)
    other = msgspec.structs.replace(rulebook, id="cct-2026-aditivo")
    done = _close(engine, first, last, other, calendar)
    assert (done.rebuilt, done.paid, done.pay_skipped) == (0, WORKERS, 0)
    assert done.run.saved.superseded == len(before) and done.run.saved.unchanged == 0
    after = _current(engine)
    assert set(after) == set(before) and {v[1] for v in after.values()} == {"cct-2026-aditivo"}
    assert _close(engine, first, last, other, calendar).paid == 0
    _assert_as_the_full_path(engine, first, last, other, calendar)


def test_an_edited_shift_row_and_an_edited_statement_row_are_repaired(month):
    engine, first, last, rulebook, calendar = month
    _close(*month)
    before = _current(engine)
    edited_shift, edited_statement = "903/9300001/2026-03-05/07-13", "904/9300001/2026-03-06/07-13"
    with engine.begin() as conn:
        conn.execute(update(shifts).where(shifts.c.shift_id == edited_shift).values(berth="anchored"))
        conn.execute(update(statements).where(statements.c.statement_id == before[edited_statement][0])
                     .values(total_cents=1))
    done = _close(*month)
    # 903 rebuilt for its shift row, put back as it was: its pay inputs are the same; 904 repaid
    assert (done.rebuilt, done.paid) == (1, 1)
    after = _current(engine)
    assert after[edited_statement][0] != before[edited_statement][0]  # a new version
    assert after[edited_statement][2:] == before[edited_statement][2:]  # with the computed total
    with engine.connect() as conn:
        why = conn.execute(select(statements.c.superseded_reason).where(
            statements.c.statement_id == before[edited_statement][0])).scalar_one()
    assert why.startswith("stored row altered outside the ledger")
    assert _close(*month).paid == 0
    _assert_as_the_full_path(*month)


def test_a_ledger_closed_before_the_digests_existed_goes_the_full_path_once(db_url):
    upgrade(db_url, "0011")
    engine = make_engine(db_url)
    with engine.begin() as conn:
        insert_events(conn, _flagged_events(), RECEIVED)
    _port, rulebook, calendar = load_setup(None)
    first, last = dt.date(2026, 3, 1), dt.date(2026, 3, 31)
    rebuild_shifts(engine, first, last, Z, now=NOW)
    pay_from_ledger(engine, first, last, rulebook, calendar, now=NOW, store=True)
    before = _current(engine)
    assert "close_digests" not in inspect(engine).get_table_names()
    upgrade(db_url)
    done = _close(engine, first, last, rulebook, calendar)
    assert (done.rebuilt, done.shifts_skipped, done.paid) == (10, 0, 10)
    assert done.run.saved.written == 0 and _current(engine) == before  # full path, nothing differed
    with engine.connect() as conn:
        kinds = [k for (k,) in conn.execute(select(close_digests.c.kind))]
    assert sorted(kinds) == ["changes"] * 4 + ["pay"] * 10 + ["payall"] + ["shiftall"] + ["shifts"] * 10
    again = _close(engine, first, last, rulebook, calendar)
    assert (again.rebuilt, again.paid) == (0, 0)
    engine.dispose()


def test_the_digest_migration_downgrades_and_upgrades_again(tmp_path):
    url = f"sqlite:///{tmp_path / 'l.db'}"
    upgrade(url)
    engine = make_engine(url)
    assert "close_digests" in inspect(engine).get_table_names()
    command.downgrade(alembic_config(url), "0011")
    assert "close_digests" not in inspect(engine).get_table_names()
    assert upgrade(url) == head()
    assert "close_digests" in inspect(engine).get_table_names()
    engine.dispose()


def test_a_changed_digest_version_sends_everyone_the_full_path(month, monkeypatch):
    engine, first, last, rulebook, calendar = month
    _close(*month)
    import central.ledger.reclose as reclose

    monkeypatch.setattr(reclose, "DIGEST_VERSION", b"shifts/test")
    done = _close(*month)
    assert (done.rebuilt, done.shifts_skipped) == (WORKERS, 0)
    assert done.paid == 0  # the shifts came out the same: their digest, pay's input, too
    _assert_as_the_full_path(*month)


def test_pay_waits_for_an_open_shift_and_pays_it_once_its_grace_is_over(month):
    engine, first, last, rulebook, calendar = month
    open_shift = "900/9300001/2026-03-03/07-13"  # no exit: open until 13:00 + 2 h
    early = t(3, 14)
    done = _close(engine, first, last, rulebook, calendar, now=early)
    assert done.paid == WORKERS and open_shift not in _current(engine)
    assert _close(engine, first, last, rulebook, calendar, now=early).paid == 0
    later = _close(engine, first, last, rulebook, calendar, now=LATER)
    assert (later.rebuilt, later.paid) == (0, 1)
    assert open_shift in _current(engine)
    _assert_as_the_full_path(*month)


def test_a_database_failure_is_a_store_error(month, mocker):
    from sqlalchemy.exc import OperationalError

    from portgate.errors import StoreError

    engine, first, last, rulebook, calendar = month
    mocker.patch("central.pay.close.rebuild_changed", side_effect=OperationalError("SELECT", {}, "gone"))
    with pytest.raises(StoreError, match="closing the month failed"):
        _close(*month)



def test_the_clock_decode_reads_the_fields_of_the_full_decode_and_refuses_damage():
    from central.ledger.taps import decode_clocks
    from portgate.errors import BadInput
    from wire.events import encode

    evs = _flagged_events()
    for full, view in zip(evs, decode_clocks([encode(e) for e in evs])):
        for name in ("event_id", "gate_id", "boot_id", "seq", "occurred_at", "clock_trusted", "mono_ns"):
            assert getattr(view, name) == getattr(full, name)
        assert view.payload.registration == full.payload.registration
    with pytest.raises(BadInput, match="malformed tap event in the ledger"):
        decode_clocks([b"{damaged"])


def test_clock_flagged_is_the_flagged_part_of_place_times():
    from central.ledger.shifts import clock_flagged, place_times

    evs = _flagged_events()
    boot = ShiftEvents("gz")
    d = dispatch(dt.date(2026, 3, 20), "07-13")
    evs += [boot.admit("A", t(20, 7), d), boot.exit("A", t(20, 6), d)]  # steps back: CLOCK_BACKWARDS
    evs += [boot.admit("B", t(20, 7, 1), d)]
    want = {eid: p for eid, p in place_times(evs).items() if p[1]}
    assert clock_flagged(evs) == want
    assert {f.code for _at, flags in want.values() for f in flags} >= {
        "CLOCK_PLACED", "CLOCK_UNPLACEABLE", "CLOCK_BACKWARDS"}
