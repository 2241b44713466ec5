"""The journal's WAL checkpoint, run after the light (``edge.journal``; issue 32 item 4).

SQLite's automatic checkpoint runs inside the commit that takes the write-ahead log past
``wal_autocheckpoint`` pages: on the gate that was a tap's journal commit, before its light, and it
copies ~256 pages into the database file and fsyncs it (up to 30 ms of CPU; a read that paid for it
waited 0.4-1.3 s inside a quarter-core quota). The journal's connection turns it off
(``sqlite_files.JOURNAL_WAL_PRAGMAS``: ``wal_autocheckpoint=0``) and runs the same checkpoint at the
end of each ``Journal.batch`` block instead: after the gate loop has shown the batch's lights and
committed the store, and on the loop's idle tick (every ``tick_s``, which opens an empty batch).

When: the WAL holds ``WAL_AUTOCHECKPOINT_PAGES`` frames not yet copied into the database, read from
the wal-index header in the ``-shm`` file (``mxFrame`` at byte 16, ``nBackfill`` at byte 96, native
byte order, https://www.sqlite.org/walformat.html; one ``pread`` of 100 bytes per batch, on a
descriptor kept open: see ``WalCheckpoint``). How:
``PRAGMA wal_checkpoint(PASSIVE)``, as SQLite's own: it never waits for a reader (the display's
follower, ``portgate edge verify-journal``) and copies what no reader still needs; the next commit
then writes the WAL from its start again, in place, and ``journal_size_limit`` keeps the file near
1 MiB. So the ``-wal`` file stays as bounded as with the automatic checkpoint. A checkpoint that
fails (a full disk, an I/O error) is logged once and tried again after another eighth of the
limit; the gate keeps deciding (its events are committed in the WAL, ``synchronous=FULL``, before
each light: durability does not depend on the checkpoint).
"""

from __future__ import annotations

import os
import sqlite3
import struct
from pathlib import Path

import structlog

from edge.sqlite_files import WAL_AUTOCHECKPOINT_PAGES

log = structlog.get_logger(__name__)

WAL_INDEX_VERSION = 3007000  # the wal-index header's iVersion since SQLite 3.7.0
_HEADER = struct.Struct("=I12xI76xI")  # iVersion @0, mxFrame @16, nBackfill @96 (native order)
RETRY_SHARE = 8  # after a failed checkpoint: retry once 1/8 of the limit more is written


def pending_frames(fd: int) -> int | None:
    """Frames in the WAL not yet copied into the database (``mxFrame - nBackfill`` of the wal-index
    header), read through ``fd``, a descriptor open on the ``-shm`` file; None when it is not a
    wal-index this code knows."""
    try:
        head = os.pread(fd, _HEADER.size, 0)
    except OSError:
        return None
    if len(head) < _HEADER.size:
        return None
    version, frames, backfilled = _HEADER.unpack(head)
    if version != WAL_INDEX_VERSION:
        return None
    return max(0, frames - backfilled)


class WalCheckpoint:
    """When and how the journal's WAL is checkpointed (see the module doc).

    ``path``: the database file (its wal-index is ``<path>-shm``); ``page_size``: the database's
    page size in bytes (``PRAGMA page_size``); ``pages``: the frames that make a checkpoint due. Not
    thread-safe on its own: the journal calls it under its lock.

    The ``-shm`` file is opened once (read-only) and kept open until ``close``, which the journal
    calls after closing its connection: closing a descriptor of a file drops every POSIX lock the
    process holds on it, SQLite's own locks on the ``-shm`` included."""

    def __init__(self, path: Path, page_size: int, pages: int = WAL_AUTOCHECKPOINT_PAGES) -> None:
        self.path = path
        self.shm = Path(str(path) + "-shm")
        self.wal = Path(str(path) + "-wal")
        self.wal_limit = 32 + pages * (page_size + 24)  # bytes of a -wal file holding ``pages`` frames
        self.pages = pages
        self._due_at = pages
        self._failing = False
        self._unknown_logged = False
        self._fd: int | None = None

    def _frames(self) -> int | None:
        if self._fd is None:
            try:
                self._fd = os.open(self.shm, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                return None
        return pending_frames(self._fd)

    def close(self) -> None:
        """Close the ``-shm`` descriptor; call it only after the connection to the file is closed."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def due(self) -> bool:
        """True when the WAL holds the frames that make a checkpoint due. A ``-shm`` file that
        cannot be read as a wal-index (logged once): due whenever the ``-wal`` file is as large as
        ``pages`` frames (it is never smaller once it has been: a checkpoint after each batch)."""
        frames = self._frames()
        if frames is not None:
            return frames >= self._due_at
        if not self._unknown_logged:
            log.warning("journal_wal_index_unknown", path=str(self.shm))
            self._unknown_logged = True
        try:
            return os.stat(self.wal).st_size >= self.wal_limit
        except OSError:
            return False

    def run(self, conn: sqlite3.Connection) -> bool:
        """``PRAGMA wal_checkpoint(PASSIVE)`` on ``conn`` (the journal's connection, no transaction
        open): never waits for a reader. Returns True when it ran; False when it failed
        (``sqlite3.Error``, logged once per run of failures as ``journal_checkpoint_failed``; never
        raised), tried again once ``1/RETRY_SHARE`` of the limit more is written."""
        try:
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        except sqlite3.Error as exc:
            self._due_at = max(self._frames() or 0, self.pages) + self.pages // RETRY_SHARE
            if not self._failing:  # once per run of failures: the gate may be on a full disk for hours
                log.warning("journal_checkpoint_failed", path=str(self.path), error=str(exc))
            self._failing = True
            return False
        if self._failing:
            log.info("journal_checkpoint_recovered", path=str(self.path))
        self._failing = False
        self._due_at = self.pages
        return True
