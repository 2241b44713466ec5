"""Fixtures of the ledger and pay suites: a real throw-away PostgreSQL 15 cluster (session-scoped)
and a fresh database per test on SQLite and on PostgreSQL (``db_url`` is parametrised over both)."""

from __future__ import annotations

import itertools

import pytest

from testkit.postgres import PostgresCluster

_counter = itertools.count(1)


@pytest.fixture(scope="session")
def pg_cluster():
    """One PostgreSQL cluster for the whole session, stopped and removed at the end."""
    cluster = PostgresCluster()
    cluster.start()
    yield cluster
    cluster.stop()


@pytest.fixture(scope="session")
def pg_url(pg_cluster) -> str:
    """SQLAlchemy URL of the session cluster's default database."""
    return pg_cluster.url


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path) -> str:
    """A fresh, empty database URL: a SQLite file, or a new database in the session cluster."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'ledger.db'}"
    cluster = request.getfixturevalue("pg_cluster")
    return cluster.create_database(f"t{next(_counter)}")
