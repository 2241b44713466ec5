"""Fixtures of the ledger and pay suites: a real throw-away PostgreSQL 15 cluster (session-scoped)
and a fresh database per test on SQLite and on PostgreSQL (``db_url`` is parametrised over both),
empty or already migrated to head (``migrated_url``: a copy of a ledger migrated once per session,
for the tests that are not about the migrations themselves)."""

from __future__ import annotations

import itertools
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from central.db import make_engine
from central.ledger.migrate import upgrade_engine
from testkit.postgres import PostgresCluster

_counter = itertools.count(1)


@pytest.fixture(scope="session")
def pg_cluster():
    """One PostgreSQL cluster for the whole session, stopped and removed at the end (its hundreds of
    databases by a detached ``rm -rf``: the worker's last teardown does not wait for the disk)."""
    cluster = PostgresCluster()
    cluster.start()
    yield cluster
    cluster.stop(remove_in_background=True)


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


@pytest.fixture(scope="session")
def migrated_sqlite(tmp_path_factory) -> Path:
    """A SQLite ledger migrated to head once per session (the migrations have their own tests in
    tests/central/ledger); ``migrated_url`` and the web suite's ``engine`` start from a copy of it."""
    path = tmp_path_factory.mktemp("migrated-ledger") / "ledger.db"
    engine = make_engine(f"sqlite:///{path}")
    upgrade_engine(engine)
    engine.dispose()
    return path


@pytest.fixture(scope="session")
def migrated_postgresql(pg_cluster) -> str:
    """The name of a database of the session's cluster migrated to head once per session, the
    template of ``migrated_url``'s and the web suite's PostgreSQL databases
    (``CREATE DATABASE ... TEMPLATE``: a few milliseconds instead of the migrations)."""
    engine = make_engine(pg_cluster.create_database("migrated_template"))
    upgrade_engine(engine)
    engine.dispose()
    return "migrated_template"


def copy_sqlite(source: Path, target: Path) -> None:
    """Copy the SQLite database ``source`` to the new file ``target`` (``sqlite3``'s backup)."""
    with closing(sqlite3.connect(source)) as src, closing(sqlite3.connect(target)) as dst:
        src.backup(dst)


@pytest.fixture
def sqlite_ledger(migrated_sqlite):
    """``sqlite_ledger(path)``: a copy of the session's migrated SQLite ledger made at ``path`` (a
    ``Path``), and its URL: what ``upgrade(f"sqlite:///{path}")`` would leave there."""
    def make(path: Path) -> str:
        copy_sqlite(migrated_sqlite, path)
        return f"sqlite:///{path}"
    return make


class Ledgers:
    """Fresh ledgers copied from ledgers made once per session: migrated to head, and optionally
    filled by a function (the demo registry, ...) under a name. ``url(request, kind, tmp_path)`` is
    a new ledger of its own for one test; the tests that need the same starting data but change it
    each get a copy instead of migrating (and filling) their own (~0.5-5 s each, with the load)."""

    def __init__(self) -> None:
        self.made: dict[tuple[str, str], Path | str] = {}

    def source(self, request: pytest.FixtureRequest, kind: str, name: str | None = None, fill=None) -> Path | str:
        """The session's ``kind`` ("sqlite", "postgresql") ledger ``name``: its SQLite file or its
        PostgreSQL database's name, migrated and then, once per session, ``fill(engine)``ed."""
        if name is None:
            return request.getfixturevalue(f"migrated_{kind}")
        if (kind, name) not in self.made:
            if kind == "sqlite":
                path = request.getfixturevalue("tmp_path_factory").mktemp(f"ledger-{name}") / "ledger.db"
                copy_sqlite(self.source(request, kind), path)
                url, made = f"sqlite:///{path}", path
            else:
                made = f"template_{name.replace('-', '_')}"
                url = request.getfixturevalue("pg_cluster").create_database(made, template=self.source(request, kind))
            engine = make_engine(url)
            try:
                fill(engine)
            finally:
                engine.dispose()  # nobody may be connected to a template
            self.made[kind, name] = made
        return self.made[kind, name]

    def url(self, request: pytest.FixtureRequest, kind: str, tmp_path: Path, name: str | None = None,
            fill=None) -> str:
        """A new ledger for one test, a copy of ``source(request, kind, name, fill)``; its URL."""
        source = self.source(request, kind, name, fill)
        if kind == "sqlite":
            path = tmp_path / "ledger.db"
            copy_sqlite(source, path)
            return f"sqlite:///{path}"
        return request.getfixturevalue("pg_cluster").create_database(f"m{next(_counter)}", template=source)


@pytest.fixture(scope="session")
def ledgers() -> Ledgers:
    """The session's ``Ledgers``: migrated (and filled) once, copied per test."""
    return Ledgers()


@pytest.fixture(params=["sqlite", "postgresql"])
def migrated_url(request, tmp_path, ledgers) -> str:
    """A fresh ledger of its own, migrated to head, as ``upgrade(db_url)`` would leave ``db_url``:
    a copy of the session's migrated SQLite file, or a database made from the session's migrated
    template in ``pg_cluster``."""
    return ledgers.url(request, request.param, tmp_path)
