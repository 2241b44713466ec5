"""A small SQLite journal implementing ``edge.sync.outbox.Outbox``, used by these tests until the
gate branch's ``edge.journal.Journal`` is merged (same method names and semantics: committed on
append with synchronous=FULL, signed, gapless seq, unsent rows by priority desc then seq asc)."""

from __future__ import annotations

import datetime as dt
import sqlite3
import threading

from wire.events import Event, TapPayload, decode, encode, new_event_id, sign


class SqliteOutbox:
    def __init__(self, path, *, port: str, gate_id: str, key: bytes, boot_id: str) -> None:
        self.port, self.gate_id, self.key, self.boot_id = port, gate_id, key, boot_id
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS journal (seq INTEGER PRIMARY KEY, priority INTEGER NOT NULL,"
            " sent INTEGER NOT NULL DEFAULT 0, occurred_at TEXT NOT NULL, body BLOB NOT NULL)"
        )
        self._db.execute("CREATE INDEX IF NOT EXISTS ix_unsent ON journal(sent, priority DESC, seq)")

    def append(self, payload, *, now, priority: int = 0) -> Event:
        with self._lock:
            seq = self.last_seq_unlocked() + 1
            event = sign(
                Event(
                    event_id=new_event_id(), port=self.port, gate_id=self.gate_id, boot_id=self.boot_id,
                    seq=seq, occurred_at=now.wall, clock_trusted=now.clock_trusted, mono_ns=now.mono_ns,
                    payload=payload,
                ),
                self.key,
            )
            self._db.execute(
                "INSERT INTO journal(seq, priority, occurred_at, body) VALUES (?,?,?,?)",
                (seq, priority, now.wall.isoformat(), encode(event)),
            )
            return event

    def append_many(self, payloads, *, now) -> None:
        """Bulk load for big-backlog tests and benchmarks (one transaction)."""
        with self._lock:
            seq = self.last_seq_unlocked()
            rows = []
            for payload in payloads:
                seq += 1
                event = sign(
                    Event(
                        event_id=new_event_id(), port=self.port, gate_id=self.gate_id, boot_id=self.boot_id,
                        seq=seq, occurred_at=now.wall, clock_trusted=True, mono_ns=now.mono_ns, payload=payload,
                    ),
                    self.key,
                )
                rows.append((seq, 0, now.wall.isoformat(), encode(event)))
            self._db.execute("BEGIN")
            self._db.executemany("INSERT INTO journal(seq, priority, occurred_at, body) VALUES (?,?,?,?)", rows)
            self._db.execute("COMMIT")

    def last_seq_unlocked(self) -> int:
        return self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM journal").fetchone()[0]

    def last_seq(self) -> int:
        with self._lock:
            return self.last_seq_unlocked()

    def outbox_batch(self, limit: int) -> list[Event]:
        with self._lock:
            rows = self._db.execute(
                "SELECT body FROM journal WHERE sent = 0 ORDER BY priority DESC, seq LIMIT ?", (limit,)
            ).fetchall()
        return [decode(r[0]) for r in rows]

    def mark_sent(self, seqs) -> None:
        with self._lock:
            self._db.execute("BEGIN")
            self._db.executemany("UPDATE journal SET sent = 1 WHERE seq = ?", [(s,) for s in seqs])
            self._db.execute("COMMIT")

    def events_between(self, seq_from: int, seq_to: int) -> list[Event]:
        with self._lock:
            rows = self._db.execute(
                "SELECT body FROM journal WHERE seq BETWEEN ? AND ? ORDER BY seq", (seq_from, seq_to)
            ).fetchall()
        return [decode(r[0]) for r in rows]

    def outbox_depth(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM journal WHERE sent = 0").fetchone()[0]

    def oldest_unsent_at(self) -> dt.datetime | None:
        with self._lock:
            row = self._db.execute("SELECT MIN(occurred_at) FROM journal WHERE sent = 0").fetchone()
        return dt.datetime.fromisoformat(row[0]) if row and row[0] else None


def tap(n: int, registration: str = "1001", decision: str = "admit") -> TapPayload:
    return TapPayload(
        uid=f"{n:08X}", reader_id="r1", reader_kind="control", decision=decision, registration=registration
    )
