"""The office's downlink publisher when the registry is the source (``[publish] source = "registry"``):
every registry or escala change reaches the gates as a delta within about ``poll_s`` seconds
(roster and blocklist deltas; a late substitution is re-published at once; a sanction takes effect
at the gates on its start date, because the worker row carries the suspension dates and G3 checks
them).

What is published (topics ``portgate/v1/{port}/down/{kind}/{snapshot|delta}``, QoS 1):

- ``roster``: every worker and card (``central.registry.api.roster_snapshot``); deltas carry the
  workers and cards upserted by ``roster``/``cards`` change rows. On an office of several ports:
  the publisher's port's workers and their cards only (``central.broadcast.port_roster``).
- ``cards`` (the blocklist): every registry card whose status is not ``active``, plus the ledger's
  confiscations the registry does not account for (card unknown to it, or no case opened for the
  event; as in ``central.broadcast.blocklist``); deltas carry the cards that became not active and new
  such ledger confiscations (``blocked``), and the cards that became active again (``unblocked``:
  returned to their holder; unless a ledger confiscation the registry does not account for still
  blocks the card, as in the snapshot).
- ``escala``: the active entries of yesterday, today and tomorrow (port time zone ``tz``;
  yesterday's 19-01 period runs until 01:00 today, so a gate must still hold it after midnight);
  deltas carry the upserts and removals of those dates (a late substitution is one removal plus one
  upsert). Only the entries at the publisher's port's gates (``central.broadcast.port_escala``).

Versions (one scheme per kind, only growing, all above the CSV source's millisecond versions so a
gate that held CSV copies takes the registry's):

- roster: ``REGISTRY_BASE + id`` of the newest roster-or-cards change row; on an office of several
  ports (``serve_ports``, called by ``central.ingest.ports.PortsIngest`` for each port's publisher)
  each port's roster holds that port's workers only, with a chain of its own: ``PORT_BASE + id`` of
  the newest such row of the port, deltas of its rows only, a worker moved away is a fresh snapshot
  (``central.broadcast.port_roster``); the blocklist stays the same for every port;
- cards: ``REGISTRY_BASE + id`` of the newest cards change row ``+`` ledger row id of the newest
  confiscation (both grow, so the sum does);
- escala: ``local date ordinal * 2**32 + id`` of the newest escala change row: it also grows when
  the day changes, which republishes the snapshot for the new yesterday, today and tomorrow
  (``+ port_escala.ESCALA_PORT`` on an office of several ports).

Deltas are chained: ``from_version`` is the last version this publisher published of that kind. A
gate that missed one asks for a snapshot (``SnapshotRequest``), answered by the ingest workers with
``DownlinkPublisher.snapshot`` (the same versions). Retained snapshots are published at start, at most
every ``snapshot_min_s`` after changes, and at least every ``snapshot_every_s``.

Ordering: change ids come from one sequence but a transaction may commit after one holding a
higher id (PostgreSQL). The publisher therefore only advances over contiguous ids: a hole in the
ids is waited for ``HOLE_GRACE_S`` seconds (the transaction commits) and then taken as a rollback.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import threading
import time
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import msgspec
import structlog
from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from central.broadcast import port_roster
from central.broadcast.port_escala import ESCALA_PORT, at_port
from central.broadcast.port_roster import REGISTRY_BASE  # above any CSV version (file mtime in ms, ~1.7e12)
from central.broadcast.publisher import Publisher, office_signer
from central.config import CentralConfig
from central.ledger.schema import events
from central.registry.api import changes_since, roster_snapshot
from central.registry.schema import cards, cases, downlink_changes, inspectors
from central.rotation.service import escala_snapshot
from portgate.errors import ConfigError
from portgate.records import Card, EscalaEntry, Worker
from portgate.timeutil import as_utc
from wire import connection
from wire import downlink as dl

log = structlog.get_logger("central.broadcast.registry_source")

DAY_SHIFT = 2**32  # escala: date ordinal in the high part, change id in the low part
HOLE_GRACE_S = 5.0
KINDS = ("roster", "cards", "escala")


def _record(body: dict, record: type):
    """A change row's JSON body as a ``Worker``/``Card``/``EscalaEntry`` (extra keys such as ``id``
    ignored). Raises ``msgspec.ValidationError`` for a body that is not one."""
    return msgspec.convert(body, record, strict=False)


def inspector_rows(session: Session) -> list[dl.InspectorRow]:
    """The active union inspectors (``inspectors``), names for the gates' screens (issue 33)."""
    return [dl.InspectorRow(registration=r.registration, name=r.name or "") for r in session.execute(
        select(inspectors.c.registration, inspectors.c.name).where(inspectors.c.active == 1)
        .order_by(inspectors.c.registration))]


