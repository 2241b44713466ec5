"""The benchmarks' month set-up (``bench/pay_month.py``: ``month_events`` inserted by
``insert_month``, the bulk path: COPY on PostgreSQL) stores the same ``events`` rows, ids and
column values, as inserting the same events through ``insert_events`` (what the benches did before:
minutes for 250,000 events on PostgreSQL under load). On SQLite and PostgreSQL."""

from __future__ import annotations

import datetime as dt
import itertools
import random

import pytest
from sqlalchemy import select

from central.db import make_engine
from central.ledger.schema import events
from central.ledger.store import insert_events
from central.ledger.migrate import upgrade
from tests.central.ledger.test_rebuild_equality import _bench

_names = itertools.count()


@pytest.fixture(params=["sqlite", "postgresql"])
def two_urls(request, tmp_path) -> tuple[str, str]:
    """Two fresh, empty databases of the same kind."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'a.db'}", f"sqlite:///{tmp_path / 'b.db'}"
    cluster = request.getfixturevalue("pg_cluster")
    return tuple(cluster.create_database(f"populate{next(_names)}") for _ in range(2))


def _rows(url: str) -> list[tuple]:
    engine = make_engine(url)
    with engine.connect() as conn:
        rows = [tuple(r) for r in conn.execute(select(events).order_by(events.c.id))]
    engine.dispose()
    return rows


def test_the_bulk_set_up_stores_what_insert_events_stores(two_urls):
    db_url, migrated_url = two_urls
    upgrade(migrated_url)
    bench = _bench()
    evs = bench.month_events(3, 25, random.Random(7))
    assert len(evs) == 150 and evs == sorted(evs, key=lambda e: e.occurred_at)
    assert bench.insert_month(db_url, evs) == 150  # migrates db_url itself
    engine = make_engine(migrated_url)
    with engine.begin() as conn:
        insert_events(conn, evs, dt.datetime(2026, 4, 2, tzinfo=dt.UTC))
    engine.dispose()
    bulk, one_by_one = _rows(db_url), _rows(migrated_url)
    assert len(bulk) == 150 and [r[0] for r in bulk] == list(range(1, 151))
    assert bulk == one_by_one
