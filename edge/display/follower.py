"""Follow the gate's journal as it is committed, READ-ONLY: never in the gate's decision path.

The journal (``edge.journal``, SQLite in WAL mode) is opened with a ``mode=ro`` URI and
``PRAGMA query_only``: this connection can take no write lock, so the gate's commit never waits for
it; a WAL reader does not block the writer either. ``poll()`` first asks ``PRAGMA data_version``
(changes only when another connection committed: one cheap call per tick) and only then reads the
rows after the last seq seen, in seq order. Every read is a short transaction of its own (a long-
lived read snapshot would hold the gate's WAL checkpoints back).

A missing or unreadable journal (gate never started, file being replaced) is not an error: ``poll``
returns nothing and ``online`` is False until the file can be opened again. A journal the gate
quarantined and started afresh (a new file at the same path, numbering continued) is noticed by its
inode at the next ``outbox()`` call (about every second) and reopened.
"""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
from pathlib import Path

import msgspec
import structlog

from edge.sent_ranges import SentRanges
from wire import events as wire

log = structlog.get_logger(__name__)

_decoder = msgspec.json.Decoder(wire.Event)


def open_ro(path: str | Path) -> sqlite3.Connection:
    """A read-only connection to an SQLite file (``mode=ro`` URI, ``query_only``, autocommit).
    Raises ``sqlite3.Error`` if the file is absent or cannot be opened."""
    path = Path(path)
    if not path.exists():
        raise sqlite3.OperationalError(f"{path}: no such file")
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None,
                           check_same_thread=False, timeout=0.5)
    conn.execute("PRAGMA query_only = 1")
    conn.execute("PRAGMA cache_size = -64")  # 64 KiB: a few pages are read per poll or look-up (RSS <= 40 MB)
    return conn


