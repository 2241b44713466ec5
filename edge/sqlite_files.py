"""Opening the gate's SQLite files safely: integrity check at boot and quarantine of a corrupt file.

A corrupt database (``file is not a database``, a failed ``PRAGMA quick_check``) is renamed aside
with a UTC timestamp (``journal.db.corrupt-20260315T010203Z``, together with its ``-wal``/``-shm``
files) and kept for forensics; the caller then creates a fresh file and raises a STORE_QUARANTINED
alert (DESIGN.md, reliability targets).
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path

import structlog

log = structlog.get_logger(__name__)


def check_integrity(path: Path) -> str | None:
    """Return None if ``path`` is absent or a healthy SQLite database, else a one-line reason.

    Opens the file read-only and runs ``PRAGMA quick_check`` (a full scan: about a second per
    100 MB on a Pi-class SD card; done once at boot).
    """
    if not path.exists() or path.stat().st_size == 0:
        return None
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows = conn.execute("PRAGMA quick_check").fetchall()
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
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
