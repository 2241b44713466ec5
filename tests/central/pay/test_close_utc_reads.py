"""PostgreSQL: the month close reads its stored shifts and statements back with the session time
zone set to UTC for those reads only (``central.ledger.reclose.utc_times``: psycopg loads UTC
times several times faster than a named zone); times it prints into flags keep the session's own
zone, so a close stores what the full path stores on a server whose zone is not UTC."""

from __future__ import annotations

import datetime as dt
import random

import pytest

from central.db import make_engine
from central.ledger.corrections import record_meal
from central.ledger.reclose import _stored_rows, utc_times
from central.ledger.store import insert_events, read_shifts
from central.pay.cli import load_setup
from central.pay.close import _current_rows
from tests.central.ledger.test_rebuild_equality import RECEIVED, _bench, _flagged_events
from tests.central.pay.test_incremental_close import NOW, WORKERS, _assert_as_the_full_path, _close

ZONE = "America/Sao_Paulo"


@pytest.fixture()
def sp_month(pg_cluster):
    """The incremental close's month on a database whose default session zone is São Paulo's."""
    url = pg_cluster.create_database(f"sp{random.randrange(10**9)}")
    engine = make_engine(url)
    with engine.connect() as conn:
        conn.exec_driver_sql(f"ALTER DATABASE {engine.url.database} SET TimeZone = '{ZONE}'")
        conn.commit()
    engine.dispose()
    bench = _bench()
    bench.populate(url, 6, 25, random.Random(7))
    engine = make_engine(url)
    with engine.begin() as conn:
        insert_events(conn, _flagged_events(), RECEIVED)
    _port, rulebook, calendar = load_setup(None)
    yield engine, bench.FIRST, bench.LAST, rulebook, calendar
    engine.dispose()


def _zone(conn) -> str:
    return conn.exec_driver_sql("SHOW TimeZone").scalar()


def test_a_close_prints_times_in_the_session_zone_and_stores_what_the_full_path_does(sp_month):
    engine, first, last = sp_month[:3]
    sid = "902/9300001/2026-03-04/07-13"
    assert _close(*sp_month).rebuilt == WORKERS
    record_meal(engine, sid, worked=True, actor="chefe", reason="r", now=NOW)
    done = _close(*sp_month)
    assert (done.rebuilt, done.paid) == (1, 1)
    with engine.connect() as conn:
        assert _zone(conn) == ZONE
        (shift,) = [s for s in read_shifts(conn, first, last) if s.shift_id == sid]
    (flag,) = [f for f in shift.flags if f.code == "MEAL_CORRECTED"]
    assert flag.detail.endswith("-03:00")  # as the session prints it, not the UTC reads' zone
    again = _close(*sp_month)
    assert (again.rebuilt, again.paid, again.read) == (0, 0, 0)
    _assert_as_the_full_path(*sp_month)


def test_the_reads_get_utc_times_and_the_session_zone_is_set_back(sp_month):
    engine, first, last = sp_month[:3]
    _close(*sp_month)
    with engine.begin() as conn:
        assert _zone(conn) == ZONE
        rows, _flags = _stored_rows(conn, first, last)
        statements = _current_rows(conn, first, last)
        assert _zone(conn) == ZONE
    period_start = rows[0][10]
    assert period_start.tzinfo is dt.UTC and statements[0][-2].tzinfo is dt.UTC
    with engine.connect() as conn:  # outside them, the session's zone
        assert conn.exec_driver_sql("SELECT period_start FROM shifts LIMIT 1").scalar().tzinfo is not dt.UTC


def test_a_read_that_fails_leaves_the_zone_to_the_rollback(sp_month):
    engine = sp_month[0]
    with engine.connect() as conn:
        with pytest.raises(RuntimeError), conn.begin():
            with utc_times(conn):
                assert _zone(conn) == "UTC"
                raise RuntimeError("the read failed")
        assert _zone(conn) == ZONE
