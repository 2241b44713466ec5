"""Run the office database migrations programmatically (Alembic, ``central/migrations``).

``upgrade(url)`` brings a database (SQLite or PostgreSQL) to the newest revision; the services call
it at start-up and ``portgate ledger migrate --db URL`` calls it by hand. Safe to run twice.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, func, inspect, select, table
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import OperationalError, SQLAlchemyError

from central.db import load_all_tables, make_engine, read_failure
from portgate.errors import StoreError, StoreUnavailable

MIGRATIONS = Path(__file__).resolve().parent.parent / "migrations"


def alembic_config(url: str | None = None) -> Config:
    """An Alembic ``Config`` pointing at ``central/migrations`` (and at ``url`` if given)."""
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    if url:
        cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def head() -> str:
    """The newest revision id in ``central/migrations/versions``."""
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def upgrade(url: str, revision: str = "head") -> str:
    """Upgrade the database at ``url`` to ``revision``; return the revision it is now at.

    Raises ``StoreUnavailable`` if a database server cannot be reached (exit 1: systemd retries),
    ``StoreError`` if a migration fails (message: the driver's first line).
    """
    engine = make_engine(url)
    try:
        return upgrade_engine(engine, revision)
    finally:
        engine.dispose()


def upgrade_engine(engine: Engine, revision: str = "head") -> str:
    """Upgrade the database behind ``engine``; return its revision. A database that already holds
    the office tables without Alembic's bookkeeping (made by ``create_all`` in a test or an early
    build) is completed with ``create_all`` and stamped at head first, so nothing is created twice.

    The whole upgrade is one transaction, DDL included, with the ``alembic_version`` row in it: a
    process killed at any point leaves the database as it was before (on SQLite the driver's own
    transaction handling is switched off for the run and ``BEGIN IMMEDIATE`` opened by hand, as
    pysqlite would otherwise commit each ``CREATE TABLE`` on its own). Tables a build before that
    left behind without a revision (empty, no ``events`` table) are dropped and made again.

    Raises ``StoreUnavailable`` if a database server cannot be reached or the SQLite file is locked
    by another writer (exit 1: systemd retries), ``StoreError`` for a file that is not a database
    (``W is not a database (not a portgate ledger)``) or if a migration fails (message: the
    driver's first line).
    """
    url = engine.url.render_as_string(hide_password=False)
    try:
        with engine.connect() as conn:
            with _transactional_ddl(conn):
                cfg = alembic_config(url)
                cfg.attributes["connection"] = conn
                _adopt(conn, cfg)
                command.upgrade(cfg, revision)
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    except SQLAlchemyError as exc:
        where = engine.url.render_as_string(hide_password=True)
        orig = getattr(exc, "orig", None) or exc
        first = (str(orig).strip().splitlines() or [type(orig).__name__])[0]
        if isinstance(exc, OperationalError) and (
                engine.dialect.name != "sqlite" or _SQLITE_BUSY.search(first)):
            raise StoreUnavailable(f"database {where} not reachable: {first}") from exc
        if "not a database" in first:
            raise StoreError(f"{where} is not a database (not a portgate ledger): {first}") from exc
        raise StoreError(f"migration of {where} failed: {first}") from exc


_SQLITE_BUSY = re.compile(r"database is locked|database table is locked|busy", re.IGNORECASE)


@contextlib.contextmanager
def _transactional_ddl(conn: Connection) -> Iterator[None]:
    """Run the block in one transaction that DDL cannot escape; commit on success, roll back on an
    exception. PostgreSQL does this by itself; on SQLite the DBAPI connection is put in autocommit
    mode (``isolation_level=None``) for the block and ``BEGIN IMMEDIATE`` issued explicitly."""
    if conn.dialect.name != "sqlite":
        with conn.begin():
            yield
        return
    raw = conn.connection.dbapi_connection
    saved = raw.isolation_level
    raw.isolation_level = None
    try:
        conn.exec_driver_sql("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            conn.rollback()
            raise
        conn.commit()
    finally:
        if raw.in_transaction:  # pragma: no cover - only after a failed rollback
            raw.rollback()
        raw.isolation_level = saved


def _adopt(conn: Connection, cfg: Config) -> None:
    """Bring a database without Alembic bookkeeping to a state ``upgrade`` can continue from."""
    if MigrationContext.configure(conn).get_current_revision() is not None:
        return
    names = set(inspect(conn).get_table_names()) - {"alembic_version"}
    if "events" in names:
        load_all_tables().create_all(conn, checkfirst=True)
        command.stamp(cfg, "head")
        return
    known = names & set(load_all_tables().tables)
    for name in known:
        if conn.execute(select(func.count()).select_from(table(name))).scalar():
            raise StoreError(f"table {name} holds rows but the database has no revision: "
                             "restore it from the backup or stamp it by hand")
    for name in sorted(known):
        conn.exec_driver_sql(f'DROP TABLE "{name}"')


def require_ledger(url: str) -> None:
    """Check, writing nothing, that the database at ``url`` holds a portgate ledger at the newest
    revision: for the commands that only read one (``portgate pay --what-if``), which must not
    create or upgrade it. A SQLite file is opened read-only (``mode=ro``: not even the WAL journal
    mode that ``make_engine`` sets is written).

    Raises ``StoreError`` (exit 2) naming the database (password hidden) and what to do: a file
    that is not a database (``W is not a database (not a portgate ledger): ...``, as
    ``central.db.read_failure`` says), a database without the ledger (``W holds no portgate
    ledger ...: create one with `portgate ledger migrate --db URL```), a ledger at another revision
    (``... run `portgate ledger migrate --db URL` first``); ``StoreUnavailable`` (exit 1) for a
    server not reachable or a locked file. A SQLite URI (``?uri=true``) is opened as given."""
    where, names, revision = _ledger_state(url)
    newest = head()
    if "events" not in names and revision is None:
        raise StoreError(f"{where} holds no portgate ledger (no ledger tables); a what-if stores "
                         "nothing and creates none: create the ledger with `portgate ledger migrate "
                         "--db URL`")
    if revision != newest:
        raise StoreError(f"{where}: the ledger is at revision {revision or 'none'}, this software "
                         f"reads {newest}; a what-if writes nothing, not even an upgrade: run "
                         "`portgate ledger migrate --db URL` first")


def existing_ledger(url: str) -> None:
    """Check, writing nothing (a SQLite file read-only, as ``require_ledger``), that the database at
    ``url`` holds a portgate ledger that ``upgrade`` may bring to the newest revision: one at any of
    portgate's revisions, or the office tables (``events``) without one (``create_all``, adopted by
    ``upgrade``). For the commands that write to a ledger but never make one (``portgate pay --db``,
    ``pay close``): ``portgate ledger migrate`` (or ``portgate central run``) makes a ledger.

    Raises ``StoreError`` (exit 2) for an empty database (``W holds no portgate ledger (an empty
    database): ...``) and for one holding other tables or another application's Alembic revision
    (``W holds no portgate ledger (other tables: a, b): ...``), both saying to create the ledger with
    ``portgate ledger migrate --db URL``; what ``require_ledger`` raises for a file that is not a
    database, a server not reachable or a locked file."""
    where, names, revision = _ledger_state(url)
    ours = revision is None or revision in {s.revision for s in
                                            ScriptDirectory.from_config(alembic_config()).walk_revisions()}
    if ours and (revision is not None or "events" in names):
        return
    if not names:
        raise StoreError(f"{where} holds no portgate ledger (an empty database): pay creates none, "
                         "create the ledger with `portgate ledger migrate --db URL`")
    shown = ", ".join(sorted(names)[:5]) + (", ..." if len(names) > 5 else "")
    raise StoreError(f"{where} holds no portgate ledger (other tables: {shown}): pay writes nothing "
                     "there, create the ledger with `portgate ledger migrate --db URL` in a database of its own")


def _ledger_state(url: str) -> tuple[str, set[str], str | None]:
    """``(where, tables, revision)`` of the database at ``url`` (password hidden; its table names;
    its Alembic revision or ``None``), read writing nothing (a SQLite file opened ``mode=ro``).
    Raises what ``central.db.read_failure`` makes of a failure."""
    parsed = make_url(url)
    where = parsed.render_as_string(hide_password=True)
    if parsed.get_backend_name() == "sqlite" and parsed.query.get("uri") != "true" and parsed.database:
        ro = f"file:{quote(str(Path(parsed.database).resolve()))}?mode=ro"
        engine = create_engine("sqlite://", creator=lambda: sqlite3.connect(ro, uri=True))
    else:
        engine = make_engine(url)
    try:
        with engine.connect() as conn:
            names = set(inspect(conn).get_table_names())
            revision = MigrationContext.configure(conn).get_current_revision() if names else None
    except SQLAlchemyError as exc:
        raise read_failure(where, engine.dialect.name, exc) from exc
    finally:
        engine.dispose()
    return where, names, revision


def current(url: str) -> str | None:
    """The revision the database at ``url`` is at (``None`` if never migrated)."""
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    except SQLAlchemyError as exc:
        raise StoreError(f"cannot read the revision: {exc}") from exc
    finally:
        engine.dispose()
