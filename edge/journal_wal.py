"""The journal's WAL checkpoint, run after the light (``edge.journal``; issue 32 item 4).

SQLite's automatic checkpoint runs inside the commit that takes the write-ahead log past
``wal_autocheckpoint`` pages: on the gate that was a tap's journal commit, before its light, and it
copies ~256 pages into the database file and fsyncs it (up to 30 ms of CPU; a read that paid for it
waited 0.4-1.3 s inside a quarter-core quota). The journal's connection turns it off
(``sqlite_files.JOURNAL_WAL_PRAGMAS``: ``wal_autocheckpoint=0``) and runs the same checkpoint at the
end of each ``Journal.batch`` block instead: after the gate loop has shown the batch's lights and
committed the store, and on the loop's idle tick (every ``tick_s``, which opens an empty batch).

When: the ``-wal`` file has grown to ``WAL_AUTOCHECKPOINT_PAGES`` frames (one ``os.stat``; each
checkpoint truncates the file to zero bytes, so its size counts the frames written since). How:
``PRAGMA wal_checkpoint(TRUNCATE)`` without waiting for readers (``busy_timeout`` 0 for that one
statement): a reader holding a snapshot (the display's follower, ``portgate edge verify-journal``)
leaves the frames it still reads in the WAL and the gate does not wait for it; the truncation is
tried again once another eighth of the limit has been written. A checkpoint that fails (a full
disk, an I/O error) is logged and tried again the same way; the gate keeps deciding (its events are
committed in the WAL, ``synchronous=FULL``, before each light: durability does not depend on the
checkpoint). So the ``-wal`` file stays within the limit plus one batch, as with the automatic
checkpoint, unless a reader keeps a snapshot open (then, as before, until it lets go).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import structlog

from edge.sqlite_files import BUSY_TIMEOUT_S, WAL_AUTOCHECKPOINT_PAGES

log = structlog.get_logger(__name__)

WAL_HEADER = 32  # bytes at the start of a -wal file
FRAME_HEADER = 24  # bytes before each page in a -wal file
RETRY_SHARE = 8  # after a checkpoint that could not truncate: retry once 1/8 of the limit more is written


class WalCheckpoint:
    """When and how the journal's ``-wal`` file is checkpointed (see the module doc).

    ``path``: the database file (its WAL is ``<path>-wal``); ``page_size``: the database's page
    size in bytes (``PRAGMA page_size``); ``pages``: the frames that make a checkpoint due. Not
    thread-safe on its own: the journal calls it under its lock."""

    def __init__(self, path: Path, page_size: int, pages: int = WAL_AUTOCHECKPOINT_PAGES) -> None:
        self.path = path
        self.wal = Path(str(path) + "-wal")
        self.limit = WAL_HEADER + pages * (page_size + FRAME_HEADER)  # bytes of ``pages`` frames
        self._due_at = self.limit
        self._failing = False

    def due(self) -> bool:
        """True when the ``-wal`` file has reached the size that makes a checkpoint due (False when
        it is absent)."""
        try:
            return os.stat(self.wal).st_size >= self._due_at
        except OSError:
            return False

    def run(self, conn: sqlite3.Connection) -> bool:
        """``PRAGMA wal_checkpoint(TRUNCATE)`` on ``conn`` (the journal's connection, no transaction
        open) without waiting for readers. Returns True when the WAL was copied and truncated;
        False when a reader kept it (``busy``) or the checkpoint failed (``sqlite3.Error``, logged
        as ``journal_checkpoint_failed``; never raised): both are tried again after another
        ``1/RETRY_SHARE`` of the limit is written."""
        try:
            conn.execute("PRAGMA busy_timeout = 0")
            try:
                busy, frames, done = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            finally:
                conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        except sqlite3.Error as exc:
            self._retry_later()
            if not self._failing:  # once per run of failures: the gate may be on a full disk for hours
                log.warning("journal_checkpoint_failed", path=str(self.path), error=str(exc))
            self._failing = True
            return False
        if busy:
            self._retry_later()
            log.debug("journal_checkpoint_busy", path=str(self.path), frames=frames, copied=done)
            return False
        if self._failing:
            log.info("journal_checkpoint_recovered", path=str(self.path))
        self._failing = False
        self._due_at = self.limit
        return True

    def _retry_later(self) -> None:
        try:
            size = os.stat(self.wal).st_size
        except OSError:
            size = 0
        self._due_at = max(size, self.limit) + self.limit // RETRY_SHARE
