"""The gate's local store: SQLite through the stdlib ``sqlite3``, WAL, one file under the state dir.

It holds the office's copies (roster of workers and cards, escala, presence, blocklist) with their
version and updated-at, and the state the gate derives from its own journal (open shifts at this
gate, last shift end per worker, pending flags per card, the inspector session). It implements
``edge.rules.model.GateView`` for the rules engine.

Speed and memory (bench/gate_decision.py: 50,000 workers, RSS <= 60 MB): workers, cards and last
shift ends are looked up in SQLite by primary key on every read (tens of microseconds, no Python
copy of the roster), or for a whole group commit at once (``prefetch``: one join for the batch's
reads, held until the batch ends); the small, hot tables (escala, open shifts, presence,
blocklist, pending flags, inspector session, versions) are mirrored in dicts updated on every
write.

Durability: ``synchronous=NORMAL`` (WAL). The office's copies are re-sent by the office (retained
snapshots); the derived state is re-applied from the journal at boot: ``apply_event`` records the
journal seq it applied in the same transaction (``applied_seq``), and the gate loop replays every
journal event after it (see ``edge.loop``). So a crash between the journal commit and the store
update loses nothing.

Thread-safety: one connection guarded by a lock; the gate loop and the MQTT downlink thread may
call any method.

The store's parts: this module opens the store and answers the rules engine (``GateView``);
``edge.store_copies`` changes the office's copies, ``edge.store_apply`` the derived state,
``edge.store_file`` opens and upgrades the file, ``edge.store_rows`` turns records into rows.
"""

from __future__ import annotations

import datetime as dt
import heapq
import sqlite3
import threading
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from zoneinfo import ZoneInfo

import structlog

from edge import store_schema as t
from edge.rules.model import InspectorSession, OpenShift, group_by_period
from edge.sqlite_files import check_integrity, checkpoint, is_locked, quarantine
from edge.store_apply import JournalApply
from edge.store_copies import OfficeCopies
from edge.store_file import open_db
from edge.store_rows import _d, _dispatch_from_json, _dt, _escala_from_row, escala_key
from portgate.errors import BadInput, StoreError, StoreLocked
from portgate.uid import ReadUid, parse_read
from portgate.records import (
    Card,
    CardKind,
    CardStatus,
    EscalaEntry,
    Worker,
    WorkerStatus,
)

log = structlog.get_logger(__name__)

COPIES = ("roster", "cards", "escala", "presence")
_DAY = dt.timedelta(days=1)  # pending flags are "today's" flags (G10)


_BLOCK_STATUSES = frozenset(s.value for s in CardStatus if s is not CardStatus.ACTIVE)
# text -> member, a dict lookup on the hot path (an unknown text still raises through the enum)
_CARD_KINDS = {k.value: k for k in CardKind}
_CARD_STATUSES = {s.value: s for s in CardStatus}
_WORKER_STATUSES = {s.value: s for s in WorkerStatus}


