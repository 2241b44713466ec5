"""Shared pytest set-up. Component fixtures (mosquitto, PostgreSQL) live in the suites' conftest
modules; a test that uses one is marked for it here, so ``-m mqtt`` / ``-m "not postgres"`` select
by what a test really starts rather than by a marker someone remembered to write."""

from __future__ import annotations

import pytest

from testkit.demo_day import DemoDay

pytest_plugins: list[str] = []

BROKER_FIXTURES = frozenset({"broker", "secure_broker"})  # a private mosquitto (tests/central/ingest, tests/ops)
PG_FIXTURES = frozenset({"pg", "pg_cluster", "pg_url"})  # a throw-away PostgreSQL cluster
NATS_FIXTURES = frozenset({"nats_cluster"})  # three nats-server processes (tests/ops/test_nats_cluster.py)


def pytest_collection_modifyitems(config, items):
    """Add ``mqtt`` to every test that uses a broker fixture and ``postgres`` to every test that uses
    a PostgreSQL fixture, directly or through another fixture, or runs as ``db_url[postgresql]``."""
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if names & BROKER_FIXTURES:
            item.add_marker(pytest.mark.mqtt)
        params = getattr(getattr(item, "callspec", None), "params", {})
        if names & PG_FIXTURES or params.get("db_url") == "postgresql":
            item.add_marker(pytest.mark.postgres)
        if names & NATS_FIXTURES:
            item.add_marker(pytest.mark.nats)


@pytest.fixture(scope="session")
def demo_day(tmp_path_factory):
    """One ``portgate demo --keep-serving`` day (default scenario, with the broker outage) for every
    test that only reads it: its output, run directory, ledger and web application. Ctrl-C'd at the
    end of the session if no test did; its exit status must then be 0."""
    day = DemoDay(tmp_path_factory.mktemp("demo-day")).start()
    yield day
    assert day.stop() == 0, day.out[-3000:]