def escala_days(today: dt.date) -> tuple[dt.date, dt.date, dt.date]:
    """The local dates of the escala a gate holds on ``today``: yesterday (its 19-01 period runs
    past midnight, G6: a worker of that period tapping at 00:30 is dispatched), today and tomorrow."""
    return today - dt.timedelta(days=1), today, today + dt.timedelta(days=1)


@dataclasses.dataclass(frozen=True)
class Mark:
    """What a kind's published version is made of (compared to find what changed)."""

    version: int  # the wire version
    change_id: int  # newest change id of the kind(s) included
    ledger_id: int = 0  # cards: newest ledger confiscation row id
    day: dt.date | None = None  # escala: the local "today"


class Watermark:
    """The highest change id below which every id is committed (or was rolled back)."""

    def __init__(self, start: int) -> None:
        self.upto = start
        self._holes: dict[int, float] = {}  # missing id -> monotonic time first seen

    def advance(self, session: Session, mono: float) -> int:
        ids = [r[0] for r in session.execute(
            select(downlink_changes.c.id).where(downlink_changes.c.id > self.upto)
            .order_by(downlink_changes.c.id))]
        for i in ids:
            while self.upto + 1 < i:  # a hole before i
                first = self._holes.setdefault(self.upto + 1, mono)
                if mono - first < HOLE_GRACE_S:
                    return self.upto
                self._holes.pop(self.upto + 1, None)
                self.upto += 1
            self.upto = i
            self._holes.pop(i, None)
        return self.upto


def _newest(session: Session, upto: int, *kinds: str) -> int:
    value = session.execute(select(func.max(downlink_changes.c.id)).where(
        downlink_changes.c.kind.in_(kinds), downlink_changes.c.id <= upto)).scalar()
    return int(value or 0)


def _ledger_blocks(session: Session, after: int = 0, upto: int | None = None) -> list[dl.BlockedCard]:
    """Ledger confiscations (row id in ``(after, upto]``) the registry does not account for: the
    card is unknown to it, or no case was opened for the event (``record_confiscation`` refused it).
    A confiscation with a case is governed by the registry card's status (returned = unblocked)."""
    stmt = (select(events.c.id, events.c.event_id, events.c.payload, events.c.occurred_at)
            .where(events.c.type == "confiscation", events.c.id > after).order_by(events.c.id))
    if upto is not None:
        stmt = stmt.where(events.c.id <= upto)
    rows = session.execute(stmt).all()
    if not rows:
        return []
    known = {r[0] for r in session.execute(select(cards.c.uid))}
    with_case = {r[0] for r in session.execute(
        select(cases.c.event_id).where(cases.c.event_id.in_([r.event_id for r in rows])))}
    out = []
    for row in rows:
        uid = (row.payload or {}).get("uid")
        if uid and (uid not in known or row.event_id not in with_case):
            out.append(dl.BlockedCard(uid=uid, reason="confiscated", at=as_utc(row.occurred_at)))
    return out