class Store(OfficeCopies, JournalApply):
    """The local store (implements ``GateView``).

    ``path``: SQLite file. ``gate_id``/``ship``: this gate and the IMO of the ship it serves (or
    None). ``boot_id``: this process start (an inspector session does not survive a restart).

    A corrupt file at start-up is moved aside (``quarantined_to`` is then set, with
    ``quarantine_reason``) and a fresh one created: the caller raises a STORE_QUARANTINED alert.
    Raises ``StoreError`` (one line; the file is left in place) if the file cannot be created or
    written at all (a read-only file or directory: every apply would fail and the gate would forget
    who is aboard, G5), or its tables are not a store's (``store_schema.layout_problem``: a table
    missing while others are there, a table the store does not know). A file without tables (new,
    0 bytes) is a new store, rebuilt from the journal by the gate loop's ``recover``.
    Raises ``StoreLocked`` (nothing changed, nothing quarantined) when another process holds a lock
    on the file for longer than ``sqlite_files.OPEN_BUSY_TIMEOUT_S``: the caller may try again.
    """

    def __init__(self, path: str | Path, *, gate_id: str, ship: str | None = None, boot_id: str = "",
                 tz: str = "America/Sao_Paulo") -> None:
        self.path = Path(path)
        self.tz = ZoneInfo(tz)
        self.gate_id = gate_id
        self.ship = ship
        self.boot_id = boot_id
        self.quarantined_to: Path | None = None
        self.quarantine_reason: str | None = None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        reason = check_integrity(self.path)
        if reason is not None:
            self.quarantined_to = quarantine(self.path, reason)
            self.quarantine_reason = reason
        self._lock = threading.RLock()
        self._deferred = False  # inside ``batch``: apply does not commit
        self._last_card: tuple | None = None  # ((read, limit), rows) of the last card lookup
        self._last_worker: tuple | None = None  # (registration, Worker | None) of the last lookup
        self._last_card_obj: tuple | None = None  # (row, status, Card) of the last ``card`` answer
        self._ahead: tuple | None = None  # (cards, workers, ends) looked up ahead by ``prefetch``
        self._dirty = False  # statements of the batch written, not committed
        self._queued: list[tuple[str, tuple]] = []  # the batch's statements, written by commit()
        self._ends: dict[str, dt.datetime] = {}  # last shift ends of the batch, not yet written
        self._closed = False
        self._db = open_db(self.path)
        try:
            self._load_caches()
        except sqlite3.Error as exc:
            self._db.close()
            if is_locked(exc):
                raise StoreLocked(self.path) from exc
            raise StoreError(f"store {self.path}: {exc}") from exc

    # -- caches ------------------------------------------------------------------------------------

    def _load_caches(self) -> None:
        c = self._db
        self._versions = {n: (0, None) for n in COPIES}
        for name, version, updated_at in c.execute("SELECT name, version, updated_at FROM versions"):
            self._versions[name] = (version, _dt(updated_at))
        self._blocked = dict(c.execute("SELECT uid, reason FROM blocklist"))  # confiscated here
        self._office_blocked = dict(c.execute("SELECT uid, reason FROM office_blocks"))
        self._flags: dict[str, dict[str, dt.datetime]] = defaultdict(dict)
        for uid, flag, at in c.execute("SELECT uid, flag, at FROM pending_flags"):
            self._flags[uid][flag] = _dt(at)
        # (at, uid, flag) min-heap: expiry pops only the flags past the TTL, not every flag per
        # tap; an entry whose flag was refreshed or consumed since is skipped when popped
        self._flag_heap = [(at, uid, f) for uid, fs in self._flags.items() for f, at in fs.items()]
        heapq.heapify(self._flag_heap)
        # G13: the admit's boot and monotonic time live only in memory (the file keeps the shift):
        # a shift read back from the file at start-up was admitted in another boot (None); one
        # admitted in this process keeps them when a rolled-back batch reloads the caches.
        known = {key: (s.admitted_at, s.boot_id, s.admit_mono_ns)
                 for key, s in getattr(self, "_open", {}).items() if s.boot_id is not None}
        self._open: dict[tuple[str, str], OpenShift] = {}
        for reg, origin, gate_id, ship, admitted_at, dispatch in c.execute(
                "SELECT registration, origin, gate_id, ship, admitted_at, dispatch FROM open_shifts"):
            admitted = _dt(admitted_at)
            was = known.get((reg, origin))
            boot, mono = (was[1], was[2]) if was is not None and was[0] == admitted else (None, None)
            self._open[(reg, origin)] = OpenShift(reg, gate_id, ship, admitted,
                                                  _dispatch_from_json(dispatch), boot, mono)
        self._inspector = None
        r = c.execute("SELECT boot_id, inspector_uid, inspector_registration, until_mono_ns"
                      " FROM inspector_session").fetchone()
        if r is not None and r[0] == self.boot_id:
            self._inspector = InspectorSession(r[1], r[2], r[3])
        m = c.execute("SELECT value FROM meta WHERE \"key\" = 'applied_seq'").fetchone()
        self._applied_seq = int(m[0]) if m else 0
        cols = t.escala.columns
        entries = [_escala_from_row(dict(zip(cols, r)))
                   for r in c.execute(f"SELECT {', '.join(cols)} FROM escala")]
        self._index_escala(entries)

    def _index_escala(self, entries: Sequence[EscalaEntry]) -> None:
        by_reg: dict[str, list[EscalaEntry]] = defaultdict(list)
        by_gate: dict[tuple[str, dt.date], list[EscalaEntry]] = defaultdict(list)
        for e in entries:
            by_reg[e.registration].append(e)
            by_gate[(e.gate_id, e.date)].append(e)
        self._by_reg, self._by_gate = by_reg, by_gate
        self._escala_keys = {escala_key(e): e for e in entries}
        self._periods: dict[dt.date, list] = {}  # local day -> gate_periods of that day

    # -- GateView ----------------------------------------------------------------------------------

    def card(self, uid: str) -> Card | None:
        """The card a read names (G1), or None. ``uid``: a canonical UID, or a partial read
        ``<form>:<hex>`` (``portgate.uid``) matched on the low bits of the enrolled UIDs through an
        expression index (no scan of the roster); a partial read two cards share names none. A card
        confiscated here is returned with status ``confiscated``; one on the office's blocklist with
        the blocklist's status (``lost``, ``replaced``, ``confiscated``: the watchman is told which,
        G2), whatever the roster copy says (G2, G10)."""
        read = _read(uid)
        if read is None:
            return None
        rows = self._card_rows(read, 2)
        if len(rows) != 1:
            return None
        row = rows[0]
        with self._lock:
            here = row[0] in self._blocked
            reason = self._blocked.get(row[0]) if here else self._office_blocked.get(row[0])
            blocked = here or row[0] in self._office_blocked
        if not blocked:
            status = _CARD_STATUSES.get(row[3]) or CardStatus(row[3])
        elif reason in _BLOCK_STATUSES:
            status = CardStatus(reason)
        else:
            status = CardStatus.CONFISCATED
        last = self._last_card_obj  # the same row and status as the last answer: the same Card
        if last is not None and last[0] is row and last[1] is status:
            return last[2]
        found = Card(uid=row[0], kind=_CARD_KINDS.get(row[1]) or CardKind(row[1]), registration=row[2],
                     status=status)
        self._last_card_obj = (row, status, found)
        return found

    def prefetch(self, uids: Sequence[str]) -> None:
        """Look up ahead, in one query, the cards the reads ``uids`` name (whole UIDs; a partial or
        malformed read is looked up as before), their holders and their last shift ends: the
        pairing and the rules then ask no SQL for them. Inside ``batch`` only (the gate loop's
        group commit); kept until the block ends, and forgotten on any write of the office's copies
        (``_write``). Only what the file holds: the batch's own effects stay in the caches above
        it (``_ends``, the blocklist, the flags). A fault is left to the lookups themselves."""
        hexes = list(dict.fromkeys(r.hex for r in map(_read, uids) if r is not None and r.bits is None))
        if not hexes:
            return
        with self._lock:
            if not self._deferred:
                return
            try:
                found = self._db.execute(_AHEAD_SQL.format(", ".join("?" * len(hexes))), hexes).fetchall()
            except sqlite3.Error:
                log.exception("store_prefetch_failed")
                return
            cards: dict[str, list[tuple]] = {h: [] for h in hexes}
            workers: dict[str, Worker | None] = {}
            ends: dict[str, str | None] = {}
            for r in found:
                cards[r[0]] = [r[:4]]
                workers[r[2]] = None if r[4] is None else Worker(
                    r[4], r[5], r[6], _WORKER_STATUSES.get(r[7]) or WorkerStatus(r[7]),
                    _d(r[8]), _d(r[9]), _d(r[10]), r[11], r[12])
                ends[r[2]] = r[13]
            self._ahead = (cards, workers, ends)

    def cards_sharing(self, uid: str) -> int:
        """How many cards carry the bits of the read ``uid`` (counted up to 100)."""
        read = _read(uid)
        return 0 if read is None else len(self._card_rows(read, 100))

    def _card_rows(self, read: ReadUid, limit: int) -> list[tuple]:
        # The last lookup is kept (the pairing and the rules ask for the same read in turn); any
        # write of the office's copies forgets it (``_write``).
        key = (read, limit)
        with self._lock:
            last = self._last_card
            if last is not None and last[0] == key:
                return last[1]
            ahead = self._ahead
            if ahead is not None and read.bits is None and read.hex in ahead[0]:
                rows = ahead[0][read.hex]
            elif read.bits is None:
                rows = self._db.execute(
                    "SELECT uid, kind, registration, status FROM cards WHERE uid = ?", (read.hex,)
                ).fetchall()
            else:
                rows = self._db.execute(
                    f"SELECT uid, kind, registration, status FROM cards WHERE {t.low_bits_sql(read.bits)} = ?"
                    " LIMIT ?", (read.hex, limit),
                ).fetchall()
            self._last_card = (key, rows)
            return rows

    def control_cards(self, registration: str) -> list[str]:
        """The UIDs of the control cards of ``registration`` in the roster copy (G4 pending flags)."""
        with self._lock:
            return [r[0] for r in self._db.execute(
                "SELECT uid FROM cards WHERE registration = ? AND kind = 'control'", (registration,))]

    def block_reason(self, uid: str) -> str | None:
        """Why the card with this canonical UID is blocked here (confiscated at this gate, or on
        the office's blocklist), or None; also for a card the roster copy does not know."""
        return self._blocked.get(uid) or self._office_blocked.get(uid)

    def worker(self, registration: str) -> Worker | None:
        """The roster copy's worker, or None. The last lookup is kept (the pairing and the rules
        ask in turn) until the office's copies change (``_write``)."""
        with self._lock:
            last = self._last_worker
            if last is not None and last[0] == registration:
                return last[1]
            ahead = self._ahead
            if ahead is not None and registration in ahead[1]:
                w = ahead[1][registration]
                self._last_worker = (registration, w)
                return w
            r = self._db.execute(
                "SELECT registration, name, category, status, suspended_from, suspended_until,"
                " health_exam_date, booklet_revalidated_year, rotation_number"
                " FROM workers WHERE registration = ?",
                (registration,),
            ).fetchone()
            w = None if r is None else Worker(r[0], r[1], r[2], _WORKER_STATUSES.get(r[3]) or WorkerStatus(r[3]),
                                              _d(r[4]), _d(r[5]), _d(r[6]), r[7], r[8])
            self._last_worker = (registration, w)
        return w

    def dispatches(self, registration: str, around: dt.datetime) -> Sequence[EscalaEntry]:
        day = around.astimezone(self.tz).date()  # escala dates are local dates of the port
        return [e for e in self._by_reg.get(registration, ()) if abs((e.date - day).days) <= 1]

    def gate_dispatches(self, around: dt.datetime) -> Sequence[EscalaEntry]:
        day = around.astimezone(self.tz).date()
        out: list[EscalaEntry] = []
        for d in (day - _DAY, day, day + _DAY):
            out.extend(self._by_gate.get((self.gate_id, d), ()))
        return out

    def gate_periods(self, around: dt.datetime) -> list[list[tuple[int, EscalaEntry]]]:
        """``gate_dispatches(around)`` grouped by (date, period) (``GateView.gate_periods``), kept
        per local day until the escala copy changes (a few days at most)."""
        day = around.astimezone(self.tz).date()
        periods = self._periods  # taken before the escala: a new copy replaces this dict after it
        groups = periods.get(day)
        if groups is None:
            if len(periods) >= 4:
                periods.clear()
            groups = periods[day] = group_by_period(self.gate_dispatches(around))
        return groups

    def open_shift(self, registration: str) -> OpenShift | None:
        """Local open shift at this gate first, else the office's relayed presence."""
        return self._open.get((registration, "local")) or self._open.get((registration, "presence"))

    def open_shifts_here(self) -> list[OpenShift]:
        """The shifts open at this gate (admitted here, not exited), for G11 coverage."""
        return [s for (_reg, origin), s in self._open.items() if origin == "local"]

    def last_shift_end(self, registration: str) -> dt.datetime | None:
        if registration in self._ends:  # closed earlier in the open batch
            return self._ends[registration]
        ahead = self._ahead
        if ahead is not None and registration in ahead[2]:
            return _dt(ahead[2][registration])
        with self._lock:
            r = self._db.execute(
                "SELECT ended_at FROM last_shift_end WHERE registration = ?", (registration,)
            ).fetchone()
        return _dt(r[0]) if r else None

    def pending_flags(self, uid: str) -> Sequence[str]:
        flags = self._flags.get(uid)
        return sorted(flags, key=flags.__getitem__) if flags else ()

    def data_updated_at(self) -> dt.datetime | None:
        """The older of the roster and escala copies' updated-at (G8); None if either never came."""
        stamps = [self._versions["roster"][1], self._versions["escala"][1]]
        return None if None in stamps else min(stamps)

    def inspector_session(self) -> InspectorSession | None:
        return self._inspector

    def find_dispatch(self, key: tuple) -> EscalaEntry | None:
        """The escala entry with this identity (see ``escala_key``), if in the copy."""
        return self._escala_keys.get(key)

    def close(self) -> None:
        """Checkpoint the WAL into the file (truncating it; a reader is not waited for) and close."""
        with self._lock:
            if self._closed:  # close() may be called twice
                return
            checkpoint(self._db, self.path, wait=False)  # a reader never holds the stop (left in the WAL)
            self._db.close()
            self._closed = True


# ``prefetch``: a card row (as ``_card_rows`` gives it), its holder's worker row, his last shift end
_AHEAD_SQL = (
    "SELECT c.uid, c.kind, c.registration, c.status, w.registration, w.name, w.category, w.status,"
    " w.suspended_from, w.suspended_until, w.health_exam_date, w.booklet_revalidated_year,"
    " w.rotation_number, e.ended_at FROM cards c"
    " LEFT JOIN workers w ON w.registration = c.registration"
    " LEFT JOIN last_shift_end e ON e.registration = c.registration WHERE c.uid IN ({})")


def _read(text: str) -> ReadUid | None:
    try:
        return parse_read(text)
    except BadInput:
        return None
