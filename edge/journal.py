"""The gate's append-only journal and outbox: one SQLite file, WAL, ``synchronous=FULL``.

Every event the gate raises is appended here and COMMITTED before anybody is told about it (the
indicator shows green/red only after ``append`` returns; STYLE.md 7). Each event gets the next
gapless per-gate sequence number, a fresh event id and the HMAC of ``wire.events.sign``. The same
rows are the outbox: a row is unsent until the MQTT publisher calls ``mark_sent`` on the PUBACK for
its own message. Priority-1 rows (confiscations, alerts) leave the outbox before ordinary ones.

Sent bookkeeping (schema version 2, ``PRAGMA user_version``): what was delivered is kept outside
the event rows, in ``journal_sent (lo, hi)``: sorted disjoint inclusive ranges of sent seqs
(``edge.sent_ranges``), normally one range growing at its top plus a few exceptions (priority rows
sent ahead, PUBACKs out of order). A mark rewrites one or two small rows instead of each ~300-byte
event row's page. The rows of one file are gapless (``first..last_seq``); the outbox is every seq
of it not in a range. A file of version 0 (the ``sent`` column of each row) is upgraded at open in
one transaction: its sent rows become ranges, the column stays (no longer read or written) and the
priority index is rebuilt; a file of a newer version is refused (``StoreError``). The tables
decide the version below that (``edge.journal_files.journal_layout``): a version-2 layout labelled
0, 1 or negative (a file restored with ``.dump``, which drops ``user_version``) is labelled 2 again
(logged), any other mismatch is refused with a ``StoreError`` naming it, and so are ``journal_sent``
ranges the gate cannot have written (``edge.journal_files.sent_ranges_problem``: lo > hi, lo < 1,
overlapping, beyond the last seq).

Sequence numbering and quarantine (documented in docs/gate.md): ``seq`` starts at 1 and continues
across restarts (it is ``max(seq) + 1`` of the file). If the file is corrupt at boot it is moved
aside and a fresh file started; numbering then *continues* after the highest sequence number known
from the high-water mark file ``<journal>.hwm`` (rewritten after a ``mark_sent`` at most every
``HWM_SENT_EVERY_S``, every ``HWM_EVERY`` appended seqs and at close; authoritative) and the
quarantined file, read best-effort, believed only if plausible (``hwm <= salvaged <= hwm +
SALVAGE_SLACK``, or there is no hwm file; see ``recovered_floor``). A file that is missing, empty,
without rows or behind the hwm (an older copy restored) while the hwm says seqs were journaled is a
loss handled the same way
(``edge.journal_files.lost_rows``). The first event of the fresh file is
an ``AlertPayload(code="STORE_QUARANTINED")`` whose ``detail`` says, as ``key=value`` words,
``resumed_at=<seq>`` and ``lost_after=<highest seq known to have been sent or -1>``: the office must
treat sequence numbers in ``lost_after+1 .. resumed_at-1`` that never arrive as lost in quarantine
(kept on the device for forensics), not as a gap to replay forever. Numbering never goes backwards,
so the office never sees a repeated (gate, seq) from the same device unless both the file and the
high-water mark were lost.

Disk full (``SQLITE_FULL``): an append raises ``StoreError`` and nothing is written (the gate shows
DENY "falha do registro"); the journal counts the refused appends (reads: tap events; others) with
the time of the first and the last. The first append that commits afterwards carries, in the same
transaction and just before it, one ``AlertPayload(code="DISK_FULL_REFUSED")`` whose ``detail`` says
``refused_reads=<n> refused_other=<n> first=<UTC ISO> last=<UTC ISO>``; ``report_refusals`` writes
it on its own (the uplink calls it every ``check_every_s``, so it is written once space returns
even if no card is read). Reading and publishing need no disk.

WAL size (``sqlite_files.WAL_PRAGMAS``): the write-ahead log is checkpointed every
``WAL_AUTOCHECKPOINT_PAGES`` pages and truncated to ``WAL_SIZE_LIMIT`` bytes after each checkpoint,
and to zero at open and close, so the ``-wal`` file stays near 1 MiB instead of SQLite's 4 MiB.

Signed chain (wire/chain.py, docs/evidence.md): with a ``signer`` (the gate's Ed25519 private key)
every event gets ``prev`` = the hash of the previous event (read back from the last row at start, so
the chain continues across boots) and a signature beside the HMAC. A journal holding unsigned rows,
or signed with another key, gets a ``SIGNING_KEY`` alert first (``rotate_key`` signs it with the
old key). After a quarantine the ``STORE_QUARANTINED`` alert starts a new segment: its ``prev`` is
the head kept in the ``.hwm`` file (third word) and its detail adds ``last_head_seq=<n>
last_head=<hex>``.

Stdlib ``sqlite3`` is used directly here (not SQLAlchemy): the journal is the one write on the hot
path and its cost must stay next to a bare SQLite commit (bench/gate_decision.py).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import msgspec
import structlog

from edge.journal_files import SIDE_FILES, journal_layout, lost_rows, sent_ranges_problem
from edge.rules.model import Now
from edge.sent_ranges import SentRanges
from edge.sqlite_files import (
    BUSY_TIMEOUT_S,
    OPEN_BUSY_TIMEOUT_S,
    WAL_PRAGMAS,
    check_integrity,
    checkpoint,
    claim_write,
    disk_full,
    is_locked,
    quarantine,
    salvage_max,
)
from portgate.errors import StoreError, StoreLocked
from wire import chain
from wire import events as wire

log = structlog.get_logger(__name__)

HWM_EVERY = 64  # the .hwm file is also rewritten every this many appended seqs (cheap: no fsync)
# ... and after a mark_sent at most this often (seconds): its rename costs more than the mark's own
# UPDATE on a busy SD card; a sent seq it misses in a crash only makes lost_after lower (the office
# then counts as lost only seqs that never arrived)
HWM_SENT_EVERY_S = 1.0
SALVAGE_SLACK = 1024  # a seq salvaged from a corrupt file is believed only up to hwm + this

PRIORITY_NORMAL = 0
PRIORITY_HIGH = 1  # confiscations, alerts: jump the outbox queue (G10)

SCHEMA_VERSION = 2  # PRAGMA user_version of the file; 0: sent was a column of each row
_SCHEMA = """
CREATE TABLE IF NOT EXISTS journal (
    seq INTEGER PRIMARY KEY,
    event_id TEXT NOT NULL,
    priority INTEGER NOT NULL DEFAULT 0,
    kind TEXT NOT NULL,
    body BLOB NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS journal_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
# Version 2 on top of either a fresh file or a version-0 one (in one transaction, see _migrate).
_SCHEMA_2 = """
CREATE TABLE IF NOT EXISTS journal_sent (lo INTEGER PRIMARY KEY, hi INTEGER NOT NULL);
DROP INDEX IF EXISTS journal_outbox;
DROP INDEX IF EXISTS journal_outbox_high;
-- Only priority rows are indexed (a partial index is not touched by ordinary inserts, keeping the
-- hot-path commit small), their unsent seqs are held in memory from the open.
CREATE INDEX IF NOT EXISTS journal_high ON journal (seq) WHERE priority > 0;
"""
# version 0 -> 2: each run of consecutive sent rows becomes one range (gaps and islands)
_SENT_FROM_COLUMN = """
INSERT INTO journal_sent (lo, hi)
SELECT min(seq), max(seq) FROM (SELECT seq, seq - row_number() OVER (ORDER BY seq) AS island
                                FROM journal WHERE sent <> 0) GROUP BY island
"""
SEGMENT_SKIP = 64  # an outbox read jumps over sent ranges at least this long (shorter ones: filtered)

_decoder = msgspec.json.Decoder(wire.Event)


def _kind(payload: wire.Payload) -> str:
    return type(payload).__struct_config__.tag  # "tap" | "confiscation" | "meal_worked" | "reader" | "alert" | "coverage"


class Journal:
    """Append-only, signed, gapless event journal + outbox.

    ``path``: the SQLite file (created with its parent directory). ``port``/``gate_id`` go in every
    event; ``key`` is the gate's HMAC key; ``boot_id`` identifies this process start. ``clock`` is
    only used for the quarantine alert's timestamp (default: the system clock).

    Raises ``StoreError`` if the file cannot be created at all (disk full, read-only mount): the
    service must not start. Raises ``StoreLocked`` (nothing changed, nothing quarantined) when
    another process holds a lock on the file for longer than ``sqlite_files.OPEN_BUSY_TIMEOUT_S``:
    the caller may try again. Thread-safe: the gate loop appends while the MQTT thread drains.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        port: str,
        gate_id: str,
        key: bytes,
        boot_id: str,
        clock=None,
        signer=None,
    ) -> None:
        self.path = Path(path)
        self.port = port
        self.gate_id = gate_id
        self.boot_id = boot_id
        self._key = key
        self._signer = signer  # Ed25519PrivateKey or None (HMAC only)
        self._head = chain.GENESIS
        self._lock = threading.Lock()
        self._hwm_path = Path(str(self.path) + ".hwm")
        self.quarantined_to: Path | None = None
        self.path.parent.mkdir(parents=True, exist_ok=True)

        reason = check_integrity(self.path)
        floor = self._read_hwm()
        if reason is None and floor > 0:
            reason = lost_rows(self.path, floor)  # an empty or missing file where rows existed
        if reason is not None:
            existed = self.path.exists()
            if existed or any(Path(str(self.path) + s).exists() for s in SIDE_FILES):
                moved = quarantine(self.path, reason)
                self.quarantined_to = moved if existed else None
            else:
                log.error("journal_file_missing", path=str(self.path), reason=reason)
            salvaged = salvage_max(self.quarantined_to, "SELECT max(seq) FROM journal") if existed else None
            floor = recovered_floor(salvaged, floor if self._hwm_path.exists() and self._hwm_valid() else None)
            log.warning(
                "journal_seq_recovered", path=str(self.path), hwm=self._read_hwm(), hwm_file=self._hwm_path.exists(),
                salvaged=salvaged, chosen=floor, salvage_trusted=salvaged is not None and floor == salvaged,
            )
        self._hwm_written = floor
        self._sent_hwm = self._read_hwm(sent=True)  # highest seq marked sent, as in the .hwm file
        self._hwm_sent_due = 0.0  # monotonic time from which mark_sent rewrites the .hwm file
        self._conn = None
        try:
            self._conn = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=OPEN_BUSY_TIMEOUT_S
            )
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=FULL")
            for pragma in WAL_PRAGMAS:
                self._conn.execute(pragma)
            claim_write(self._conn, self.path)  # another process writing: StoreLocked before any change
            self._conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            self._migrate()
            count, first, top = self._conn.execute("SELECT count(*), min(seq), max(seq) FROM journal").fetchone()
            row = (top,)
            self._last_seq = max(top or 0, floor)  # never go backwards (see module doc)
            self._first = first if first is not None else self._last_seq + 1  # the file holds first..last
            self._sent = SentRanges(
                (max(lo, self._first), min(hi, self._last_seq))
                for lo, hi in self._conn.execute("SELECT lo, hi FROM journal_sent"))
            self._depth = count - self._sent.count()
            self._low = self._sent.first_unsent(self._first)  # no unsent row below this seq
            self._high = {  # unsent priority rows: seq -> priority
                seq: prio for seq, prio in self._conn.execute(
                    "SELECT seq, priority FROM journal WHERE priority > 0 AND seq >= ?", (self._low,))
                if not self._sent.covers(seq)}
        except (sqlite3.Error, StoreError) as exc:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            if isinstance(exc, StoreError):
                raise
            if is_locked(exc):
                raise StoreLocked(self.path) from exc
            raise StoreError(f"journal {self.path}: {exc}") from exc
        self._refused = {"reads": 0, "other": 0}  # appends refused for a full disk, not yet reported
        self._refused_at: list[dt.datetime] = []  # [first, last] refusal time (UTC)
        checkpoint(self._conn, self.path)
        head_seq, head = self._read_hwm_head()
        if row[0]:
            self._head = self._hash_of(row[0])
        elif head is not None:
            self._head = head
        known_key = self._meta("signing_key")

        if reason is not None:
            from wire.events import AlertPayload

            sent_hwm = self._read_hwm(sent=True)
            where = (f"journal quarantined to {self.quarantined_to.name}" if self.quarantined_to is not None
                     else f"journal file {self.path.name} missing")
            detail = (
                f"{where}; reason={reason!r}; "
                f"resumed_at={self._last_seq + 1} lost_after={sent_hwm if sent_hwm else -1}"
            )
            if signer is not None:
                detail += f" last_head_seq={head_seq if head is not None else 0} last_head={self._head}"
                self._set_meta("signing_key", chain.public_raw(signer.public_key()))
            self.append(AlertPayload(code="STORE_QUARANTINED", detail=detail), now=_now(clock), priority=PRIORITY_HIGH)
        elif signer is not None:
            mine = chain.public_raw(signer.public_key())
            if known_key != mine and (row[0] or known_key):
                self._key_event(signer, known_key, clock)
            self._set_meta("signing_key", mine)

    def _migrate(self) -> None:
        """Bring the file to ``SCHEMA_VERSION`` (see the module doc), all in one transaction: a
        crash half-way leaves the old version, upgraded again at the next open. Raises
        ``sqlite3.Error``, or ``StoreError`` for a file newer than this code."""
        c = self._conn
        version = c.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreError(f"journal {self.path}: schema version {version} is newer than this software's "
                             f"({SCHEMA_VERSION}); install the newer gate software or move the file aside")
        layout = journal_layout(c)
        if layout is None or layout.startswith("inconsistent"):
            problem = layout.removeprefix("inconsistent: ") if layout else "tables of another kind"
            raise StoreError(f"journal {self.path}: not a journal layout this software knows (schema version "
                             f"{version}; {problem}); move the file aside")
        if layout == "v0" and version != 0:
            raise StoreError(f"journal {self.path}: schema version {version} but the version-0 layout (a sent "
                             f"column, no journal_sent table); set PRAGMA user_version = 0 to have it upgraded, "
                             f"or move the file aside")
        if layout == "v2" and (problem := sent_ranges_problem(c)) is not None:
            raise StoreError(f"journal {self.path}: {problem}; move the file aside")
        if layout == "v2" and version == SCHEMA_VERSION:
            return
        legacy = layout == "v0"
        c.execute("BEGIN IMMEDIATE")
        try:
            for statement in (_SCHEMA + _SCHEMA_2).split(";"):
                if statement.strip():
                    c.execute(statement)
            if legacy:
                c.execute(_SENT_FROM_COLUMN)
            c.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            c.execute("COMMIT")
        except BaseException:
            if c.in_transaction:
                c.execute("ROLLBACK")
            raise
        if layout == "v2":  # a restored file (``.dump | sqlite3``) loses its user_version
            log.warning("journal_schema_version_restored", path=str(self.path), from_version=version,
                        to_version=SCHEMA_VERSION)
        if legacy:
            ranges = c.execute("SELECT count(*), coalesce(sum(hi - lo + 1), 0) FROM journal_sent").fetchone()
            log.info("journal_schema_upgraded", path=str(self.path), from_version=version, to_version=SCHEMA_VERSION,
                     sent_ranges=ranges[0], sent_rows=ranges[1])

    # -- writing -------------------------------------------------------------------------------

    def append(self, payload: wire.Payload, *, now: Now, priority: int = PRIORITY_NORMAL) -> wire.Event:
        """Append one event and COMMIT it (fsync); return the signed event.

        ``now``: the gate's clock at the event (wall is aware UTC; ``clock_trusted`` is copied into
        the event, G8). ``priority``: 1 for confiscations and alerts. Raises ``StoreError`` if the
        commit fails (disk full, I/O error); then nothing was written and the seq is not used.
        """
        return self.append_many([payload], now=now, priority=priority)[0]

    def append_many(
        self, payloads: Sequence[wire.Payload], *, now: Now, priority: int = PRIORITY_NORMAL
    ) -> list[wire.Event]:
        """Append several events in ONE transaction (consecutive seqs); all or none are committed.

        Used for a confiscation: the tap and its ``ConfiscationPayload`` commit together (G10).
        """
        with self.batch() as batch:
            out = batch.add(payloads, now=now, priority=priority)
            batch.commit()
        return out

    @contextlib.contextmanager
    def batch(self) -> Iterator[JournalBatch]:
        """Group commit: a ``JournalBatch`` whose ``add`` calls (each a read's events, any number)
        are written in ONE transaction by its ``commit`` (one fsync for all). Holds the journal's
        lock until the block ends (the uplink waits for it); leaving the block without ``commit``
        (or after a failed one) writes nothing and uses no seq. The ``.hwm`` file, when due, is
        rewritten as the block ends."""
        with self._lock:
            batch = JournalBatch(self)
            yield batch
            if batch.committed and self._last_seq - self._hwm_written >= HWM_EVERY:
                self._write_hwm(None)  # after the caller's block: the gate shows its lights first

    def report_refusals(self, *, now: Now) -> bool:
        """Journal the pending ``DISK_FULL_REFUSED`` alert on its own, if appends were refused for
        a full disk since the last one (see module doc). Returns True if it was committed, False if
        there was nothing to report or the disk is still full (tried again at the next call)."""
        if not self._refused_at:
            return False
        try:
            self.append_many([], now=now)
        except StoreError:
            return False
        return True

    def refused_pending(self) -> dict[str, int]:
        """Appends refused for a full disk and not yet reported: ``{"reads": n, "other": n}``."""
        return dict(self._refused)

    def checkpoint(self) -> None:
        """Copy the WAL into the database and truncate it to zero bytes (best effort: a failure,
        e.g. on a full disk, is logged and the WAL kept)."""
        with self._lock:
            checkpoint(self._conn, self.path)

    def _refuse(self, payloads: Sequence[wire.Payload], at: dt.datetime) -> None:
        reads = sum(1 for p in payloads if isinstance(p, wire.TapPayload))
        self._refused["reads"] += reads
        self._refused["other"] += len(payloads) - reads
        self._refused_at = [self._refused_at[0] if self._refused_at else at, at]
        if sum(self._refused.values()) == len(payloads):
            log.error("journal_disk_full", path=str(self.path), first=at.isoformat())

    def _refusal_alert(self) -> wire.AlertPayload | None:
        if not self._refused_at:
            return None
        first, last = (t.strftime("%Y-%m-%dT%H:%M:%S.%fZ") for t in self._refused_at)
        return wire.AlertPayload(
            code="DISK_FULL_REFUSED",
            detail=f"refused_reads={self._refused['reads']} refused_other={self._refused['other']} "
                   f"first={first} last={last}",
        )

    def _reported(self, alert: wire.AlertPayload) -> None:
        log.warning("journal_disk_full_reported", detail=alert.detail)
        self._refused = {"reads": 0, "other": 0}
        self._refused_at = []

    def rotate_key(self, new_signer, *, now: Now) -> wire.Event:
        """Key rollover: append a ``SIGNING_KEY`` event naming ``new_signer``'s public key, signed
        by the current key, then sign with the new key. Raises ``StoreError`` as ``append``."""
        old = self._signer
        event = self._append_key_event(new_signer, old, now)
        self._signer = new_signer
        self._set_meta("signing_key", chain.public_raw(new_signer.public_key()))
        return event

    def keep_receipt(self, raw: bytes) -> bool:
        """Keep the office's receipt of this gate's chain (``{"body": <JSON text>, "sig": hex}``,
        central/ingest/receipts.py) in ``<journal>.receipt`` if it is for this gate, for a seq this
        journal has reached, and not older than the one kept. Returns True if kept; a malformed
        receipt is logged and ignored (the office sends the next one)."""
        try:
            msg = msgspec.json.decode(raw)
            body = msgspec.json.decode(msg["body"].encode("utf-8"))
            seq, gate, _sig = int(body["seq"]), body["gate_id"], str(msg["sig"])
        except (msgspec.DecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
            log.warning("journal_receipt_rejected", error=str(exc))
            return False
        kept = self.receipt()
        if gate != self.gate_id or seq > self._last_seq or (kept is not None and kept["seq"] > seq):
            log.warning("journal_receipt_rejected", gate_id=gate, seq=seq, last_seq=self._last_seq)
            return False
        path = Path(str(self.path) + ".receipt")
        tmp = path.with_suffix(".receipt.tmp")
        try:
            tmp.write_bytes(raw)
            os.replace(tmp, path)
        except OSError as exc:
            log.warning("journal_receipt_write_failed", error=str(exc))
            return False
        return True

    def downlink_issued(self) -> dict[str, int]:
        """Per downlink topic, the newest office issue number applied (``wire.signed_downlink.Forward``),
        kept across restarts so an older signed message replayed after one is still refused."""
        try:
            value = msgspec.json.decode((self._meta("downlink_issued") or "{}").encode(), type=dict[str, int])
        except (msgspec.DecodeError, msgspec.ValidationError):
            return {}
        return value

    def keep_downlink_issued(self, newest: dict[str, int]) -> None:
        """Store ``newest`` (topic -> issue number); ``StoreError`` if the journal cannot be written."""
        with self._lock:
            self._set_meta("downlink_issued", msgspec.json.encode(newest).decode())

    def receipt(self) -> dict | None:
        """The newest receipt kept: ``{"seq", "head", "body", "sig"}``, or None."""
        try:
            msg = msgspec.json.decode(Path(str(self.path) + ".receipt").read_bytes())
            body = msgspec.json.decode(msg["body"].encode("utf-8"))
            return {"seq": int(body["seq"]), "head": body["head"], "body": msg["body"], "sig": msg["sig"]}
        except (OSError, msgspec.DecodeError, KeyError, TypeError, ValueError):
            return None

    def head(self) -> tuple[int, str]:
        """``(seq, hash)`` of the newest event (``(0, GENESIS)`` for an empty chain)."""
        with self._lock:
            return self._last_seq, self._head

    def _key_event(self, signer, known_key: str | None, clock) -> None:
        """At start: the journal is unsigned (a gate migrated to signing) or was signed with
        another key whose private half is gone: the new key is named and signs its own event."""
        self._append_key_event(signer, None, _now(clock), previous=known_key)
        self._signer = signer

    def _append_key_event(self, new_signer, old_signer, now: Now, previous: str | None = None):
        from wire.events import AlertPayload

        pub = new_signer.public_key()
        if old_signer is not None:
            previous = chain.fingerprint(old_signer.public_key())
        elif previous is not None:
            previous = chain.fingerprint(chain.load_public(previous)) + " (old private key unavailable)"
        detail = (f"public_key={chain.public_raw(pub)} fingerprint={chain.fingerprint(pub)} "
                  f"previous={previous or 'none'}")
        self._signer = old_signer or new_signer
        return self.append(AlertPayload(code=chain.KEY_EVENT, detail=detail), now=now, priority=PRIORITY_HIGH)

    def _hash_of(self, seq: int) -> str:
        body = self._conn.execute("SELECT body FROM journal WHERE seq = ?", (seq,)).fetchone()[0]
        try:
            return chain.event_hash(_decoder.decode(body))
        except msgspec.DecodeError:
            return chain.GENESIS

    def _meta(self, key: str) -> str | None:
        row = self._conn.execute("SELECT value FROM journal_meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def _set_meta(self, key: str, value: str) -> None:
        try:
            self._conn.execute("INSERT INTO journal_meta (key, value) VALUES (?, ?) ON CONFLICT (key)"
                               " DO UPDATE SET value = excluded.value", (key, value))
        except sqlite3.Error as exc:
            raise StoreError(f"journal {self.path}: {exc}") from exc

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

    def events_between(self, seq_from: int, seq_to: int) -> list[wire.Event]:
        """Events with ``seq_from <= seq <= seq_to`` in seq order (for the office's replay request);
        sent or not. Seqs lost in a quarantine are simply absent."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT body FROM journal WHERE seq BETWEEN ? AND ? ORDER BY seq", (seq_from, seq_to)
            ).fetchall()
        return [_decoder.decode(r[0]) for r in rows]

    def events_after(self, seq: int) -> list[wire.Event]:
        """Events with seq greater than ``seq`` (used at boot to re-apply effects to the store)."""
        return self.events_between(seq + 1, self._last_seq)

    def last_trusted_at(self) -> dt.datetime | None:
        """``occurred_at`` of the newest event journaled with a trusted clock (aware UTC), or None:
        the gate's last trusted time (G13; read once at start-up, newest rows first)."""
        with self._lock:
            rows = self._conn.execute("SELECT body FROM journal ORDER BY seq DESC")
            for (body,) in rows:
                try:
                    event = _decoder.decode(body)
                except msgspec.DecodeError:
                    continue
                if event.clock_trusted:
                    return event.occurred_at.astimezone(dt.UTC)
        return None

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

    @property
    def key(self) -> bytes:
        """The gate's HMAC key (its key file's text): events are signed with it, and so are the
        gate's statuses (``edge.sync``)."""
        return self._key

    def last_seq(self) -> int:
        """The highest sequence number used (0 for a fresh journal)."""
        return self._last_seq

    def sent_through(self) -> int:
        """The highest ``n`` such that every event ``1..n`` is marked sent (0 if none): what the
        gate tells the office it has delivered (``GateStatus.sent_seq``)."""
        return self._low - 1

    def close(self) -> None:
        """Write the high-water mark and close the file. Idempotent."""
        with self._lock:
            if self._conn is None:
                return
            self._write_hwm(None)
            checkpoint(self._conn, self.path)
            self._conn.close()
            self._conn = None

    # -- high-water mark -----------------------------------------------------------------------

    def _read_hwm(self, *, sent: bool = False) -> int:
        try:
            last, sent_max = self._hwm_path.read_text().split()[:2]
            return int(sent_max if sent else last)
        except (OSError, ValueError):
            return 0

    def _read_hwm_head(self) -> tuple[int, str | None]:
        """(seq, head hash) kept in the ``.hwm`` file (its first and third words), or (0, None)."""
        try:
            found = self._hwm_path.read_text().split()
            head = found[2]
            if len(head) == 64 and int(head, 16) >= 0:
                return int(found[0]), head
        except (OSError, ValueError, IndexError):
            pass
        return 0, None

    def _hwm_valid(self) -> bool:
        try:
            return len([int(w) for w in self._hwm_path.read_text().split()[:2]]) == 2
        except (OSError, ValueError):
            return False

    def _write_hwm(self, sent_seq: int | None) -> None:
        sent_max = self._sent_hwm = max(self._sent_hwm, sent_seq or 0)
        tmp = self._hwm_path.with_suffix(".hwm.tmp")
        try:
            head = f" {self._head}" if self._signer is not None else ""
            tmp.write_text(f"{self._last_seq} {sent_max}{head}\n")
            os.replace(tmp, self._hwm_path)
            self._hwm_written = self._last_seq
        except OSError as exc:  # not fatal: only used to continue numbering after a quarantine
            log.warning("journal_hwm_write_failed", error=str(exc))


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


def recovered_floor(salvaged: int | None, hwm: int | None) -> int:
    """The sequence number to continue after when a corrupt journal was quarantined.

    ``hwm``: the last seq of the ``.hwm`` file (None if there is no readable file); it is
    authoritative. ``salvaged``: ``max(seq)`` read best-effort from the corrupt file, which can be
    garbage (a torn page read as a huge number). With an hwm file the salvaged value is believed only
    if ``hwm <= salvaged <= hwm + SALVAGE_SLACK`` (the file lags the journal by at most ``HWM_EVERY``
    appends plus a batch); otherwise the hwm wins. Without one, a non-negative salvaged value is all
    there is. Returns >= 0.
    """
    if hwm is None:
        return max(salvaged or 0, 0)
    if salvaged is not None and hwm <= salvaged <= hwm + SALVAGE_SLACK:
        return salvaged
    return max(hwm, 0)


def seq_runs(seqs: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted, de-duplicated ``seqs`` as inclusive contiguous runs: ``[5, 1, 2, 3, 9, 2]`` ->
    ``[(1, 3), (5, 5), (9, 9)]``. Every seq of every run is one of ``seqs``."""
    runs: list[tuple[int, int]] = []
    for s in sorted(set(seqs)):
        if runs and s == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], s)
        else:
            runs.append((s, s))
    return runs


def _now(clock) -> Now:
    if clock is not None:
        return clock.now()
    from edge.clock import SystemClock

    return SystemClock().now()