class JournalFollower:
    """Reads new journal events after ``since`` (a seq; ``tail`` picks the start).

    ``path``: the gate's ``journal.db``. Not thread-safe: one thread polls.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.last_seq = 0
        self._conn: sqlite3.Connection | None = None
        self._version: int | None = None
        self._ino: int | None = None
        self._v0_outbox: tuple[int, tuple[int, dt.datetime | None]] | None = None  # (data_version, outbox)
        self._unknown_logged = False
        self.changes = 0  # how many times poll saw another connection's commit (data_version moved)
        self._seen_version: int | None = None

    @property
    def online(self) -> bool:
        """True while the journal file is open."""
        return self._conn is not None

    def _connect(self) -> sqlite3.Connection | None:
        if self._conn is None:
            try:
                self._ino = os.stat(self.path).st_ino
                self._conn = open_ro(self.path)
                self._version = None
                self._v0_outbox = None
                self._unknown_logged = False
            except (OSError, sqlite3.Error):
                return None
        return self._conn

    def _replaced(self) -> bool:
        """True (and the connection dropped) when another file now has the journal's path."""
        try:
            ino = os.stat(self.path).st_ino
        except OSError:
            ino = None
        if self._conn is not None and ino != self._ino:
            log.warning("display_journal_replaced", path=str(self.path))
            self._conn.close()
            self._conn = None
            return True
        return False

    def _drop(self, exc: Exception) -> None:
        log.warning("display_journal_unreadable", path=str(self.path), error=str(exc))
        if self._conn is not None:
            self._conn.close()
        self._conn = None

    def tail(self, n: int) -> list[wire.Event]:
        """The last ``n`` tap events, with the confiscations among them (restart: the screen shows
        the last reads again, and knows an inspector session already ended), in seq order; sets the
        position to the journal's last seq so ``poll`` returns only what comes after."""
        conn = self._connect()
        if conn is None:
            return []
        try:
            top = conn.execute("SELECT max(seq) FROM journal").fetchone()[0] or 0
            rows = conn.execute(
                "SELECT body FROM journal WHERE kind IN ('tap', 'confiscation') ORDER BY seq DESC LIMIT ?",
                (2 * n,),  # a confiscation rides with its tap (G10): at most one per tap
            ).fetchall()
        except sqlite3.Error as exc:
            self._drop(exc)
            return []
        self.last_seq = top
        events = [_decoder.decode(r[0]) for r in reversed(rows)]
        taps = [i for i, e in enumerate(events) if isinstance(e.payload, wire.TapPayload)]
        return events[taps[-n]:] if len(taps) > n else events

    def poll(self, limit: int = 100) -> list[wire.Event]:
        """Events committed since the last call (seq ascending), at most ``limit``; [] if none or
        the journal cannot be read. A body that does not decode is skipped (logged)."""
        conn = self._connect()
        if conn is None:
            return []
        try:
            version = conn.execute("PRAGMA data_version").fetchone()[0]
            if version != self._seen_version:
                self._seen_version = version
                self.changes += 1
            if version == self._version:
                return []
            rows = conn.execute(
                "SELECT seq, body FROM journal WHERE seq > ? ORDER BY seq LIMIT ?", (self.last_seq, limit)
            ).fetchall()
        except sqlite3.Error as exc:
            self._drop(exc)
            return []
        if len(rows) < limit:
            self._version = version  # everything up to this version was read
        out: list[wire.Event] = []
        for seq, body in rows:
            self.last_seq = seq
            try:
                out.append(_decoder.decode(body))
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                log.warning("display_event_undecodable", seq=seq, error=str(exc))
        return out

    def outbox(self) -> tuple[int | None, dt.datetime | None]:
        """``(unsent events, created_at of the oldest unsent)``; ``(None, None)`` when it cannot be
        told (journal unreadable, tables of no known layout): never a false 0. The journal's rows are
        ``first..last`` and its sent seqs ranges (``journal_sent``, see ``edge.journal``): both are
        read in one short transaction, by primary key only. A version-0 journal (a ``sent`` column
        per row, before the gate upgraded it) is counted by that column, once per change of the file
        (``PRAGMA data_version``: a full scan)."""
        self._replaced()
        conn = self._connect()
        if conn is None:
            return None, None
        try:
            conn.execute("BEGIN")
            try:
                tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
                if "journal_sent" in tables:
                    return self._outbox_ranges(conn)
                if "journal" in tables and "sent" in {r[1] for r in conn.execute("PRAGMA table_info(journal)")}:
                    return self._outbox_column(conn)
                if not tables:
                    return 0, None  # a new file the gate has not written yet
            finally:
                conn.execute("COMMIT")
        except sqlite3.Error as exc:
            self._drop(exc)
            return None, None
        if not self._unknown_logged:  # once per opening, not every second
            log.warning("display_journal_layout_unknown", path=str(self.path), tables=sorted(tables))
            self._unknown_logged = True
        return None, None

    @staticmethod
    def _outbox_ranges(conn: sqlite3.Connection) -> tuple[int, dt.datetime | None]:
        first, last = conn.execute("SELECT min(seq), max(seq) FROM journal").fetchone()
        if last is None:
            return 0, None
        sent = SentRanges((max(lo, first), min(hi, last))
                          for lo, hi in conn.execute("SELECT lo, hi FROM journal_sent"))
        low = sent.first_unsent(first)
        if low > last:
            return 0, None
        row = conn.execute("SELECT created_at FROM journal WHERE seq = ?", (low,)).fetchone()
        depth = last - first + 1 - sent.count()
        return depth, dt.datetime.fromisoformat(row[0]) if row else None

    def _outbox_column(self, conn: sqlite3.Connection) -> tuple[int, dt.datetime | None]:
        version = conn.execute("PRAGMA data_version").fetchone()[0]
        if self._v0_outbox is not None and self._v0_outbox[0] == version:
            return self._v0_outbox[1]
        depth, low = conn.execute("SELECT count(*), min(seq) FROM journal WHERE sent = 0").fetchone()
        row = conn.execute("SELECT created_at FROM journal WHERE seq = ?", (low,)).fetchone() if low else None
        found = depth, dt.datetime.fromisoformat(row[0]) if row else None
        self._v0_outbox = (version, found)
        return found

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
