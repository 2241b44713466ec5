"""The change counters of the derived tables (``central.ledger.changes``) and the month close that
trusts them: a re-close with nothing written since the last close reads no stored row back; any
write, by the ledger or behind its back, bumps a counter and sends the next close through the
verifying path (whole digest, then per worker), which puts the row right; on SQLite and PostgreSQL."""

from __future__ import annotations

import datetime as dt

import pytest
from alembic import command
from sqlalchemy import delete, insert, inspect, select, update

from central.db import load_all_tables, make_engine
from central.ledger.changes import WATCHED, read_counters
from central.ledger.migrate import alembic_config, upgrade
from central.ledger.store import insert_events
from central.ledger.tables import shift_flags, shifts, statement_lines, statements
from central.pay.cli import load_setup
from tests.central.ledger.test_rebuild_equality import RECEIVED, Z, _flagged_events
from tests.central.pay.test_incremental_close import (  # noqa: F401 (month: a fixture)
    LATER, WORKERS, _assert_as_the_full_path, _close, _current, month)

EDITED = "903/9300001/2026-03-05/07-13"
PAID = "904/9300001/2026-03-06/07-13"  # a shift with a statement


def _counters(engine) -> dict[str, int]:
    with engine.connect() as conn:
        return read_counters(conn)


