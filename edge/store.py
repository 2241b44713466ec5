"""The gate's local store: SQLite through the stdlib ``sqlite3``, WAL, one file under the state dir.

It holds the office's copies (roster of workers and cards, escala, presence, blocklist) with their
version and updated-at, and the state the gate derives from its own journal (open shifts at this
gate, last shift end per worker, pending flags per card, the inspector session). It implements
``edge.rules.model.GateView`` for the rules engine.

Speed and memory (bench/gate_decision.py: 50,000 workers, RSS <= 60 MB): workers, cards and last
shift ends are looked up in SQLite by primary key on every read (tens of microseconds, no Python
copy of the roster); the small, hot tables (escala, open shifts, presence, blocklist, pending flags,
inspector session, versions) are mirrored in dicts updated on every write.

Durability: ``synchronous=NORMAL`` (WAL). The office's copies are re-sent by the office (retained
snapshots); the derived state is re-applied from the journal at boot: ``apply_event`` records the
journal seq it applied in the same transaction (``applied_seq``), and the gate loop replays every
journal event after it (see ``edge.loop``). So a crash between the journal commit and the store
update loses nothing.

Thread-safety: one connection guarded by a lock; the gate loop and the MQTT downlink thread may
call any method.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import heapq
import json
import sqlite3
import threading
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from zoneinfo import ZoneInfo

import structlog

from edge import store_schema as t
from edge.effects import Effects, is_gate_confiscation
from edge.rules.model import InspectorSession, OpenShift, group_by_period
from edge.sqlite_files import (
    BUSY_TIMEOUT_S,
    OPEN_BUSY_TIMEOUT_S,
    WAL_PRAGMAS,
    check_integrity,
    checkpoint,
    claim_write,
    is_locked,
    quarantine,
)
from portgate.errors import BadInput, StoreError, StoreLocked
from portgate.uid import ReadUid, parse_read
from portgate.records import (
    COLUMNS,
    Card,
    CardKind,
    CardStatus,
    EscalaEntry,
    Worker,
    WorkerStatus,
    load_csv,
    load_unique_csv,
    parse_rows,
)

log = structlog.get_logger(__name__)

COPIES = ("roster", "cards", "escala", "presence")
FLAG_TTL = dt.timedelta(hours=24)
_DAY = dt.timedelta(days=1)  # pending flags are "today's" flags (G10)


_BLOCK_STATUSES = frozenset(s.value for s in CardStatus if s is not CardStatus.ACTIVE)
# text -> member, a dict lookup on the hot path (an unknown text still raises through the enum)
_CARD_KINDS = {k.value: k for k in CardKind}
_CARD_STATUSES = {s.value: s for s in CardStatus}
_WORKER_STATUSES = {s.value: s for s in WorkerStatus}


def _iso(value: dt.datetime | None) -> str | None:
    return None if value is None else value.astimezone(dt.UTC).isoformat()


def _dt(text: str | None) -> dt.datetime | None:
    return None if text is None else dt.datetime.fromisoformat(text)


def _d(text: str | None) -> dt.date | None:
    return None if not text else dt.date.fromisoformat(text)


def _as_records(items: Iterable, record: type, source: str) -> list:
    """Accept records or mappings (rows from a CSV or a decoded JSON message); rows are validated
    with the record's ``from_row`` and every bad row is named in one ``BadInput``."""
    items = list(items)
    rows = [i for i in items if not isinstance(i, record)]
    if not rows:
        return items
    if any(not isinstance(r, Mapping) for r in rows):
        raise BadInput(f"{source}: expected {record.__name__} records or mappings")
    required = [c for c in COLUMNS[record] if c in _REQUIRED[record]]
    text_rows = [{k: ("" if v is None else str(v)) for k, v in r.items()} for r in rows]
    parsed = iter(parse_rows(text_rows, record.from_row, source=source, required=required, first_line=1))
    return [i if isinstance(i, record) else next(parsed) for i in items]


