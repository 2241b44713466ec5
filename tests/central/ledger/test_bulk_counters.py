"""A bulk insert into a counted table (``central.ledger.changes.counted_in_bulk``, SQLite) leaves
the change counter where the per-row trigger would have left it, the trigger back with its stored
text, and no other connection ever sees the table without it; a failed batch over-counts, never
under-counts; small batches and PostgreSQL keep the triggers."""

from __future__ import annotations

import sqlite3

import pytest
from sqlalchemy import insert, select
from sqlalchemy.exc import IntegrityError

from central.db import make_engine
from central.ledger import changes
from central.ledger.bulk import insert_rows
from central.ledger.changes import BULK_MIN, read_counters
from central.ledger.migrate import upgrade
from central.ledger.tables import shift_flags, shifts
from tests.central.ledger.test_bulk_insert import _shift


def _triggers(engine) -> dict[str, str]:
    with engine.connect() as c:
        if engine.dialect.name == "postgresql":
            return {n: "" for (n,) in c.exec_driver_sql("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")}
        return dict(c.exec_driver_sql("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").all())


def _counted(engine, rows: list[dict], flags: list[dict]) -> dict[str, int]:
    """The counters after inserting ``rows`` and ``flags`` row by row (the triggers' own count)."""
    with engine.begin() as c:
        for r in rows:
            c.execute(insert(shifts), r)
        for f in flags:
            c.execute(insert(shift_flags), f)
    with engine.connect() as c:
        return read_counters(c)


@pytest.mark.parametrize("n", [BULK_MIN - 1, BULK_MIN, 3 * BULK_MIN + 7])
def test_a_bulk_insert_counts_as_the_triggers_do(db_url, tmp_path, n):
    rows = [_shift(i) for i in range(n)]
    flags = [{"shift_id": r["shift_id"], "flag": "X", "detail": "d"} for r in rows]
    upgrade(db_url)
    engine = make_engine(db_url)
    before = _triggers(engine)
    with engine.begin() as c:
        insert_rows(c, shifts, rows)
        insert_rows(c, shift_flags, flags)
    with engine.connect() as c:
        got = read_counters(c)
        assert len(c.execute(select(shifts.c.shift_id)).all()) == n
    assert _triggers(engine) == before
    engine.dispose()
    if db_url.startswith("sqlite"):  # the same rows one by one, through the triggers
        other = make_engine(f"sqlite:///{tmp_path / 'rows.db'}")
        upgrade(str(other.url))
        assert _counted(other, rows, flags) == got
        assert got["shifts"] == got["shift_flags"] == n
        other.dispose()


def test_other_connections_never_see_the_table_without_its_trigger(tmp_path, mocker, sqlite_ledger):
    url = sqlite_ledger(tmp_path / "l.db")
    engine = make_engine(url)
    with engine.connect() as c:
        start = read_counters(c)["shifts"]
    seen = []
    real = changes.counted_in_bulk

    def watched(conn, table, n):
        cm = real(conn, table, n)

        class Wrap:
            def __enter__(self):
                cm.__enter__()
                own = conn.exec_driver_sql("SELECT name FROM sqlite_master WHERE name = 'shifts_changes_insert'")
                seen.append(("inside, own", own.scalar()))
                peer = sqlite3.connect(tmp_path / "l.db")
                seen.append(("inside, peer", peer.execute(
                    "SELECT name FROM sqlite_master WHERE name = 'shifts_changes_insert'").fetchone()[0]))
                seen.append(("counter, peer", peer.execute(
                    "SELECT n FROM ledger_changes WHERE name = 'shifts'").fetchone()[0]))
                peer.close()

            def __exit__(self, *exc):
                return cm.__exit__(*exc)
        return Wrap()

    mocker.patch("central.ledger.bulk.counted_in_bulk", watched)
    with engine.begin() as c:
        insert_rows(c, shifts, [_shift(i) for i in range(BULK_MIN)])
    assert seen == [("inside, own", None), ("inside, peer", "shifts_changes_insert"),
                    ("counter, peer", start)]
    with engine.connect() as c:
        assert read_counters(c)["shifts"] == start + BULK_MIN
    assert "shifts_changes_insert" in _triggers(engine)
    engine.dispose()


def test_a_failed_batch_rolled_back_leaves_counter_and_trigger(migrated_url):
    db_url = migrated_url  # at head: a copy of the session's migrated ledger
    engine = make_engine(db_url)
    with engine.connect() as c:
        before = read_counters(c)
    triggers = _triggers(engine)
    rows = [_shift(i) for i in range(BULK_MIN)] + [_shift(0)]
    with pytest.raises(IntegrityError), engine.begin() as c:
        insert_rows(c, shifts, rows)
    with engine.connect() as c:
        assert read_counters(c) == before and c.execute(select(shifts)).all() == []
    assert _triggers(engine) == triggers
    engine.dispose()


def test_a_failed_batch_committed_anyway_over_counts_and_keeps_the_trigger(tmp_path, sqlite_ledger):
    url = sqlite_ledger(tmp_path / "l.db")
    engine = make_engine(url)
    triggers = _triggers(engine)
    with engine.connect() as c:
        before = read_counters(c)["shifts"]
    rows = [_shift(i) for i in range(BULK_MIN)] + [_shift(0)] + [_shift(BULK_MIN + 1)]
    with engine.begin() as c:
        with pytest.raises(IntegrityError):
            insert_rows(c, shifts, rows)
        c.execute(insert(shifts), _shift(10_000))  # the trigger is back: it counts this one
    with engine.connect() as c:
        stored = len(c.execute(select(shifts)).all())
        after = read_counters(c)["shifts"]
    assert stored == BULK_MIN + 1  # the rows before the duplicate, and the one after
    assert after - before == len(rows) + 1 >= stored
    assert _triggers(engine) == triggers
    engine.dispose()
