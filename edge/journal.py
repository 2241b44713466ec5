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

WAL size (``sqlite_files.JOURNAL_WAL_PRAGMAS``, ``edge.journal_wal``): SQLite's automatic
checkpoint is off on the journal's connection (it ran inside a tap's commit, before the light); the
same PASSIVE checkpoint runs at the end of a ``batch`` block (after the loop's lights and store
commit, or its idle tick) once the WAL holds ``WAL_AUTOCHECKPOINT_PAGES`` pages not yet copied; the
log is truncated to ``WAL_SIZE_LIMIT`` bytes when reused and to zero at open and close (without
waiting for a reader: ``sqlite_files.checkpoint``), so the ``-wal`` file stays near 1 MiB.

Signed chain (wire/chain.py, docs/evidence.md): with a ``signer`` (the gate's Ed25519 private key)
every event gets ``prev`` = the hash of the previous event (read back from the last row at start, so
the chain continues across boots) and a signature beside the HMAC. A journal holding unsigned rows,
or signed with another key, gets a ``SIGNING_KEY`` alert first (``rotate_key`` signs it with the
old key). After a quarantine the ``STORE_QUARANTINED`` alert starts a new segment: its ``prev`` is
the head kept in the ``.hwm`` file (third word) and its detail adds ``last_head_seq=<n>
last_head=<hex>``.

Stdlib ``sqlite3`` is used directly here (not SQLAlchemy): the journal is the one write on the hot
path and its cost must stay next to a bare SQLite commit (bench/gate_decision.py).

The journal's parts: this module opens the file, appends and reads back; ``edge.journal_batch``
is one group commit, ``edge.journal_outbox`` the outbox and its sent ranges, ``edge.journal_chain``
the signed chain and the office's receipts, ``edge.journal_hwm`` the ``.hwm`` file and
``edge.journal_schema`` the tables and their upgrade.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import msgspec
import structlog

from edge.journal_batch import PRIORITY_HIGH, PRIORITY_NORMAL, JournalBatch
from edge.journal_chain import JournalChain, _now
from edge.journal_files import SIDE_FILES, lost_rows
from edge.journal_hwm import HWM_EVERY, HighWaterMark, recovered_floor
from edge.journal_outbox import JournalOutbox
from edge.journal_wal import WalCheckpoint
from edge.journal_schema import migrate
from edge.rules.model import Now
from edge.sent_ranges import SentRanges
from edge.sqlite_files import (
    BUSY_TIMEOUT_S,
    JOURNAL_WAL_PRAGMAS,
    OPEN_BUSY_TIMEOUT_S,
    check_integrity,
    checkpoint,
    claim_write,
    is_locked,
    quarantine,
    salvage_max,
)
from portgate.errors import StoreError, StoreLocked
from wire import chain
from wire import events as wire

log = structlog.get_logger(__name__)


_decoder = msgspec.json.Decoder(wire.Event)


class Journal(JournalOutbox, JournalChain, HighWaterMark):
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
        reason, floor = self._check_file()
        self._hwm_written = floor
        self._sent_hwm = self._read_hwm(sent=True)  # highest seq marked sent, as in the .hwm file
        self._hwm_sent_due = 0.0  # monotonic time from which mark_sent rewrites the .hwm file
        top = self._connect(floor)
        self._refused = {"reads": 0, "other": 0}  # appends refused for a full disk, not yet reported
        self._refused_at: list[dt.datetime] = []  # [first, last] refusal time (UTC)
        checkpoint(self._conn, self.path, wait=False)  # a reader (the screen) never holds the start
        self._start_chain(reason, top, signer, clock)

    def _check_file(self) -> tuple[str | None, int]:
        """``(reason, floor)``: why the file is moved aside (corrupt, or rows lost against the
        ``.hwm`` file; None: it is kept) and the seq numbering continues after (see the module doc)."""
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
        return reason, floor

    def _connect(self, floor: int) -> int | None:
        """Open the file (WAL, ``synchronous=FULL``), bring it to ``SCHEMA_VERSION`` and read its
        counters and outbox; returns the highest seq in the file (None: no rows). Raises
        ``StoreError`` / ``StoreLocked`` as the class says, the connection closed."""
        self._conn = None
        try:
            self._conn = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=OPEN_BUSY_TIMEOUT_S
            )
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=FULL")
            for pragma in JOURNAL_WAL_PRAGMAS:  # no checkpoint inside a commit: after the light
                self._conn.execute(pragma)
            claim_write(self._conn, self.path)  # another process writing: StoreLocked before any change
            self._conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            migrate(self._conn, self.path)
            self._wal = WalCheckpoint(self.path, self._conn.execute("PRAGMA page_size").fetchone()[0])
            # min and max each alone: SQLite reads them off the rowid b-tree's ends (a few pages);
            # together, or with count(*), they scan every row (1.3 s of a 1,000,000-event journal
            # at start-up inside a quarter-core quota: the whole file read, issue 32 item 4)
            first = self._conn.execute("SELECT min(seq) FROM journal").fetchone()[0]
            top = self._conn.execute("SELECT max(seq) FROM journal").fetchone()[0]
            self._last_seq = max(top or 0, floor)  # never go backwards (see module doc)
            self._first = first if first is not None else self._last_seq + 1  # the file holds first..last
            self._sent = SentRanges(
                (max(lo, self._first), min(hi, self._last_seq))
                for lo, hi in self._conn.execute("SELECT lo, hi FROM journal_sent"))
            self._low = self._sent.first_unsent(self._first)  # no unsent row below this seq
            self._depth = self._unsent_rows(self._low)
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
        return top

    def _start_chain(self, reason: str | None, top: int | None, signer, clock) -> None:
        """The chain's head (the last row's hash, else the ``.hwm`` file's), then the first event
        this start owes: the ``STORE_QUARANTINED`` alert after a quarantine, or a ``SIGNING_KEY``
        event when the key changed."""
        head_seq, head = self._read_hwm_head()
        if top:
            self._head = self._hash_of(top)
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
            if known_key != mine and (top or known_key):
                self._key_event(signer, known_key, clock)
            self._set_meta("signing_key", mine)

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
        rewritten as the block ends, and the WAL checkpointed when it is due (``edge.journal_wal``:
        after the gate's lights, never inside the commit)."""
        with self._lock:
            batch = JournalBatch(self)
            yield batch
            if batch.committed and self._last_seq - self._hwm_written >= HWM_EVERY:
                self._write_hwm(None)  # after the caller's block: the gate shows its lights first
            if self._wal.due():
                self._wal.run(self._conn)

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

    def _meta(self, key: str) -> str | None:
        row = self._conn.execute("SELECT value FROM journal_meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def _set_meta(self, key: str, value: str) -> None:
        try:
            self._conn.execute("INSERT INTO journal_meta (key, value) VALUES (?, ?) ON CONFLICT (key)"
                               " DO UPDATE SET value = excluded.value", (key, value))
        except sqlite3.Error as exc:
            raise StoreError(f"journal {self.path}: {exc}") from exc

    # -- reading -------------------------------------------------------------------------------

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

    @property
    def key(self) -> bytes:
        """The gate's HMAC key (its key file's text): events are signed with it, and so are the
        gate's statuses (``edge.sync``)."""
        return self._key

    def last_seq(self) -> int:
        """The highest sequence number used (0 for a fresh journal)."""
        return self._last_seq

    def close(self) -> None:
        """Write the high-water mark and close the file. Idempotent."""
        with self._lock:
            if self._conn is None:
                return
            self._write_hwm(None)
            checkpoint(self._conn, self.path, wait=False)  # a reader never holds the stop (left in the WAL)
            self._conn.close()
            self._conn = None
            self._wal.close()  # after the connection: closing it drops the process's locks on -shm