_REQUIRED = {
    Worker: {"registration", "name", "category", "status"},
    Card: {"uid", "kind", "registration", "status"},
    EscalaEntry: set(COLUMNS[EscalaEntry]) - {"ship_name"},
}


_INSERT_WORKER = t.workers.insert_sql()
_UPSERT_WORKER = t.workers.insert_sql(replace=True)
_INSERT_CARD = t.cards.insert_sql()
_UPSERT_CARD = t.cards.insert_sql(replace=True)
_INSERT_ESCALA = t.escala.insert_sql(skip=("id",))
_UPSERT_BLOCK = t.blocklist.insert_sql(replace=True)
_INSERT_OFFICE_BLOCK = t.office_blocks.insert_sql()
_UPSERT_OFFICE_BLOCK = t.office_blocks.insert_sql(replace=True)
_INSERT_OPEN = t.open_shifts.insert_sql()
_UPSERT_VERSION = t.versions.insert_sql(replace=True)


def _worker_row(w: Worker) -> dict:
    return {
        "registration": w.registration, "name": w.name, "category": w.category,
        "status": w.status.value, "suspended_from": w.suspended_from and w.suspended_from.isoformat(),
        "suspended_until": w.suspended_until and w.suspended_until.isoformat(),
        "health_exam_date": w.health_exam_date and w.health_exam_date.isoformat(),
        "booklet_revalidated_year": w.booklet_revalidated_year, "rotation_number": w.rotation_number,
    }


def _card_row(c: Card) -> dict:
    return {"uid": c.uid, "kind": c.kind.value, "registration": c.registration, "status": c.status.value}


def _escala_row(e: EscalaEntry) -> dict:
    return {
        "date": e.date.isoformat(), "period": e.period, "ship": e.ship, "ship_name": e.ship_name,
        "voyage": e.voyage.value, "berth": e.berth.value, "gate_id": e.gate_id, "post": e.post,
        "function": e.function, "registration": e.registration,
    }


def _escala_from_row(r: Mapping) -> EscalaEntry:
    return EscalaEntry.from_row({k: str(v) for k, v in r.items() if k != "id"})


def escala_key(e: EscalaEntry) -> tuple:
    """The identity of an escala entry (one worker on one post of one ship in one period)."""
    return (e.date, e.period, e.ship, e.post, e.registration)


def _dispatch_json(e: EscalaEntry | None) -> str | None:
    return None if e is None else json.dumps(_escala_row(e))


def _dispatch_from_json(text: str | None) -> EscalaEntry | None:
    return None if not text else _escala_from_row(json.loads(text))


