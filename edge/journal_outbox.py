"""The outbox of the gate's journal (``edge.journal``): the unsent rows in the order the uplink
publishes them (priority rows first, then by seq) and the sent bookkeeping (``journal_sent``
ranges, marked on each row's own PUBACK). A mixin of ``edge.journal.Journal``.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
import time
from collections.abc import Iterable

import msgspec

from edge.sent_ranges import seq_runs
from portgate.errors import StoreError
from wire import events as wire

HWM_SENT_EVERY_S = 1.0  # see edge.journal_hwm
SEGMENT_SKIP = 64  # an outbox read jumps over sent ranges at least this long (shorter ones: filtered)

_decoder = msgspec.json.Decoder(wire.Event)


class JournalOutbox:
    """The outbox of ``edge.journal.Journal`` (see there for the attributes it shares)."""

    def mark_sent(self, seqs: Iterable[int]) -> None:
        """Mark rows as delivered (called on the PUBACK for each row's own message id).

        ``seqs``: the rows whose own PUBACK arrived, any order; unknown or already-sent seqs are
        ignored. One transaction on ``journal_sent``: the ranges the seqs extend or join are
        rewritten (normally one row), never a neighbour that was not acknowledged.

        This transaction alone is committed with ``synchronous=NORMAL`` (no fsync; the connection is
        set back to ``FULL`` for appends before the lock is released): a mark is only a hint that the
        broker has the event. Losing it in a power cut makes the uplink publish the row again and the
        office drops the duplicate by event id; an fsync per PUBACK group would instead stall the
        drain and wear the SD card. Also refreshes the ``.hwm`` file (highest seq sent), at most every
        ``HWM_SENT_EVERY_S`` (the rest at the next append's, mark's or close's rewrite). Raises
        ``StoreError`` if the update fails (nothing marked; the caller keeps the rows pending).
        """
        with self._lock:
            first, last = self._first, self._last_seq
            runs = [(max(lo, first), min(hi, last)) for lo, hi in seq_runs(seqs) if hi >= first and lo <= last]
            merged, added, touched, gone = self._sent.merge(runs)
            if not added:
                return
            try:
                try:
                    self._conn.execute("PRAGMA synchronous=NORMAL")
                    self._conn.execute("BEGIN IMMEDIATE")
                    if gone:
                        self._conn.executemany("DELETE FROM journal_sent WHERE lo = ?", [(lo,) for lo in gone])
                    self._conn.executemany("INSERT OR REPLACE INTO journal_sent (lo, hi) VALUES (?, ?)", touched)
                    self._conn.execute("COMMIT")
                except sqlite3.Error:
                    if self._conn.in_transaction:
                        self._conn.execute("ROLLBACK")
                    raise
                finally:
                    self._conn.execute("PRAGMA synchronous=FULL")  # appends stay fsync'd (STYLE.md 7)
            except sqlite3.Error as exc:
                raise StoreError(f"journal mark_sent failed: {exc}") from exc
            self._sent = merged
            self._depth -= added
            self._low = merged.first_unsent(self._low)
            if self._high:
                for seq in [s for s in self._high if merged.covers(s)]:
                    del self._high[seq]
            self._sent_hwm = max(self._sent_hwm, runs[-1][1])
            mono = time.monotonic()
            if mono >= self._hwm_sent_due:
                self._write_hwm(None)
                self._hwm_sent_due = mono + HWM_SENT_EVERY_S

    # -- reading -------------------------------------------------------------------------------

    def outbox_batch(self, limit: int) -> list[wire.Event]:
        """Up to ``limit`` unsent events, priority 1 first, then by seq ascending."""
        return [_decoder.decode(body) for _seq, body in self.outbox_wire(limit)]

    def outbox_wire(self, limit: int) -> list[tuple[int, bytes]]:
        """``outbox_batch`` as stored: up to ``limit`` ``(seq, wire bytes)`` of unsent events in the
        same order. The bytes are ``wire.events.encode`` of the signed event, written once by
        ``append``; the uplink publishes them as they are (no decode and re-encode per event)."""
        return self.outbox_after(0, limit)[0]

    def outbox_after(self, after: int, limit: int) -> tuple[list[tuple[int, bytes]], int]:
        """``(rows, through)``: up to ``limit`` unsent rows as ``outbox_wire``, but of the ordinary
        (priority 0) rows only those with seq > ``after``: every unsent priority row first (they are
        few), then ordinary rows in seq order. ``through`` (>= ``after``): every unsent ordinary
        row with ``after < seq <= through`` is in ``rows``, so the next read may start after it.

        The uplink passes the highest ordinary seq it has handed to the client, so rows in flight or
        acknowledged are not read again (``after=0``: from the lowest unsent row)."""
        rows: list[tuple[int, bytes]] = []
        with self._lock:
            conn, sent, last = self._conn, self._sent, self._last_seq
            if self._high:
                high = sorted(self._high, key=lambda s: (-self._high[s], s))[:limit]
                bodies: dict[int, bytes] = {}
                for i in range(0, len(high), 500):
                    part = high[i:i + 500]
                    bodies.update(conn.execute(
                        f"SELECT seq, body FROM journal WHERE seq IN ({','.join('?' * len(part))})", part))
                rows = [(s, bodies[s]) for s in high if s in bodies]
            through = after
            pos = max(after + 1, self._low)
            while len(rows) < limit:
                pos = sent.first_unsent(pos)
                if pos > last:
                    through = max(through, last)
                    break
                through = max(through, pos - 1)  # what lies below pos is sent or already read
                end, nxt = last, sent.next_range(pos)
                while nxt is not None:  # short sent ranges are read and filtered, long ones jumped
                    if nxt[1] - nxt[0] + 1 >= SEGMENT_SKIP:
                        end = nxt[0] - 1
                        break
                    nxt = sent.next_range(nxt[1])
                want = limit - len(rows)
                got = conn.execute(
                    "SELECT seq, body FROM journal WHERE seq BETWEEN ? AND ? AND priority <= 0 ORDER BY seq LIMIT ?",
                    (pos, end, want)).fetchall()
                inside = sent.next_range(pos - 1)  # a short sent range within pos..end: filter
                rows += [r for r in got if not sent.covers(r[0])] if inside and inside[0] <= end else got
                if len(got) < want:  # the segment is read to its end
                    through, pos = max(through, end), end + 1
                else:
                    through, pos = max(through, got[-1][0]), got[-1][0] + 1
        return rows, through

    def _unsent_rows(self, low: int) -> int:
        """The outbox's depth at open: the rows from ``low`` (no unsent row below it) that no sent
        range holds, counted on the rowid from ``low`` (the unsent tail), never over the whole file."""
        rows = self._conn.execute("SELECT count(*) FROM journal WHERE seq >= ?", (low,)).fetchone()[0]
        return rows - sum(hi - max(lo, low) + 1 for lo, hi in self._sent if hi >= low)

    def outbox_depth(self) -> int:
        """Number of unsent events."""
        return self._depth

    def oldest_unsent_at(self) -> dt.datetime | None:
        """``occurred_at`` of the unsent event with the lowest seq, or None if the outbox is empty
        (or the journal is already closed: a status sent while the gate stops)."""
        with self._lock:
            if self._conn is None:
                return None
            if self._low > self._last_seq:
                return None
            row = self._conn.execute("SELECT created_at FROM journal WHERE seq = ?", (self._low,)).fetchone()
        return dt.datetime.fromisoformat(row[0]) if row else None

    def sent_through(self) -> int:
        """The highest ``n`` such that every event ``1..n`` is marked sent (0 if none): what the
        gate tells the office it has delivered (``GateStatus.sent_seq``)."""
        return self._low - 1
