"""Opening the gate's local store file (``edge.store``): connect, claim the write lock, check the
tables are a store's, create the missing ones, upgrade an older layout, and probe that the file can
be written, before the store reads anything from it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import structlog

from edge import store_schema as t
from edge.effects import is_gate_confiscation
from edge.sqlite_files import (
    BUSY_TIMEOUT_S,
    OPEN_BUSY_TIMEOUT_S,
    WAL_PRAGMAS,
    claim_write,
    is_locked,
)
from portgate.errors import StoreError, StoreLocked

log = structlog.get_logger(__name__)


def open_db(path: Path) -> sqlite3.Connection:
    """The store's connection to ``path`` (WAL, ``synchronous=NORMAL``), its tables made or upgraded
    and committed. Raises ``StoreError`` (one line; the connection closed, the file left in place)
    when the file cannot be written or its tables are not a store's, ``StoreLocked`` (nothing
    changed) when another process holds a lock on it past ``OPEN_BUSY_TIMEOUT_S``."""
    db = None
    try:
        # implicit BEGIN before a write (sqlite3's default): commit()/rollback() end it
        db = sqlite3.connect(path, check_same_thread=False, timeout=OPEN_BUSY_TIMEOUT_S)
        _pragmas(db)
        claim_write(db, path)  # another process writing: StoreLocked before anything is changed
        db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        problem = t.layout_problem(tables)
        if problem is not None:
            raise StoreError(f"store {path}: {problem}; move the file aside")
        if "blocklist" in tables and "office_blocks" not in tables:
            _upgrade_blocklist(db, path)
            tables.add("office_blocks")
        for table in t.TABLES:  # a new file (no tables, layout_problem): each made with its indexes
            if table.name not in tables:
                for ddl in (table.ddl, *table.indexes):
                    db.execute(ddl)
        for ddl in (*t.CARD_BITS_INDEXES, t.PENDING_FLAGS_AT_INDEX):  # also on files made before these
            db.execute(ddl)
        db.commit()
        _probe_write(db, path)
        return db
    except sqlite3.Error as exc:
        if db is not None:
            db.close()
        if is_locked(exc):
            raise StoreLocked(path) from exc
        raise StoreError(f"store {path}: {exc}") from exc
    except StoreError:
        if db is not None:
            db.close()
        raise


def _probe_write(db: sqlite3.Connection, path: Path) -> None:
    """Write one ``meta`` row inside a transaction and roll it back: raises ``StoreError`` when the
    file cannot be written (read-only file, directory or mount), which SQLite only says at the
    first write."""
    try:
        db.execute("INSERT OR REPLACE INTO meta (\"key\", value) VALUES ('write_probe', '')")
    except sqlite3.Error as exc:
        if is_locked(exc):
            raise StoreLocked(path) from exc
        raise StoreError(f"store {path} cannot be written: {exc}") from exc
    finally:
        db.rollback()


def _upgrade_blocklist(db: sqlite3.Connection, path: Path) -> None:
    """Upgrade a store file written before ``office_blocks`` existed: its ``blocklist`` held both the
    cards confiscated at this gate and the office's blocks. Rows whose reason is not a gate
    confiscation (``edge.effects.is_gate_confiscation``: "confiscated: <flag>"; the office's reasons
    are plain statuses such as "confiscated", "lost", "replaced") move to ``office_blocks``, so the
    next office snapshot governs them (a card returned before the upgrade is admitted again); the
    gate's own confiscations stay in ``blocklist``. One transaction, which also creates
    ``office_blocks``: a crash leaves the old file as it was, upgraded at the next open. Raises
    ``sqlite3.Error`` (the caller reports a ``StoreError``)."""
    try:
        db.execute("BEGIN IMMEDIATE")  # sqlite3 does not begin a transaction before DDL
        rows = db.execute("SELECT uid, reason, at FROM blocklist").fetchall()
        office = [r for r in rows if not is_gate_confiscation(r[1])]
        db.execute(t.office_blocks.ddl)
        if office:
            db.executemany("INSERT INTO office_blocks (uid, reason, at) VALUES (?, ?, ?)", office)
            db.execute("DELETE FROM blocklist WHERE uid IN (SELECT uid FROM office_blocks)")
        db.commit()
    except BaseException:
        db.rollback()
        raise
    log.info("store_upgraded", path=str(path), office_blocks=len(office), kept_local=len(rows) - len(office))



def _pragmas(db: sqlite3.Connection) -> None:
    cur = db.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA cache_size=-2000")
    for pragma in WAL_PRAGMAS:  # the -wal file stays near 1 MiB (edge.sqlite_files)
        cur.execute(pragma)
    cur.close()