def _triggers(engine) -> set[str]:
    """The ledger's change-counter triggers (not the registry's name-search index triggers, 0027)."""
    with engine.connect() as conn:
        if engine.dialect.name == "postgresql":
            names = {n for (n,) in conn.exec_driver_sql("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")}
        else:
            names = {n for (n,) in conn.exec_driver_sql("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    return {n for n in names if not n.startswith("workers_name_search")}


def test_a_reclose_with_nothing_written_reads_no_stored_row(month, mocker):
    engine = month[0]
    first = _close(*month)
    assert first.read == 0 and first.rebuilt == WORKERS  # a first close digests what it wrote
    import central.ledger.reclose as reclose
    import central.pay.close as close

    shifts_read = mocker.spy(reclose, "_stored_rows")
    statements_read = mocker.spy(close, "_current_rows")
    before = _counters(engine)
    again = _close(*month)
    assert (again.read, shifts_read.call_count, statements_read.call_count) == (0, 0, 0)
    assert (again.rebuilt, again.paid, again.shifts_skipped, again.pay_skipped) == (0, 0, WORKERS, WORKERS)
    assert (again.shifts, again.statements) == (first.shifts, first.statements)
    assert _counters(engine) == before
    _assert_as_the_full_path(*month)


def _edit_shift(conn, engine):
    conn.execute(update(shifts).where(shifts.c.shift_id == EDITED).values(berth="anchored"))


def _edit_statement(conn, engine):
    conn.execute(update(statements).where(statements.c.shift_id == PAID,
                                          statements.c.superseded_at.is_(None)).values(total_cents=1))


def _delete_flag(conn, engine):
    fid = conn.execute(select(shift_flags.c.id).join(shifts, shifts.c.shift_id == shift_flags.c.shift_id)
                       .where(shifts.c.registration == "903")).scalars().first()
    conn.execute(delete(shift_flags).where(shift_flags.c.id == fid))


def _stray_shift(conn, engine):
    row = dict(conn.execute(select(shifts).where(shifts.c.shift_id == EDITED)).mappings().one())
    conn.execute(insert(shifts).values({**row, "shift_id": "977/9300001/2026-03-05/07-13",
                                        "registration": "977"}))


@pytest.mark.parametrize("edit, table, rebuilt, paid", [
    (_edit_shift, "shifts", 1, 0),  # put back as it was: its pay inputs are the same
    (_edit_statement, "statements", 0, 1),
    (_delete_flag, "shift_flags", 1, 0),
    (_stray_shift, "shifts", 1, 1),  # the stray row removed; its worker paid nothing
])
def test_a_row_written_behind_the_ledgers_back_bumps_its_counter_and_is_repaired(month, edit, table,
                                                                                  rebuilt, paid):
    engine = month[0]
    _close(*month)
    before = _counters(engine)
    with engine.begin() as conn:
        edit(conn, engine)
    after = _counters(engine)
    assert after[table] > before[table]
    assert {k: v for k, v in after.items() if k != table} == {k: v for k, v in before.items() if k != table}
    done = _close(*month)
    assert done.read > 0 and (done.rebuilt, done.paid) == (rebuilt, paid)
    with engine.connect() as conn:
        assert conn.execute(select(shifts.c.shift_id).where(shifts.c.registration == "977")).first() is None
    _assert_as_the_full_path(*month)
    assert _close(*month).read == 0


def test_an_edited_statement_line_bumps_its_counter_and_is_superseded(month):
    engine = month[0]
    _close(*month)
    before, before_statement = _counters(engine), _current(engine)[PAID]
    with engine.begin() as conn:
        sid = conn.execute(select(statements.c.statement_id)
                           .where(statements.c.shift_id == PAID)).scalar_one()
        conn.execute(update(statement_lines).where(statement_lines.c.statement_id == sid,
                                                   statement_lines.c.position == 0).values(amount_cents=1))
    after = _counters(engine)
    assert after["statement_lines"] > before["statement_lines"]
    assert after["statements"] == before["statements"]
    done = _close(*month)
    assert done.read > 0 and (done.rebuilt, done.paid) == (0, 1)
    assert done.run.saved.superseded == 1
    with engine.connect() as conn:
        why = conn.execute(select(statements.c.superseded_reason)
                           .where(statements.c.statement_id == sid)).scalar_one()
        new_id = conn.execute(select(statements.c.statement_id).where(
            statements.c.shift_id == PAID, statements.c.superseded_at.is_(None))).scalar_one()
        amounts = conn.execute(select(statement_lines.c.amount_cents)
                               .where(statement_lines.c.statement_id.in_([sid, new_id]))
                               .order_by(statement_lines.c.statement_id,
                                         statement_lines.c.position)).scalars()
    assert why.startswith("stored lines altered outside the ledger")
    assert 1 in list(amounts)  # the edited version is kept, superseded
    assert _current(engine)[PAID][2:] == before_statement[2:]  # the computed total and digest
    again = _close(*month)
    assert (again.read, again.paid) == (0, 0)
    _assert_as_the_full_path(*month)


def test_a_ledger_closed_before_the_counters_takes_the_verifying_path_once_after_the_upgrade(db_url):
    upgrade(db_url, "0013")
    engine = make_engine(db_url)
    with engine.begin() as conn:
        insert_events(conn, _flagged_events(), RECEIVED)
    _port, rulebook, calendar = load_setup(None)
    first, last = dt.date(2026, 3, 1), dt.date(2026, 3, 31)
    assert "ledger_changes" not in inspect(engine).get_table_names()
    before_counters = _close(engine, first, last, rulebook, calendar)  # no counters: today's path
    assert before_counters.rebuilt == 10 and before_counters.read > 0
    assert _close(engine, first, last, rulebook, calendar).read > 0  # still no counters
    before = _current(engine)
    upgrade(db_url)
    assert set(_counters(engine)) == set(WATCHED)
    once = _close(engine, first, last, rulebook, calendar)
    assert once.read > 0 and (once.rebuilt, once.paid) == (0, 0)  # digests recorded, counters not
    assert _current(engine) == before
    assert _close(engine, first, last, rulebook, calendar).read == 0
    engine.dispose()


def test_the_counter_migration_downgrades_and_upgrades_again(db_url):
    upgrade(db_url)
    engine = make_engine(db_url)
    assert len(_triggers(engine)) == (4 if engine.dialect.name == "postgresql" else 12)
    command.downgrade(alembic_config(db_url), "0013")
    assert _triggers(engine) == set()
    assert "ledger_changes" not in inspect(engine).get_table_names()
    with engine.begin() as conn:  # writes need no counter table any more
        conn.execute(delete(shifts))
    if engine.dialect.name == "postgresql":
        with engine.connect() as conn:
            assert conn.exec_driver_sql(
                "SELECT count(*) FROM pg_proc WHERE proname = 'ledger_changes_bump'").scalar_one() == 0
    upgrade(db_url)
    assert len(_triggers(engine)) == (4 if engine.dialect.name == "postgresql" else 12)
    engine.dispose()


def test_create_all_makes_the_counters_and_triggers_too(db_url):
    engine = make_engine(db_url)
    load_all_tables().create_all(engine)
    load_all_tables().create_all(engine)  # again: nothing made twice
    assert _counters(engine) == dict.fromkeys(WATCHED, 0)
    row = {"shift_id": "a/b/2026-03-05/07-13", "registration": "a", "ship": "b",
           "work_date": dt.date(2026, 3, 5), "period": "07-13", "function": "estiva", "berth": "1",
           "period_start": LATER, "period_end": LATER, "closed_by": "none", "meal_worked": False,
           "held": False, "rebuilt_at": LATER}
    with engine.begin() as conn:
        conn.execute(insert(shifts).values(row))
        conn.execute(insert(shift_flags).values(shift_id=row["shift_id"], flag="MISSING_EXIT", detail=""))
        conn.execute(update(shifts).values(berth="2"))
        conn.execute(delete(shifts))  # the flag goes by the cascade
    got = _counters(engine)
    # SQLite: one per row written (insert, update, delete); PostgreSQL: one per writing transaction
    assert got["shifts"] == (1 if engine.dialect.name == "postgresql" else 3) and got["shift_flags"] >= 1
    engine.dispose()


def test_postgresql_counts_a_writing_transaction_once_and_forgets_a_rolled_back_savepoint(pg_cluster):
    url = pg_cluster.create_database("counters_tx")
    upgrade(url)
    engine = make_engine(url)
    row = {"registration": "a", "ship": "b", "work_date": dt.date(2026, 3, 5), "period": "07-13",
           "function": "estiva", "berth": "1", "period_start": LATER, "period_end": LATER,
           "closed_by": "none", "meal_worked": False, "held": False, "rebuilt_at": LATER}
    with engine.begin() as conn:  # 200 statements, one transaction: one bump
        for n in range(200):
            conn.execute(insert(shifts).values(shift_id=f"a/b/2026-03-05/{n}", **row))
    assert _counters(engine)["shifts"] == 1
    with engine.begin() as conn:
        inner = conn.begin_nested()
        conn.execute(update(shifts).values(berth="2"))
        inner.rollback()  # its bump goes with it ...
        conn.execute(update(shifts).values(berth="3"))  # ... so this statement bumps again
    assert _counters(engine)["shifts"] == 2
    with engine.begin() as conn:
        inner = conn.begin_nested()
        conn.execute(delete(shifts))
        inner.rollback()
    assert _counters(engine)["shifts"] == 2  # nothing written: nothing counted
    engine.dispose()


def test_an_adjusted_statement_is_not_taken_for_an_edited_one_when_the_lines_counter_moves(month):
    engine = month[0]
    _close(*month)
    with engine.begin() as conn:  # paid, then its row edited: the next close adds an ADJ line
        conn.execute(update(statements).where(statements.c.shift_id == PAID)
                     .values(paid_at=LATER, paid_ref="TED-1", total_cents=1))
    adjusted = _close(*month)
    assert adjusted.run.saved.adjusted == 1
    with engine.connect() as conn:
        flags = conn.execute(select(statements.c.flags).where(
            statements.c.shift_id == PAID, statements.c.superseded_at.is_(None))).scalar_one()
    assert flags.endswith("ADJUSTMENT")
    before = _counters(engine)
    with engine.begin() as conn:  # a write that changes nothing still moves the counter
        conn.execute(update(statement_lines).where(statement_lines.c.position == 0)
                     .values(amount_cents=statement_lines.c.amount_cents))
    assert _counters(engine)["statement_lines"] > before["statement_lines"]
    done = _close(*month)
    assert done.read > 0 and done.paid == 0 and done.run.saved.written == 0