class DownlinkPublisher:
    """Publishes registry changes to the gates (a thread with its own MQTT session).

    ``start()``/``stop()``; ``wake()`` makes it poll now (the ingest calls it after a confiscation).
    ``snapshot(kind, at)`` builds a snapshot for an ingest worker answering a ``SnapshotRequest``.
    ``poll_once()`` does one poll (tests and the thread). ``ConfigError`` for a bad ``publish.tz``.
    """

    def __init__(self, config: CentralConfig, engine: Engine) -> None:
        self.config = config
        self.settings = config.publish
        try:
            self.tz = ZoneInfo(self.settings.tz)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ConfigError(f"unknown time zone {self.settings.tz!r}", key="publish.tz") from exc
        self.engine = engine
        self.port = config.port
        self.served: tuple[str, ...] = (config.port,)  # the office's ports, home first (serve_ports)
        self.registered: dict[str, str] = {}  # gate id -> port of the registered gates (serve_ports)
        base = config.mqtt.client_id or f"ledger-{config.port}"
        self.client = connection.make_client(config.mqtt, f"{base}-downlink")
        self.client.max_queued_messages_set(0)
        self.client.on_connect = self._on_connect
        self.out = Publisher(self.client, self.port, office_signer(config.keys_dir))
        self.connected = threading.Event()
        self._lock = threading.Lock()  # one poll or snapshot build at a time
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._watermark: Watermark | None = None
        self._marks: dict[str, Mark] = {}
        self._snapped: dict[str, float] = {}  # kind -> monotonic time of the last retained snapshot
        self._dirty: set[str] = set()
        self.stats: dict[str, int] = {"deltas": 0, "snapshots": 0, "polls": 0}

    # -- life cycle --------------------------------------------------------------------------------
    def start(self) -> DownlinkPublisher:
        self._thread = threading.Thread(target=self._run, name="downlink", daemon=True)
        self._thread.start()
        connection.start(self.client, self.config.mqtt)
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self._stopping.set()
        self._wake.set()
        if self._thread:
            self._thread.join(timeout)
        self.client.disconnect()
        self.client.loop_stop()

    def wake(self) -> None:
        self._wake.set()

    def serve_ports(self, served: tuple[str, ...], registered: dict[str, str] | None = None) -> None:
        """Tell the publisher of ``self.port`` the office's ``served`` ports (home first,
        ``CentralConfig.served_ports``) and its ``registered`` gates (gate id -> port): with several,
        its roster is that port's alone, with a chain of its own (``central.broadcast.port_roster``);
        its escala is its port's gates' entries (``central.broadcast.port_escala``). Call before ``start``."""
        self.served = tuple(served) or (self.port,)
        self.registered = dict(registered or {})

    @property
    def per_port(self) -> bool:
        return len(self.served) > 1

    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        if not reason_code.is_failure:
            self.connected.set()

    def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                self.poll_once()
            except SQLAlchemyError:
                log.exception("downlink.poll_failed")  # retried on the next poll
            self._wake.wait(self.settings.poll_s)
            self._wake.clear()

    # -- versions ----------------------------------------------------------------------------------
    def _today(self, at: dt.datetime) -> dt.date:
        return at.astimezone(self.tz).date()

    def _marks_now(self, session: Session, upto: int, at: dt.datetime) -> dict[str, Mark]:
        if self.per_port:
            roster_id = port_roster.newest(session, upto, self.port, self.served[0])
        else:
            roster_id = _newest(session, upto, "roster", "cards")
        roster_base = port_roster.PORT_BASE if self.per_port else REGISTRY_BASE
        cards_id = _newest(session, upto, "cards")
        ledger_id = int(session.execute(select(func.max(events.c.id))
                                        .where(events.c.type == "confiscation")).scalar() or 0)
        escala_id = _newest(session, upto, "escala")
        today = self._today(at)
        return {
            "roster": Mark(roster_base + roster_id, roster_id),
            "cards": Mark(REGISTRY_BASE + cards_id + ledger_id, cards_id, ledger_id),
            "escala": Mark(today.toordinal() * DAY_SHIFT + ESCALA_PORT * self.per_port + escala_id, escala_id,
                           day=today),
        }

    def _upto(self, session: Session) -> int:
        if self._watermark is None:
            start = int(session.execute(select(func.max(downlink_changes.c.id))).scalar() or 0)
            self._watermark = Watermark(start)
        return self._watermark.advance(session, time.monotonic())

    # -- snapshots ---------------------------------------------------------------------------------
    def snapshot(self, kind: str, at: dt.datetime):
        """The whole ``kind`` (roster|cards|escala) as of now, at the version the deltas chain from;
        None for another kind. Raises ``SQLAlchemyError`` (the caller logs; the gate asks again)."""
        if kind not in KINDS:
            return None
        with self._lock, Session(self.engine) as session, session.begin():
            upto = self._upto(session)
            mark = self._marks_now(session, upto, at)[kind]
            return self._build_snapshot(session, kind, mark, at)

    def _build_snapshot(self, session: Session, kind: str, mark: Mark, at: dt.datetime):
        if kind == "roster":
            if self.per_port:
                workers, cards_ = port_roster.snapshot(session, self.port, self.served[0])
            else:
                _v, workers, cards_ = roster_snapshot(session)
            return dl.RosterSnapshot(version=mark.version, at=at, workers=workers, cards=cards_,
                                     inspectors=inspector_rows(session))
        if kind == "cards":
            return dl.CardsSnapshot(version=mark.version, at=at, blocked=self._blocklist(session, at))
        entries: list[EscalaEntry] = []
        ours = at_port(session, self.port, self.served, self.registered)
        for day in escala_days(mark.day):
            entries.extend(e for e in escala_snapshot(session, day)[1] if ours(e))
        return dl.EscalaSnapshot(version=mark.version, at=at, entries=entries)

    @staticmethod
    def _blocklist(session: Session, at: dt.datetime) -> list[dl.BlockedCard]:
        rows = session.execute(select(cards.c.uid, cards.c.status, cards.c.updated_at)).all()
        blocked = {r.uid: dl.BlockedCard(uid=r.uid, reason=r.status, at=as_utc(r.updated_at) or at)
                   for r in rows if r.status != "active"}
        for b in _ledger_blocks(session):
            blocked.setdefault(b.uid, b)
        return list(blocked.values())

    # -- polling -----------------------------------------------------------------------------------
    def poll_once(self, at: dt.datetime | None = None) -> list[tuple[str, str, int]]:
        """Read new changes, publish deltas (and due snapshots). Returns ``(kind, form, version)``
        of what was published. Raises ``SQLAlchemyError`` (the thread logs and retries)."""
        at = at or dt.datetime.now(dt.UTC)
        mono = time.monotonic()
        out: list[tuple[str, str, object]] = []
        with self._lock, Session(self.engine) as session, session.begin():
            upto = self._upto(session)
            now_marks = self._marks_now(session, upto, at)
            for kind in KINDS:
                new, old = now_marks[kind], self._marks.get(kind)
                if old is None:
                    out.append((kind, "snapshot", self._build_snapshot(session, kind, new, at)))
                elif new.version != old.version:
                    delta = self._build_delta(session, kind, old, new, at)
                    if delta is None:  # cannot be said as a delta (a new day, a bad body)
                        out.append((kind, "snapshot", self._build_snapshot(session, kind, new, at)))
                    else:
                        out.append((kind, "delta", delta))
                        self._dirty.add(kind)
                elif (kind in self._dirty and mono - self._snapped.get(kind, 0) >= self.settings.snapshot_min_s) \
                        or mono - self._snapped.get(kind, 0) >= self.settings.snapshot_every_s:
                    out.append((kind, "snapshot", self._build_snapshot(session, kind, new, at)))
                self._marks[kind] = new
        published = []
        for kind, form, msg in out:
            self.out.send(kind, form, msg)
            version = msg.version if form == "snapshot" else msg.to_version
            if form == "snapshot":
                self._snapped[kind] = mono
                self._dirty.discard(kind)
            self.stats[form + "s"] += 1
            published.append((kind, form, version))
            log.info("downlink.published", kind=kind, form=form, version=version)
        self.stats["polls"] += 1
        return published

    def _build_delta(self, session: Session, kind: str, old: Mark, new: Mark, at: dt.datetime):
        """The delta from ``old`` to ``new`` (possibly empty: the version moved for a change the gates
        do not hold, e.g. an escala entry three days ahead); None if only a snapshot can say it."""
        try:
            if kind == "roster":
                return self._roster_delta(session, old, new, at)
            if kind == "cards":
                return self._cards_delta(session, old, new, at)
            return self._escala_delta(session, old, new, at)
        except msgspec.ValidationError:
            log.exception("downlink.bad_change_body", kind=kind)
            return None

    def _changes(self, session, kind, old: Mark, new: Mark):
        return [c for c in changes_since(session, kind, old.change_id) if c.version <= new.change_id]

    def _roster_delta(self, session, old: Mark, new: Mark, at):
        if self.per_port:
            changes = port_roster.changes(session, old.change_id, new.change_id, self.port, self.served[0])
        else:
            changes = self._changes(session, "roster", old, new) + self._changes(session, "cards", old, new)
        if any(c.op != "upsert" for c in changes):
            return None
        return dl.RosterDelta(
            from_version=old.version, to_version=new.version, at=at,
            workers_upsert=[_record(c.body, Worker) for c in changes if c.kind == "roster"],
            cards_upsert=[_record(c.body, Card) for c in changes if c.kind == "cards"])

    def _cards_delta(self, session, old: Mark, new: Mark, at):
        status: dict[str, dl.BlockedCard | None] = {}  # newest change per card: blocked, or None = active
        for c in self._changes(session, "cards", old, new):
            if c.op == "upsert" and c.body:
                active = c.body.get("status") == "active"
                status[c.key] = None if active else dl.BlockedCard(
                    uid=c.key, reason=c.body.get("status", "blocked"), at=c.created_at)
        blocked = [b for b in status.values() if b is not None]
        if new.ledger_id > old.ledger_id:
            blocked += _ledger_blocks(session, old.ledger_id, new.ledger_id)
        unblocked = [uid for uid, b in status.items() if b is None]
        if unblocked:  # a ledger block the registry does not account for still stands (as in the snapshot)
            still = {b.uid for b in _ledger_blocks(session, 0, new.ledger_id)}
            unblocked = [uid for uid in unblocked if uid not in still]
        return dl.CardsDelta(from_version=old.version, to_version=new.version, at=at,
                             blocked=blocked, unblocked=unblocked)

    def _escala_delta(self, session, old: Mark, new: Mark, at):
        if old.day != new.day:
            return None
        days = set(escala_days(new.day))
        upsert, remove = [], []
        ours = at_port(session, self.port, self.served, self.registered)
        for c in self._changes(session, "escala", old, new):
            entry = _record(c.body, EscalaEntry)
            if entry.date in days and ours(entry):
                (upsert if c.op == "upsert" else remove).append(entry)
        return dl.EscalaDelta(from_version=old.version, to_version=new.version, at=at,
                              upsert=upsert, remove=remove)
