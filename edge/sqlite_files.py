"""Opening the gate's SQLite files safely: integrity check at boot, quarantine of a corrupt file, a
file locked by another process told apart from a corrupt one, the size of the write-ahead log, and
telling a full disk from other write errors.

Locks at open: each open attempt waits at most ``OPEN_BUSY_TIMEOUT_S`` for another process's lock
(``claim_write``), then raises ``StoreLocked`` so the gate service reports it at once, retries and
honours SIGTERM between attempts (``edge.service``); once open, a connection waits up to
``BUSY_TIMEOUT_S`` for a lock (``PRAGMA busy_timeout``).

A corrupt database (``file is not a database``, a failed ``PRAGMA quick_check``) is renamed aside
with a UTC timestamp (``journal.db.corrupt-20260315T010203Z``, together with its ``-wal``/``-shm``
files) and kept for forensics; the caller then creates a fresh file and raises a STORE_QUARANTINED
alert (DESIGN.md, reliability targets).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import sqlite3
from pathlib import Path

import structlog

from portgate.errors import StoreLocked

log = structlog.get_logger(__name__)

OPEN_BUSY_TIMEOUT_S = 0.5  # seconds one open attempt waits for another process's lock
BUSY_TIMEOUT_S = 30.0  # seconds an open connection waits for a lock before a write fails

WAL_AUTOCHECKPOINT_PAGES = 256  # checkpoint the WAL every 256 pages (1 MiB with 4 KiB pages)
WAL_SIZE_LIMIT = 1 << 20  # bytes: the WAL is truncated to this after each checkpoint
# Applied to every connection of the store (the journal's: JOURNAL_WAL_PRAGMAS): without them the -wal file of a 100 KB
# database reaches 4 MiB (SQLite's 1000-page default) and is never given back to the disk.
WAL_PRAGMAS = (
    f"PRAGMA wal_autocheckpoint={WAL_AUTOCHECKPOINT_PAGES}",
    f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT}",
)
# The journal's connection: no automatic checkpoint inside a commit (it would run in the tap's commit,
# before the light); the journal runs the same checkpoint after the light (``edge.journal_wal``).
JOURNAL_WAL_PRAGMAS = (
    "PRAGMA wal_autocheckpoint=0",
    f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT}",
)


def checkpoint(conn, path: Path, *, wait: bool = True) -> bool:
    """``PRAGMA wal_checkpoint(TRUNCATE)`` on an open DB-API connection (sqlite3): copy the WAL into
    the database and truncate it to zero bytes. Best effort: returns False (and logs) when the
    checkpoint could not complete (a reader holds an old snapshot, the disk is full).

    ``wait=False`` (the gate's open and close): no wait for a reader at all (busy timeout 0 for the
    call, then the connection's own again). A reader on an old snapshot (the watchman's screen
    following the journal, ``verify-journal``, a backup) otherwise holds the call for the whole
    ``BUSY_TIMEOUT_S`` (30 s: a SIGTERM'd gate took 30 s to end); SQLite then copies what no
    reader needs, as PASSIVE does, and the rest stays in the ``-wal`` file, committed
    (``synchronous=FULL``): nothing is lost, the next open or checkpoint copies it
    (``sqlite_checkpoint_left``, info)."""
    before = None
    try:
        if not wait:
            before = conn.execute("PRAGMA busy_timeout").fetchone()[0]
            conn.execute("PRAGMA busy_timeout = 0")
        busy, _frames, _done = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    except sqlite3.Error as exc:
        log.warning("sqlite_checkpoint_failed", path=str(path), error=str(exc))
        return False
    finally:
        if before is not None:
            with contextlib.suppress(sqlite3.Error):
                conn.execute(f"PRAGMA busy_timeout = {int(before)}")
    if busy and not wait:
        log.info("sqlite_checkpoint_left", path=str(path), why="a reader holds an older snapshot",
                 frames=_frames, copied=_done)
    return not busy


def disk_full(exc: BaseException) -> bool:
    """True if a sqlite3 error means the file system is full (``SQLITE_FULL``, "database or disk
    is full"); other errors (I/O, corruption, locks) are not."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF == sqlite3.SQLITE_FULL
    return "database or disk is full" in str(exc)


def is_locked(exc: BaseException) -> bool:
    """True if a sqlite3 error means another connection holds a lock on the file (``SQLITE_BUSY``,
    ``SQLITE_LOCKED``: "database is locked"), not that the file is bad."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "database is locked" in str(exc) or "database table is locked" in str(exc)


def claim_write(conn: sqlite3.Connection, path: Path) -> None:
    """Take the write lock and give it back at once (``BEGIN IMMEDIATE``; ``ROLLBACK``), waiting at
    most the connection's busy timeout: raises ``StoreLocked`` naming ``path`` when another process
    holds it (readers do not: WAL). Call it on a connection without an open transaction, before
    the open writes anything."""
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.Error as exc:
        if is_locked(exc):
            raise StoreLocked(path) from exc
        raise
    conn.execute("ROLLBACK")


def check_integrity(path: Path) -> str | None:
    """Return None if ``path`` is absent or a healthy SQLite database, else a one-line reason.

    Opens the file read-only and runs ``PRAGMA quick_check`` (a full scan: about a second per
    100 MB on a Pi-class SD card; done once at boot). Raises ``StoreLocked`` when another process
    locks even readers out (a rollback-journal file in a write transaction, an exclusive locking
    mode): a locked file is not a corrupt one and is never quarantined.
    """
    if not path.exists() or path.stat().st_size == 0:
        return None
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=OPEN_BUSY_TIMEOUT_S)
        try:
            rows = conn.execute("PRAGMA quick_check").fetchall()
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        if is_locked(exc):
            raise StoreLocked(path) from exc
        return f"{type(exc).__name__}: {exc}"
    if rows != [("ok",)]:
        return "quick_check: " + "; ".join(str(r[0]) for r in rows[:5])
    return None


def quarantine(path: Path, reason: str, *, at: dt.datetime | None = None) -> Path:
    """Move ``path`` (and its ``-wal``/``-shm`` side files) aside; return the new main file path."""
    stamp = (at or dt.datetime.now(dt.UTC)).strftime("%Y%m%dT%H%M%S%fZ")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    for suffix in ("", "-wal", "-shm", "-journal"):
        src = Path(str(path) + suffix)
        if src.exists():
            src.rename(Path(str(target) + suffix))
    log.error("sqlite_quarantined", path=str(path), moved_to=str(target), reason=reason)
    return target


def salvage_max(path: Path, sql: str) -> int | None:
    """Best effort: run a one-value query (``SELECT max(seq) ...``) on a quarantined file."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            row = conn.execute(sql).fetchone()
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return None
    return int(row[0]) if row and row[0] is not None else None
