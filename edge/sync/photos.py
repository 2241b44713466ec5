"""Worker photos at the gate: content-addressed files under the state directory.

Layout (``state_dir``): ``photos/<sha256 hex>`` holds the image bytes, named by their SHA-256;
``photos.db`` (SQLite, WAL) holds the index ``photos(registration, sha256, size, media_type)`` and
the index version. The screen (``edge.display``) reads both read-only; nothing is kept in memory
(50,000 workers' photos stay on disk).

What arrives through the downlink (``wire.downlink``): ``PhotosSnapshot`` (the whole index at a
version), ``PhotosDelta`` (index rows changed or removed since ``from_version``) and ``PhotoFile``
(the bytes of one photo). A file is accepted only if ``len(data) <= max_bytes`` and
``sha256(data)`` is its name (``BadInput`` otherwise: the gate logs a dead letter, keeps what it
had); it is written to a temporary file and renamed, so a half-written photo is never seen. A
missing photo is not an error: the screen shows a placeholder, the gate decides as before (photos
are never in the decision path).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import re
import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path

import structlog

from portgate.errors import BadInput, StoreError
from wire import PHOTO_MAX_BYTES

log = structlog.get_logger(__name__)

PHOTOS_DB = "photos.db"
PHOTOS_DIR = "photos"
DEFAULT_MAX_BYTES = PHOTO_MAX_BYTES  # one photo (wire.downlink's cap); a gate may set its own cap
MEDIA_TYPES = ("image/jpeg", "image/png", "image/webp")
_SHA = re.compile(r"^[0-9a-f]{64}$")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS photos (
    registration TEXT PRIMARY KEY,
    sha256 TEXT NOT NULL,
    size INTEGER NOT NULL,
    media_type TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS ix_photos_sha ON photos (sha256);
CREATE TABLE IF NOT EXISTS photos_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def check_sha(name: str) -> str:
    """``name`` if it is 64 lower-case hex digits; ``BadInput`` otherwise (also guards paths)."""
    if not isinstance(name, str) or not _SHA.match(name):
        raise BadInput(f"photo name {name!r} is not a SHA-256 in lower-case hex")
    return name


class PhotoStore:
    """The gate's photo files and index. ``state_dir``: the gate's state directory;
    ``max_bytes``: the size cap of one photo. Thread-safe (one lock). Raises ``StoreError`` if the
    index cannot be opened."""

    def __init__(self, state_dir: str | Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.dir = Path(state_dir) / PHOTOS_DIR
        self.dir.mkdir(parents=True, exist_ok=True)
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        try:
            self._conn = sqlite3.connect(Path(state_dir) / PHOTOS_DB, isolation_level=None,
                                         check_same_thread=False, timeout=30)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.executescript(_SCHEMA)
        except sqlite3.Error as exc:
            raise StoreError(f"photo index {state_dir}/{PHOTOS_DB}: {exc}") from exc

    # -- files -----------------------------------------------------------------------------------

    def put(self, sha256: str, data: bytes, media_type: str = "image/jpeg") -> Path:
        """Store one photo file; returns its path. Raises ``BadInput`` when the name is not a
        SHA-256, the media type is not an image type accepted here, the file is larger than
        ``max_bytes`` or its SHA-256 is not its name (nothing is written then)."""
        check_sha(sha256)
        if media_type not in MEDIA_TYPES:
            raise BadInput(f"photo {sha256[:12]}: media type {media_type!r} is not one of {', '.join(MEDIA_TYPES)}")
        if len(data) > self.max_bytes:
            raise BadInput(f"photo {sha256[:12]}: {len(data)} bytes is over the cap of {self.max_bytes}")
        actual = sha256_hex(data)
        if actual != sha256:
            raise BadInput(f"photo {sha256[:12]}: content hash is {actual[:12]}, not its name")
        path = self.dir / sha256
        if path.is_file():
            return path
        tmp = self.dir / f".{sha256}.tmp"
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        return path

    def has(self, sha256: str) -> bool:
        return (self.dir / check_sha(sha256)).is_file()

    def path(self, registration: str) -> Path | None:
        """The photo file of a worker, if indexed and on disk."""
        row = self._query("SELECT sha256 FROM photos WHERE registration = ?", (registration,))
        if not row:
            return None
        p = self.dir / row[0][0]
        return p if p.is_file() else None

    def missing(self) -> list[str]:
        """SHA-256 names indexed but not on disk (the office is asked to send them again)."""
        return [sha for (sha,) in self._query("SELECT DISTINCT sha256 FROM photos", ()) if not (self.dir / sha).is_file()]

    # -- index -----------------------------------------------------------------------------------

    def version(self) -> int | None:
        row = self._query("SELECT value FROM photos_meta WHERE key = 'version'", ())
        return int(row[0][0]) if row else None

    def replace_index(self, version: int, refs: Iterable, at: dt.datetime) -> None:
        """Replace the whole index (a ``PhotosSnapshot``); files no longer indexed are deleted.
        ``refs``: ``wire.downlink.PhotoRef`` values. One transaction; ``StoreError`` on failure."""
        rows = [_row(r) for r in refs]
        self._tx(lambda c: (c.execute("DELETE FROM photos"),
                            c.executemany("INSERT OR REPLACE INTO photos VALUES (?, ?, ?, ?)", rows),
                            _set_version(c, version, at)))
        self.prune()

    def apply_delta(self, from_version: int, to_version: int, upsert: Iterable, remove: Iterable[str],
                    at: dt.datetime) -> bool:
        """Apply a ``PhotosDelta``: returns False (nothing changed) when the index is not at
        ``from_version`` (the caller asks for a snapshot). Files replaced are deleted."""
        if self.version() != from_version:
            return False
        rows = [_row(r) for r in upsert]
        gone = list(remove)
        self._tx(lambda c: (c.executemany("DELETE FROM photos WHERE registration = ?", [(g,) for g in gone]),
                            c.executemany("INSERT OR REPLACE INTO photos VALUES (?, ?, ?, ?)", rows),
                            _set_version(c, to_version, at)))
        self.prune()
        return True

    def prune(self) -> int:
        """Delete photo files that no index row names; returns how many."""
        keep = {sha for (sha,) in self._query("SELECT DISTINCT sha256 FROM photos", ())}
        n = 0
        for p in self.dir.iterdir():
            if p.name not in keep and _SHA.match(p.name):
                p.unlink(missing_ok=True)
                n += 1
        return n

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def _query(self, sql: str, params: tuple) -> list[tuple]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def _tx(self, work) -> None:
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                work(self._conn)
                self._conn.execute("COMMIT")
            except sqlite3.Error as exc:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise StoreError(f"photo index write failed: {exc}") from exc


def _row(ref) -> tuple:
    check_sha(ref.sha256)
    return (ref.registration, ref.sha256, int(ref.size), ref.media_type)


def _set_version(c: sqlite3.Connection, version: int, at: dt.datetime) -> None:
    c.execute("INSERT OR REPLACE INTO photos_meta VALUES ('version', ?)", (str(version),))
    c.execute("INSERT OR REPLACE INTO photos_meta VALUES ('updated_at', ?)", (at.isoformat(),))


class PhotoDownlink:
    """Applies the ``photos`` downlink to a ``PhotoStore`` (called by ``edge.sync.Sync``'s pump).

    ``apply(form, msg, received_at)``: ``snapshot`` replaces the index (older or equal versions are
    ignored), ``delta`` patches it (a delta that does not follow the held version returns a
    ``SnapshotRequest`` for the office; an old one is ignored), ``file`` stores one photo if the
    index names it (a file nobody's photo points at is refused, so a stray publisher cannot fill
    the disk). Raises ``BadInput`` for a refused file (hash, size, media type, not indexed)."""

    def __init__(self, store: PhotoStore, gate_id: str) -> None:
        self.store = store
        self.gate_id = gate_id
        self.ignored = 0
        self.refused = 0

    def apply(self, form: str, msg, received_at: dt.datetime):
        from wire.downlink import SnapshotRequest

        have = self.store.version()
        if form == "file":
            if not self.store._query("SELECT 1 FROM photos WHERE sha256 = ? LIMIT 1", (check_sha(msg.sha256),)):
                self.refused += 1
                raise BadInput(f"photo {msg.sha256[:12]}: not in the photo index")
            try:
                self.store.put(msg.sha256, msg.data, msg.media_type)
            except BadInput:
                self.refused += 1
                raise
            return None
        if form == "snapshot":
            if have is not None and msg.version <= have:
                self.ignored += 1
                return None
            self.store.replace_index(msg.version, msg.photos, msg.at)
            log.info("photos_index_replaced", version=msg.version, photos=len(msg.photos),
                     missing=len(self.store.missing()))
            return None
        if have is not None and msg.to_version <= have:
            self.ignored += 1
            return None
        if have != msg.from_version or not self.store.apply_delta(
                msg.from_version, msg.to_version, msg.upsert, msg.remove, msg.at):
            return SnapshotRequest(gate_id=self.gate_id, kind="photos", have_version=have, at=received_at)
        log.info("photos_delta_applied", to_version=msg.to_version, upsert=len(msg.upsert), remove=len(msg.remove))
        return None
