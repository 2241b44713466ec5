"""Run the office database migrations programmatically (Alembic, ``central/migrations``).

``upgrade(url)`` brings a database (SQLite or PostgreSQL) to the newest revision; the services call
it at start-up and ``portgate ledger migrate --db URL`` calls it by hand. Safe to run twice.

Alembic is imported only where a migration may run: a ledger already at the newest revision (every
start of a service but the first after an upgrade) is recognised by reading its ``alembic_version``
row in the same locked transaction (``head_revision``: the newest revision read from the version
files' ``revision`` and ``down_revision`` lines), ~0.15 s of CPU less a process start (issue 32).
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from sqlalchemy import create_engine, func, inspect, select, table, text
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import OperationalError, SQLAlchemyError

from central.db import load_all_tables, make_engine, read_failure
from portgate.errors import StoreError, StoreUnavailable

if TYPE_CHECKING:
    from alembic.config import Config  # lazy: only a migration needs Alembic (issue 32)

MIGRATIONS = Path(__file__).resolve().parent.parent / "migrations"
_REVISION = re.compile(r"^revision\s*(?::\s*str\s*)?=\s*['\"](\w+)['\"]\s*$", re.MULTILINE)
_DOWN = re.compile(r"^down_revision\s*(?::[^=]+)?=\s*(.+?)\s*$", re.MULTILINE)


def alembic_config(url: str | None = None) -> Config:
    """An Alembic ``Config`` pointing at ``central/migrations`` (and at ``url`` if given)."""
    from alembic.config import Config  # lazy: only a migration needs Alembic (issue 32)

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    if url:
        cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def head() -> str:
    """The newest revision id in ``central/migrations/versions``."""
    from alembic.script import ScriptDirectory  # lazy: only a migration needs Alembic (issue 32)

    return ScriptDirectory.from_config(alembic_config()).get_current_head()


@lru_cache(maxsize=1)
def head_revision() -> str | None:
    """The newest revision id read from the version files' ``revision = '...'`` and
    ``down_revision = ...`` lines without importing Alembic: the one revision no other names as its
    ``down_revision``. ``None`` when that is not one revision (two heads, a line not read), and the
    callers then ask Alembic (``head``); tests/central/ledger/test_migrate_at_head.py checks it is
    ``head()``."""
    revisions, downs = set(), set()
    for path in (MIGRATIONS / "versions").glob("[!_]*.py"):
        source = path.read_text(encoding="utf-8")
        found, down = _REVISION.findall(source), _DOWN.findall(source)
        if len(found) != 1 or len(down) != 1:
            return None
        revisions.add(found[0])
        downs.update(re.findall(r"['\"](\w+)['\"]", down[0]))
    heads = revisions - downs
    return heads.pop() if len(heads) == 1 else None


def _at_head(conn: Connection) -> str | None:
    """The revision of the ledger behind ``conn`` if it is the newest (``head_revision``), read with
    plain SQL from Alembic's ``alembic_version`` table; else ``None`` (no such table, another
    revision, several rows: Alembic decides)."""
    newest = head_revision()
    if newest is None or not inspect(conn).has_table("alembic_version"):
        return None
    rows = conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
    return newest if rows == [newest] else None


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
                at = _at_head(conn) if revision == "head" else None
                if at is None:
                    _run_alembic(conn, url, revision)
        if at is not None:  # nothing to migrate (checked under the same lock as a migration)
            load_all_tables()  # as Alembic's env.py does: every table known to the process
            return at
        from alembic.runtime.migration import MigrationContext  # lazy: only a migration needs Alembic (issue 32)

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


def _run_alembic(conn: Connection, url: str, revision: str) -> None:
    """Alembic's ``upgrade`` to ``revision`` on ``conn`` (in ``upgrade_engine``'s transaction),
    a database without bookkeeping adopted first (``_adopt``)."""
    from alembic import command  # lazy: only a migration needs Alembic (issue 32)

    cfg = alembic_config(url)
    cfg.attributes["connection"] = conn
    _adopt(conn, cfg)
    command.upgrade(cfg, revision)


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
    from alembic import command  # lazy: only a migration needs Alembic (issue 32)
    from alembic.runtime.migration import MigrationContext  # lazy: only a migration needs Alembic (issue 32)

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
    newest = head_revision() or head()
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
    ours = revision is None or revision == head_revision() or revision in _revisions()
    if ours and (revision is not None or "events" in names):
        return
    if not names:
        raise StoreError(f"{where} holds no portgate ledger (an empty database): pay creates none, "
                         "create the ledger with `portgate ledger migrate --db URL`")
    shown = ", ".join(sorted(names)[:5]) + (", ..." if len(names) > 5 else "")
    raise StoreError(f"{where} holds no portgate ledger (other tables: {shown}): pay writes nothing "
                     "there, create the ledger with `portgate ledger migrate --db URL` in a database of its own")


def _revisions() -> set[str]:
    """Every revision id of ``central/migrations/versions`` (Alembic's reading)."""
    from alembic.script import ScriptDirectory  # lazy: only a migration needs Alembic (issue 32)

    return {s.revision for s in ScriptDirectory.from_config(alembic_config()).walk_revisions()}


def _revision_of(conn: Connection, names: set[str]) -> str | None:
    """The Alembic revision of the database behind ``conn`` (its tables: ``names``): the one row of
    ``alembic_version`` read with plain SQL; Alembic reads any other state (and refuses what it
    refuses)."""
    if "alembic_version" not in names:
        return None
    rows = conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
    if len(rows) == 1:
        return rows[0]
    from alembic.runtime.migration import MigrationContext  # lazy: only a migration needs Alembic (issue 32)

    return MigrationContext.configure(conn).get_current_revision()


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
            revision = _revision_of(conn, names)
    except SQLAlchemyError as exc:
        raise read_failure(where, engine.dialect.name, exc) from exc
    finally:
        engine.dispose()
    return where, names, revision


def current(url: str) -> str | None:
    """The revision the database at ``url`` is at (``None`` if never migrated)."""
    from alembic.runtime.migration import MigrationContext  # lazy: only a migration needs Alembic (issue 32)

    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    except SQLAlchemyError as exc:
        raise StoreError(f"cannot read the revision: {exc}") from exc
    finally:
        engine.dispose()
