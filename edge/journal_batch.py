"""One group commit of the gate's journal (``edge.journal.Journal.batch``): the events of any number
of reads signed at once and written in one transaction, with one fsync.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING

import msgspec

from edge.rules.model import Now
from edge.sqlite_files import disk_full
from portgate.errors import StoreError
from wire import chain
from wire import events as wire

if TYPE_CHECKING:
    from edge.journal import Journal

PRIORITY_NORMAL = 0
PRIORITY_HIGH = 1  # confiscations, alerts: jump the outbox queue (G10)


def _kind(payload: wire.Payload) -> str:
    return type(payload).__struct_config__.tag  # "tap" | "confiscation" | "meal_worked" | "reader" | "alert" | "coverage"



class JournalBatch:
    """Events appended under one transaction (``Journal.batch``). ``add`` gives each event its seq,
    event id, ``prev`` hash and signature at once (the caller needs them to decide the next read);
    ``commit`` writes them all and fsyncs once. Not thread-safe on its own: it lives inside the
    journal's lock."""

    def __init__(self, journal: Journal) -> None:
        self._j = journal
        self._seq = journal._last_seq
        self._head = journal._head
        self._rows: list[tuple] = []
        self._payloads: list[wire.Payload] = []
        self._report: wire.AlertPayload | None = None
        self._first_at: dt.datetime | None = None
        self._done = False
        self.committed = False  # True once ``commit`` wrote the batch

    def __len__(self) -> int:
        return len(self._rows)

    def add(
        self, payloads: Sequence[wire.Payload], *, now: Now, priority: int = PRIORITY_NORMAL
    ) -> list[wire.Event]:
        """The signed events of ``payloads`` (consecutive seqs after everything added before),
        not yet committed. The first ``add`` of a batch after appends were refused for a full disk
        also carries the ``DISK_FULL_REFUSED`` alert, just before its events (see the module)."""
        if self._done:
            raise RuntimeError("journal batch already committed")
        j = self._j
        occurred = now.wall.astimezone(dt.UTC)
        created = occurred.isoformat()
        todo = [(p, priority) for p in payloads]
        skip = 0
        if not self._rows and self._report is None:
            self._report = j._refusal_alert()
            if self._report is not None:
                todo.insert(0, (self._report, PRIORITY_HIGH))
                skip = 1
        if self._first_at is None:
            self._first_at = occurred
        out: list[wire.Event] = []
        signer, key = j._signer, j._key
        for payload, prio in todo:
            self._seq += 1
            event = wire.Event(
                event_id=wire.new_event_id(),
                port=j.port,
                gate_id=j.gate_id,
                boot_id=j.boot_id,
                seq=self._seq,
                occurred_at=occurred,
                clock_trusted=now.clock_trusted,
                mono_ns=now.mono_ns,
                payload=payload,
            )
            if signer is not None:
                event, self._head = chain.seal(msgspec.structs.replace(event, prev=self._head), signer, key)
                body = wire.encode(event)
            else:
                event, body = wire.sign_encoded(event, key)
            out.append(event)
            self._rows.append((self._seq, event.event_id, prio, _kind(payload), body, created))
        self._payloads.extend(payloads)
        return out[skip:]

    def commit(self) -> None:
        """Write every event added in ONE transaction and COMMIT it (fsync). Raises ``StoreError``
        if the commit fails (disk full, I/O error): then nothing was written and no seq is used;
        the refused reads are counted for the ``DISK_FULL_REFUSED`` alert."""
        if self._done:
            raise RuntimeError("journal batch already committed")
        self._done = True
        j, rows = self._j, self._rows
        if not rows:
            return
        sql = ("INSERT INTO journal (seq, event_id, priority, kind, body, created_at)"
               " VALUES (?, ?, ?, ?, ?, ?)")
        try:
            if len(rows) == 1:
                j._conn.execute(sql, rows[0])
            else:
                j._conn.execute("BEGIN IMMEDIATE")
                try:
                    j._conn.executemany(sql, rows)
                    j._conn.execute("COMMIT")
                except BaseException:
                    if j._conn.in_transaction:  # SQLite rolls back by itself on SQLITE_FULL
                        j._conn.execute("ROLLBACK")
                    raise
        except sqlite3.Error as exc:
            if disk_full(exc):
                j._refuse(self._payloads, self._first_at or dt.datetime.now(dt.UTC))
            raise StoreError(f"journal append failed: {exc}") from exc
        j._last_seq = self._seq
        if j._signer is not None:
            j._head = self._head
        j._depth += len(rows)
        for row in rows:
            if row[2] > 0:
                j._high[row[0]] = row[2]
        if self._report is not None:
            j._reported(self._report)
        self.committed = True