class Store:
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
        self._dirty = False  # statements of the batch written, not committed
        self._queued: list[tuple[str, tuple]] = []  # the batch's statements, written by commit()
        self._ends: dict[str, dt.datetime] = {}  # last shift ends of the batch, not yet written
        self._closed = False
        db = None
        try:
            # implicit BEGIN before a write (sqlite3's default): commit()/rollback() end it
            db = sqlite3.connect(self.path, check_same_thread=False, timeout=OPEN_BUSY_TIMEOUT_S)
            _pragmas(db)
            claim_write(db, self.path)  # another process writing: StoreLocked before anything is changed
            db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            problem = t.layout_problem(tables)
            if problem is not None:
                raise StoreError(f"store {self.path}: {problem}; move the file aside")
            if "blocklist" in tables and "office_blocks" not in tables:
                _upgrade_blocklist(db, self.path)
                tables.add("office_blocks")
            for table in t.TABLES:  # a new file (no tables, layout_problem): each made with its indexes
                if table.name not in tables:
                    for ddl in (table.ddl, *table.indexes):
                        db.execute(ddl)
            for ddl in (*t.CARD_BITS_INDEXES, t.PENDING_FLAGS_AT_INDEX):  # also on files made before these
                db.execute(ddl)
            db.commit()
            _probe_write(db, self.path)
            self._db = db
            self._load_caches()
        except sqlite3.Error as exc:
            if db is not None:
                db.close()
            if is_locked(exc):
                raise StoreLocked(self.path) from exc
            raise StoreError(f"store {self.path}: {exc}") from exc
        except StoreError:
            if db is not None:
                db.close()
            raise

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
            if read.bits is None:
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

    # -- office copies (called by the MQTT downlink and by load_csv_files) -------------------------

    def versions(self) -> dict[str, tuple[int, dt.datetime | None]]:
        """``{copy: (version, updated_at)}`` for roster, cards, escala, presence ((0, None) if never)."""
        return dict(self._versions)

    def replace_roster(self, version: int, workers: Iterable, cards: Iterable, at: dt.datetime) -> None:
        """Replace the whole roster copy (workers and cards) with a snapshot at ``version``.

        ``workers``/``cards``: ``Worker``/``Card`` records or mappings with the CSV columns. Raises
        ``BadInput`` naming every bad row; then nothing is changed (the old copy stays in force).
        """
        ws = _as_records(workers, Worker, "roster.workers")
        cs = _as_records(cards, Card, "roster.cards")
        self._write(lambda c: (
            c.execute("DELETE FROM workers"), c.execute("DELETE FROM cards"),
            ws and c.executemany(_INSERT_WORKER, [_worker_row(w) for w in ws]),
            cs and c.executemany(_INSERT_CARD, [_card_row(x) for x in cs]),
            self._settle_blocklist(c, cs),
            self._set_version(c, "roster", version, at), self._set_version(c, "cards", version, at),
        ))
        log.info("roster_replaced", version=version, workers=len(ws), cards=len(cs))

    def apply_roster_delta(
        self, from_version: int, to_version: int, workers_upsert: Iterable, cards_upsert: Iterable,
        at: dt.datetime,
    ) -> bool:
        """Apply a delta on top of ``from_version``. Returns False (and changes nothing) when the
        copy is not at ``from_version``: the caller then asks the office for a snapshot."""
        if self._versions["roster"][0] != from_version:
            log.warning("roster_delta_out_of_order", have=self._versions["roster"][0], base=from_version)
            return False
        ws = _as_records(workers_upsert, Worker, "roster_delta.workers")
        cs = _as_records(cards_upsert, Card, "roster_delta.cards")
        self._write(lambda c: (
            ws and c.executemany(_UPSERT_WORKER, [_worker_row(w) for w in ws]),
            cs and c.executemany(_UPSERT_CARD, [_card_row(x) for x in cs]),
            self._settle_blocklist(c, cs),
            self._set_version(c, "roster", to_version, at), self._set_version(c, "cards", to_version, at),
        ))
        return True

    def replace_escala(self, version: int, entries: Iterable, at: dt.datetime) -> None:
        """Replace the escala copy (all gates: other gates' entries are needed for G5). Raises
        ``BadInput`` naming every bad row; then nothing changes."""
        es = _dedupe(_as_records(entries, EscalaEntry, "escala"))
        self._write(lambda c: (
            c.execute("DELETE FROM escala"), es and c.executemany(_INSERT_ESCALA, [_escala_row(e) for e in es]),
            self._set_version(c, "escala", version, at),
        ))
        self._index_escala(es)
        mine = sum(len(v) for (g, _), v in self._by_gate.items() if g == self.gate_id)
        (log.warning if es and not mine else log.info)(
            "escala_replaced", version=version, entries=len(es), for_this_gate=mine, gate_id=self.gate_id
        )

    def apply_escala_delta(
        self, from_version: int, to_version: int, upsert: Iterable, remove: Iterable, at: dt.datetime
    ) -> bool:
        """Upsert and remove escala entries (identity: date, period, ship, post, registration).
        Returns False when the copy is not at ``from_version`` (caller asks for a snapshot)."""
        if self._versions["escala"][0] != from_version:
            return False
        ups = _as_records(upsert, EscalaEntry, "escala_delta.upsert")
        rms = _as_records(remove, EscalaEntry, "escala_delta.remove")
        current = dict(self._escala_keys)
        for e in rms:
            current.pop(escala_key(e), None)
        for e in ups:
            current[escala_key(e)] = e
        es = list(current.values())
        self._write(lambda c: (
            c.execute("DELETE FROM escala"), es and c.executemany(_INSERT_ESCALA, [_escala_row(e) for e in es]),
            self._set_version(c, "escala", to_version, at),
        ))
        self._index_escala(es)
        return True

    def block_card(self, uid: str, reason: str, at: dt.datetime) -> None:
        """Block a card confiscated at this gate at once (G10, 83.611 art. 20 §1; the gate loop
        does the same through ``apply_event``). The block stays until the office shows it knows of
        the confiscation: a roster copy shows the card as not active, or an office blocklist
        snapshot lists the card (from then on the office's blocklist governs, so a card the office
        returns is admitted again). ``at``: aware UTC. Raises ``StoreError``."""
        self._write(lambda c: c.execute(_UPSERT_BLOCK, {"uid": uid, "reason": reason, "at": _iso(at)}))
        self._blocked[uid] = reason
        log.warning("card_blocked", uid=uid, reason=reason)

    def replace_office_blocks(self, blocked: Iterable) -> None:
        """Replace the office's blocklist copy with a snapshot (downlink ``cards``, G2/G10):
        ``blocked`` holds ``wire.downlink.BlockedCard`` (uid, reason, aware UTC ``at``). A card the
        office no longer lists (returned, found) is admitted again, unless it was confiscated here
        and the office does not know yet; a card confiscated here that the office now lists is its
        block from now on. One transaction; raises ``StoreError`` (the old copy stays)."""
        rows = {b.uid: {"uid": b.uid, "reason": b.reason, "at": _iso(b.at)} for b in blocked}
        with self._lock:  # (re-entrant) no confiscation here may slip between the read and the write
            known_here = [uid for uid in self._blocked if uid in rows]
            self._write(lambda c: (
                c.execute("DELETE FROM office_blocks"),
                rows and c.executemany(_INSERT_OFFICE_BLOCK, list(rows.values())),
                known_here and c.executemany("DELETE FROM blocklist WHERE uid = ?", [(u,) for u in known_here]),
            ))
            released = [uid for uid in self._office_blocked if uid not in rows]
            self._office_blocked = {uid: r["reason"] for uid, r in rows.items()}
            for uid in known_here:
                self._blocked.pop(uid, None)
        log.info("blocklist_replaced", blocked=len(rows), released=len(released), taken_over=len(known_here))

    def add_office_blocks(self, blocked: Iterable, unblocked: Iterable[str] = ()) -> None:
        """Apply a blocklist delta to the office's copy: add ``blocked`` (``BlockedCard`` as above)
        and lift the office's blocks of the ``unblocked`` UIDs (cards returned or found; a card
        confiscated here stays blocked until the office shows it knows, see ``block_card``). One
        transaction; raises ``StoreError`` (nothing changed)."""
        rows = {b.uid: {"uid": b.uid, "reason": b.reason, "at": _iso(b.at)} for b in blocked}
        lifted = [uid for uid in unblocked if uid not in rows]
        if not rows and not lifted:
            return
        with self._lock:
            self._write(lambda c: (
                lifted and c.executemany("DELETE FROM office_blocks WHERE uid = ?", [(u,) for u in lifted]),
                rows and c.executemany(_UPSERT_OFFICE_BLOCK, list(rows.values())),
            ))
            for uid in lifted:
                if self._office_blocked.pop(uid, None) is not None:
                    log.info("card_unblocked", uid=uid, by="office")
            for r in rows.values():
                self._office_blocked[r["uid"]] = r["reason"]
                log.warning("card_blocked", uid=r["uid"], reason=r["reason"], by="office")

    def set_presence(
        self, registration: str, shift: OpenShift | None, version: int, at: dt.datetime | None = None
    ) -> None:
        """Record (or clear, with None) a worker's open shift as relayed by the office (G5)."""
        def work(c):
            c.execute("DELETE FROM open_shifts WHERE registration = ? AND origin = 'presence'", (registration,))
            if shift is not None:
                c.execute(_INSERT_OPEN, _open_row(shift, "presence"))
            self._set_version(c, "presence", version, at or (shift.admitted_at if shift else None))

        self._write(work)
        if shift is None:
            self._open.pop((registration, "presence"), None)
        else:
            self._open[(registration, "presence")] = shift

    def load_csv_files(self, workers: str | Path, cards: str | Path, escala: str | Path | None = None,
                       *, version: int = 1, at: dt.datetime | None = None) -> None:
        """Seed the copies from the data files of DESIGN.md (demo, tests, a gate without office).
        Raises ``BadInput`` naming every bad row of every file (a repeated registration or UID
        too, ``cards.csv:5: uid 04A1 repeats line 2``)."""
        at = at or dt.datetime.now(dt.UTC)
        self.replace_roster(version, load_unique_csv(workers, Worker), load_unique_csv(cards, Card), at)
        if escala is not None:
            self.replace_escala(version, load_csv(escala, EscalaEntry), at)

    # -- derived state (from the gate's own journal) -----------------------------------------------

    @property
    def applied_seq(self) -> int:
        """The last journal seq whose effects are in this store (boot replay starts after it)."""
        return self._applied_seq

    @contextlib.contextmanager
    def batch(self) -> Iterator[Store]:
        """Group apply for the gate loop's group commit (``edge.loop``): inside the block ``apply``
        changes the caches at once (and keeps the shift ends it records), so the next read of
        the batch is decided on them, and queues its statements; ``commit`` writes them all, with
        the last ``applied_seq``, in one transaction; ``rollback`` (or leaving the block without
        ``commit``) undoes them and reloads the caches from the file. Holds the store's lock for
        the whole block (the downlink's writes wait; they would otherwise commit the batch's
        statements early, before the journal). Not re-entrant."""
        with self._lock:
            self._deferred = True
            try:
                yield self
            finally:
                self._deferred = False
                if self._dirty:
                    self._undo()

    def commit(self) -> None:
        """Write and commit the statements ``apply`` queued inside ``batch`` (no fsync:
        ``synchronous=NORMAL``; the journal is the record, re-applied at boot). Raises
        ``StoreError`` if a statement or the commit failed: then nothing of the batch is in the file and the caches are reloaded
        from it (the caller re-applies the journal events after ``applied_seq``)."""
        with self._lock:
            if not self._dirty:
                return
            try:
                for sql, params in self._queued:
                    self._db.execute(sql, params)
                self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('applied_seq', ?)",
                                  (str(self._applied_seq),))
                self._db.commit()
            except sqlite3.Error as exc:
                self._undo()
                raise StoreError(f"store apply failed: {exc}") from exc
            self._dirty = False
            self._queued.clear()
            self._ends.clear()

    def rollback(self) -> None:
        """Drop the statements ``apply`` queued inside ``batch`` and reload the caches (the journal
        did not commit their events)."""
        with self._lock:
            if self._dirty:
                self._undo()

    def _undo(self) -> None:
        try:
            self._db.rollback()
        except sqlite3.Error:
            log.exception("store_rollback_failed")
        self._dirty = False
        self._queued.clear()
        self._ends.clear()
        try:
            self._load_caches()
        except sqlite3.Error:
            log.exception("store_reload_failed")

    def apply(self, seq: int, fx: Effects) -> None:
        """Apply the effects of journal event ``seq`` in one transaction together with
        ``applied_seq``; inside ``batch`` the transaction is the batch's (committed by ``commit``).
        Events at or below ``applied_seq`` are ignored (idempotent replay). Raises ``StoreError``
        outside a batch (nothing changed); inside one a fault is the batch's ``commit``'s."""
        if seq <= self._applied_seq:
            return

        # Statements queued or run at once on this hot path: it runs after every read.
        stmts: list[tuple[str, tuple]] = []
        if fx.close is not None:
            reg, ended = fx.close
            stmts.append(("DELETE FROM open_shifts WHERE registration = ? AND origin = 'local'", (reg,)))
            stmts.append(("INSERT OR REPLACE INTO last_shift_end (registration, ended_at) VALUES (?, ?)",
                          (reg, _iso(ended))))
        if fx.open is not None:
            r = _open_row(fx.open, "local")
            stmts.append(("INSERT OR REPLACE INTO open_shifts (registration, origin, gate_id, ship,"
                          " admitted_at, dispatch) VALUES (?, ?, ?, ?, ?, ?)",
                          (r["registration"], r["origin"], r["gate_id"], r["ship"], r["admitted_at"],
                           r["dispatch"])))
        for uid, flag, at in fx.flags:
            stmts.append(("INSERT OR REPLACE INTO pending_flags (uid, flag, at) VALUES (?, ?, ?)",
                          (uid, flag, _iso(at))))
        if fx.flags:
            stmts.append(("DELETE FROM pending_flags WHERE at < ?", (_iso(fx.flags[0][2] - FLAG_TTL),)))
        if fx.block is not None:
            stmts.append(("DELETE FROM pending_flags WHERE uid = ?", (fx.block[0],)))
            stmts.append(("INSERT OR REPLACE INTO blocklist (uid, reason, at) VALUES (?, ?, ?)",
                          (fx.block[0], fx.block[1], _iso(fx.block[2]))))
        if fx.inspector is not None or fx.end_inspector:
            stmts.append(("DELETE FROM inspector_session", ()))
        if fx.inspector is not None:
            i = fx.inspector
            stmts.append(("INSERT INTO inspector_session (id, boot_id, inspector_uid,"
                          " inspector_registration, until_mono_ns) VALUES (1, ?, ?, ?, ?)",
                          (self.boot_id, i.inspector_uid, i.inspector_registration, i.until_mono_ns)))
        with self._lock:
            if self._deferred:  # written by commit(); the caches below change now
                self._dirty = True
                self._queued.extend(stmts)
                if fx.close is not None:
                    self._ends[fx.close[0]] = fx.close[1]
            else:
                stmts.append(("INSERT OR REPLACE INTO meta (key, value) VALUES ('applied_seq', ?)",
                              (str(seq),)))
                try:
                    for sql, params in stmts:
                        self._db.execute(sql, params)
                    self._db.commit()
                except sqlite3.Error as exc:
                    self._db.rollback()
                    raise StoreError(f"store apply failed: {exc}") from exc
        if fx.close is not None:
            self._open.pop((fx.close[0], "local"), None)
        if fx.open is not None:
            self._open[(fx.open.registration, "local")] = fx.open
        for uid, flag, at in fx.flags:
            self._flags[uid][flag] = at
            heapq.heappush(self._flag_heap, (at, uid, flag))
        if fx.flags:
            self._expire_flags(fx.flags[0][2] - FLAG_TTL)
        if fx.block is not None:
            self._blocked[fx.block[0]] = fx.block[1]
            self._flags.pop(fx.block[0], None)  # the confiscation consumed the pending flags
        if fx.end_inspector:
            self._inspector = None
        if fx.inspector is not None:
            self._inspector = fx.inspector
        self._applied_seq = seq

    def _expire_flags(self, cutoff: dt.datetime) -> None:
        """Drop the cached pending flags raised before ``cutoff`` (aware UTC): pops the heap while
        its oldest entry is older, so a tap costs O(expired · log n), not a walk of every flag."""
        heap = self._flag_heap
        while heap and heap[0][0] < cutoff:
            _at, uid, flag = heapq.heappop(heap)
            flags = self._flags.get(uid)
            if flags is None:
                continue
            current = flags.get(flag)
            if current is not None and current < cutoff:
                del flags[flag]
                if not flags:
                    del self._flags[uid]

    def find_dispatch(self, key: tuple) -> EscalaEntry | None:
        """The escala entry with this identity (see ``escala_key``), if in the copy."""
        return self._escala_keys.get(key)

    def close(self) -> None:
        """Checkpoint the WAL into the file (truncating it) and close."""
        with self._lock:
            if self._closed:  # close() may be called twice
                return
            checkpoint(self._db, self.path)
            self._db.close()
            self._closed = True

    # -- helpers -----------------------------------------------------------------------------------

    def _write(self, work) -> None:
        with self._lock:
            self._last_card = self._last_worker = None
            try:
                work(self._db)
                self._db.commit()
            except sqlite3.Error as exc:
                self._db.rollback()
                raise StoreError(f"store write failed: {exc}") from exc
            except BaseException:
                self._db.rollback()
                raise

    def _set_version(self, c, name: str, version: int, at: dt.datetime | None) -> None:
        c.execute(_UPSERT_VERSION, {"name": name, "version": version, "updated_at": _iso(at)})
        self._versions[name] = (version, at)

    def _settle_blocklist(self, c, cards: Sequence[Card]) -> None:
        # Once the office's roster itself shows a card confiscated here as not active, the roster governs.
        done = [x.uid for x in cards if x.uid in self._blocked and x.status is not CardStatus.ACTIVE]
        if done:
            c.executemany("DELETE FROM blocklist WHERE uid = ?", [(u,) for u in done])
            for uid in done:
                self._blocked.pop(uid, None)


