"""Read-only look-ups in the gate's state directory for the screen: the worker's name and category
(roster copy in ``store.db``), a union inspector's name (``inspectors.json``, issue 33), the ship's name (escala copy), the worker's photo (``photos.db`` and
``photos/<sha256>``, written by ``edge.sync.photos``) and the age of the office's copies.

Every file is opened with ``edge.display.follower.open_ro`` (``mode=ro``, ``query_only``): the gate's
writes never wait for the screen. A file that is absent or unreadable gives ``None`` / empty
answers (the page shows a placeholder), never an exception.
"""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
from pathlib import Path

import structlog

from edge.display.follower import open_ro
from edge.sync.inspectors import FILE as INSPECTORS_FILE, read_inspectors
from edge.sync.photos import PHOTOS_DB, PHOTOS_DIR

log = structlog.get_logger(__name__)


class _RoFile:
    """One read-only SQLite file, reopened after an error or when another file took its path (a
    quarantined store replaced by a fresh one)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn: sqlite3.Connection | None = None
        self._ino: int | None = None

    def one(self, sql: str, params: tuple = ()) -> tuple | None:
        return self._run(sql, params, all_rows=False)

    def all(self, sql: str, params: tuple = ()) -> list[tuple]:
        return self._run(sql, params, all_rows=True) or []

    def _run(self, sql: str, params: tuple, *, all_rows: bool):
        try:
            ino = os.stat(self.path).st_ino
            if self._conn is not None and ino != self._ino:
                self._conn.close()
                self._conn = None
            if self._conn is None:
                self._conn = open_ro(self.path)
                self._ino = ino
            cur = self._conn.execute(sql, params)
            return cur.fetchall() if all_rows else cur.fetchone()
        except (OSError, sqlite3.Error) as exc:
            if self._conn is not None:
                log.warning("display_lookup_failed", path=str(self.path), error=str(exc))
                self._conn.close()
                self._conn = None
            return None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


class Lookup:
    """Look-ups under the gate's ``state_dir`` (the same directory ``portgate edge run`` uses)."""

    def __init__(self, state_dir: str | Path) -> None:
        self.state_dir = Path(state_dir)
        self._store = _RoFile(self.state_dir / "store.db")
        self._photos = _RoFile(self.state_dir / PHOTOS_DB)
        self._inspectors: dict[str, str] = {}
        self._inspectors_mark: tuple | None = None

    def worker(self, registration: str | None) -> tuple[str, str] | None:
        """``(name, category)`` of a registration in the roster copy, or None."""
        if not registration:
            return None
        row = self._store.one("SELECT name, category FROM workers WHERE registration = ?", (registration,))
        return (row[0], row[1]) if row else None

    def inspector(self, registration: str | None) -> str | None:
        """A union inspector's name from the roster downlink (``edge.sync.inspectors``), or None.
        The file is read again only when it changed (its mtime and size)."""
        if not registration:
            return None
        try:
            st = os.stat(self.state_dir / INSPECTORS_FILE)
            mark = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            return None
        if mark != self._inspectors_mark:
            self._inspectors = read_inspectors(self.state_dir)
            self._inspectors_mark = mark
        return self._inspectors.get(registration) or None

    def ship_name(self, imo: str | None) -> str | None:
        """The ship's name from the escala copy, or None."""
        if not imo:
            return None
        row = self._store.one("SELECT ship_name FROM escala WHERE ship = ? AND ship_name != '' LIMIT 1", (imo,))
        return row[0] if row else None

    def photo(self, registration: str | None) -> tuple[str, Path, str] | None:
        """``(sha256, file path, media type)`` of the worker's photo if its file is on disk and its
        bytes still hash to its name (``photo_intact``); else None (the screen shows the placeholder)."""
        if not registration:
            return None
        row = self._photos.one("SELECT sha256, media_type FROM photos WHERE registration = ?", (registration,))
        if row is None:
            return None
        path = self.state_dir / PHOTOS_DIR / row[0]
        return (row[0], path, row[1]) if photo_intact(path, row[0]) else None

    def copies(self) -> dict[str, dt.datetime | None]:
        """``{copy name: updated_at}`` of the office's copies (roster, escala, ...) in ``store.db``."""
        out: dict[str, dt.datetime | None] = {}
        for name, updated in self._store.all("SELECT name, updated_at FROM versions"):
            out[name] = dt.datetime.fromisoformat(updated) if updated else None
        return out

    def close(self) -> None:
        self._store.close()
        self._photos.close()


def photo_intact(path: Path, sha256: str, max_bytes: int = 4 * 1024 * 1024) -> bytes | None:
    """The bytes of the photo file at ``path`` if they hash to ``sha256`` (and are at most
    ``max_bytes``), else None: missing, unreadable, too big, or changed on disk since it arrived."""
    import hashlib

    try:
        with open(path, "rb") as f:
            data = f.read(max_bytes + 1)
    except OSError:
        return None
    if len(data) > max_bytes or hashlib.sha256(data).hexdigest() != sha256:
        return None
    return data
