"""A month close pauses the cyclic collector and, when it ends, hands what it built to the oldest
generation (``portgate.gctune.paused(long_lived=True)``): no young collection scans the month's
objects as the close returns (0.4-0.9 s of a 5,000-worker first close on PostgreSQL, right after
its last write: docs/performance.md, twelfth pass). SQLite and PostgreSQL; a failing close
restores the collector too."""

from __future__ import annotations

import gc
import random

import pytest

from central.db import make_engine
from central.pay.cli import load_setup
from tests.central.ledger.test_rebuild_equality import _bench
from tests.central.pay.test_incremental_close import _close


@pytest.fixture
def young_only():
    """Young collections as usual, none of the middle or oldest generation (what ends where is
    then the close's doing only); the collector's settings put back afterwards."""
    was, enabled = gc.get_threshold(), gc.isenabled()
    gc.collect()
    gc.enable()
    gc.set_threshold(700, 10**9, 10**9)
    try:
        yield
    finally:
        gc.set_threshold(*was)
        if not enabled:
            gc.disable()


def test_what_a_close_built_is_in_the_oldest_generation_when_it_returns(db_url, young_only):
    bench = _bench()
    bench.populate(db_url, 6, 25, random.Random(7))
    engine = make_engine(db_url)
    _port, rulebook, calendar = load_setup(None)
    try:
        result = _close(engine, bench.FIRST, bench.LAST, rulebook, calendar)
        assert gc.isenabled()
        assert len(result.run.statements) == 6 * 25
        built = [o for o in (result.run, result.run.statements, result.run.saved, result.run.saved.rows,
                             result.run.saved.rows[0]) if gc.is_tracked(o)]
        assert len(built) >= 3
        oldest = {id(o) for o in gc.get_objects(generation=2)}
        assert all(id(o) in oldest for o in built)  # not scanned young on the way out
        assert gc.get_freeze_count() == 0
    finally:
        engine.dispose()


def test_a_failing_close_restores_the_collector(tmp_path, young_only):
    engine = make_engine(f"sqlite:///{tmp_path / 'not-migrated.db'}")  # no tables: the close fails
    _port, rulebook, calendar = load_setup(None)
    try:
        with pytest.raises(Exception):  # noqa: B017 (StoreError or what the driver raises)
            _close(engine, _bench().FIRST, _bench().LAST, rulebook, calendar)
        assert gc.isenabled() and gc.get_freeze_count() == 0
    finally:
        engine.dispose()