def _read(text: str) -> ReadUid | None:
    try:
        return parse_read(text)
    except BadInput:
        return None


def _probe_write(db: sqlite3.Connection, path: Path) -> None:
    """Write one ``meta`` row inside a transaction and roll it back: raises ``StoreError`` when the
    file cannot be written (read-only file, directory or mount), which SQLite only says at the
    first write."""
    try:
        db.execute("INSERT OR REPLACE INTO meta (\"key\", value) VALUES ('write_probe', '')")
    except sqlite3.Error as exc:
        if is_locked(exc):
            raise StoreLocked(path) from exc
        raise StoreError(f"store {path} cannot be written: {exc}") from exc
    finally:
        db.rollback()


def _upgrade_blocklist(db: sqlite3.Connection, path: Path) -> None:
    """Upgrade a store file written before ``office_blocks`` existed: its ``blocklist`` held both the
    cards confiscated at this gate and the office's blocks. Rows whose reason is not a gate
    confiscation (``edge.effects.is_gate_confiscation``: "confiscated: <flag>"; the office's reasons
    are plain statuses such as "confiscated", "lost", "replaced") move to ``office_blocks``, so the
    next office snapshot governs them (a card returned before the upgrade is admitted again); the
    gate's own confiscations stay in ``blocklist``. One transaction, which also creates
    ``office_blocks``: a crash leaves the old file as it was, upgraded at the next open. Raises
    ``sqlite3.Error`` (the caller reports a ``StoreError``)."""
    try:
        db.execute("BEGIN IMMEDIATE")  # sqlite3 does not begin a transaction before DDL
        rows = db.execute("SELECT uid, reason, at FROM blocklist").fetchall()
        office = [r for r in rows if not is_gate_confiscation(r[1])]
        db.execute(t.office_blocks.ddl)
        if office:
            db.executemany("INSERT INTO office_blocks (uid, reason, at) VALUES (?, ?, ?)", office)
            db.execute("DELETE FROM blocklist WHERE uid IN (SELECT uid FROM office_blocks)")
        db.commit()
    except BaseException:
        db.rollback()
        raise
    log.info("store_upgraded", path=str(path), office_blocks=len(office), kept_local=len(rows) - len(office))


def _open_row(s: OpenShift, origin: str) -> dict:
    return {
        "registration": s.registration, "origin": origin, "gate_id": s.gate_id, "ship": s.ship,
        "admitted_at": _iso(s.admitted_at), "dispatch": _dispatch_json(s.dispatch),
    }


def _dedupe(entries: list[EscalaEntry]) -> list[EscalaEntry]:
    return list({escala_key(e): e for e in entries}.values())


def _pragmas(db: sqlite3.Connection) -> None:
    cur = db.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA cache_size=-2000")
    for pragma in WAL_PRAGMAS:  # the -wal file stays near 1 MiB (edge.sqlite_files)
        cur.execute(pragma)
    cur.close()
