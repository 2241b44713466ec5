"""Run the office database migrations programmatically (Alembic, ``central/migrations``).

``upgrade(url)`` brings a database (SQLite or PostgreSQL) to the newest revision; the services call
it at start-up and ``portgate ledger migrate --db URL`` calls it by hand. Safe to run twice.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect
from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError, SQLAlchemyError

from central.db import load_all_tables, make_engine
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

    Raises ``StoreUnavailable`` if a database server cannot be reached (exit 1: systemd retries),
    ``StoreError`` if a migration fails (message: the driver's first line).
    """
    url = engine.url.render_as_string(hide_password=False)
    try:
        with engine.begin() as conn:
            cfg = alembic_config(url)
            cfg.attributes["connection"] = conn
            names = set(inspect(conn).get_table_names())
            if "alembic_version" not in names and "events" in names:
                load_all_tables().create_all(conn, checkfirst=True)
                command.stamp(cfg, "head")
            command.upgrade(cfg, revision)
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    except SQLAlchemyError as exc:
        where = engine.url.render_as_string(hide_password=True)
        orig = getattr(exc, "orig", None) or exc
        first = (str(orig).strip().splitlines() or [type(orig).__name__])[0]
        if isinstance(exc, OperationalError) and engine.dialect.name != "sqlite":
            raise StoreUnavailable(f"database {where} not reachable: {first}") from exc
        raise StoreError(f"migration of {where} failed: {first}") from exc


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
