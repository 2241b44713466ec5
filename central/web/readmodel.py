"""What the live port view shows, read from the ledger (no writes, no rules of its own).

- ``gate_rows``: every gate known to the office (a retained status or events, or named by a ship
  call in port or the escala of these hours though it never connected: ``never_seen``),
  online/offline with its boot id and since when, outbox depth, oldest unsent age, clock trusted,
  copies stale (G8, ``copies_max_age_h``), its readers' health, and its last event.
- ``ship_rows``: every ship in port (a ship call between arrival and departure, or a ship of an
  escala period running now), with per period the posts dispatched and who is aboard now.
- ``open_alarms``: coverage alarms (G11) still raised; ``open_reader_alarms``: readers in fault.
- ``version``: a small tuple that changes whenever anything above may have changed (the live
  stream sends a change notice when it does).

Times in the ledger are UTC; SQLite returns them naive (``aware`` makes them aware).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import NamedTuple
from zoneinfo import ZoneInfo

from sqlalchemy import and_, func, or_, select, tuple_
from sqlalchemy.engine import Connection

from central.calls.schema import coverage_alarms, ship_calls
from central.ledger import reader_alarms
from central.ledger.schema import events, gate_progress, gate_status
from central.ledger.schema import reader_alarms as reader_alarms_t
from central.registry.schema import cases, workers
from central.rotation.schema import escala
from portgate.timeutil import as_utc


@dataclasses.dataclass(frozen=True)
class ReaderRow:
    reader_id: str
    kind: str  # control | badge | ?
    state: str  # ok | fault | unknown
    since: dt.datetime | None
    last_read_at: dt.datetime | None
    detail: str


@dataclasses.dataclass(frozen=True)
class GateRow:
    gate_id: str
    online: bool | None  # None: no status received yet
    reason: str | None
    boot_id: str | None
    since: dt.datetime | None
    outbox_depth: int | None
    oldest_unsent_s: float | None
    clock_trusted: bool | None
    copies_stale: bool | None
    last_event_at: dt.datetime | None
    last_event: str | None  # e.g. "tap admit V001" / "alert COVERAGE_GAP"
    # the same as (type, detail, who), for the page's language (``service_texts.event_text``)
    last_event_parts: tuple[str, str, str] | None = None
    readers: list[ReaderRow] = dataclasses.field(default_factory=list)  # from its last status
    never_seen: bool = False  # named by a ship call or the escala; no status, no event ever
    port: str | None = None  # the port of its status row (``gate_status.port``); None: no status or not known

    @property
    def reader_fault(self) -> bool:
        return any(r.state == "fault" for r in self.readers)


def _reader_rows(items, now: dt.datetime) -> list[ReaderRow]:
    out = []
    for r in items or []:
        if not isinstance(r, dict) or not r.get("reader_id"):
            continue
        since = _iso(r.get("since"))
        last = _iso(r.get("last_read_at"))
        out.append(ReaderRow(str(r["reader_id"]), str(r.get("kind") or "?"), str(r.get("state") or "unknown"),
                             since, last, str(r.get("detail") or "")))
    return out


def _iso(text) -> dt.datetime | None:
    try:
        return as_utc(dt.datetime.fromisoformat(text)) if text else None
    except (TypeError, ValueError):
        return None


def expected_gates(conn: Connection, now: dt.datetime) -> set[str]:
    """Gates the office expects to hear from now: the gangway gate of every ship call in port, and
    every gate of the escala's periods within 12 hours of ``now``."""
    calls = conn.execute(select(ship_calls.c.gate_id).where(
        ship_calls.c.gate_id.is_not(None), ship_calls.c.gate_id != "", ship_calls.c.arrival <= now,
        or_(ship_calls.c.departure.is_(None), ship_calls.c.departure > now))).scalars()
    near = dt.timedelta(hours=12)
    named = conn.execute(select(escala.c.gate_id).distinct().where(
        escala.c.status == "active", escala.c.start_at <= now + near, escala.c.end_at > now - near)).scalars()
    return {g for g in (*calls, *named) if g}


def _last_events(conn: Connection) -> dict[str, object]:
    """gate id -> its newest event (highest seq: type, decision, registration, payload, port)."""
    tops = dict(conn.execute(select(events.c.gate_id, func.max(events.c.seq)).group_by(events.c.gate_id)).all())
    if not tops:
        return {}
    rows = conn.execute(select(events.c.gate_id, events.c.port, events.c.occurred_at, events.c.type,
                               events.c.decision, events.c.registration, events.c.payload)
                        .where(tuple_(events.c.gate_id, events.c.seq).in_(list(tops.items()))))
    return {r.gate_id: r for r in rows}


def _event_words(e) -> tuple[str | None, tuple[str, str, str] | None]:
    """An event's short text and its (type, detail, who) parts; (None, None) for no event."""
    if e is None:
        return None, None
    payload = e.payload or {}
    detail = e.decision or payload.get("code") or payload.get("reason_flag") or payload.get("state") or ""
    who = e.registration or payload.get("watchman") or ""  # a coverage end names its watchman
    parts = (e.type, detail, who)
    return " ".join(x for x in parts if x), parts


def _gate_row(gate_id: str, s, e, now: dt.datetime, copies_max_age_h: float, never_seen: bool) -> GateRow:
    """One gate's row from its status ``s`` (a ``gate_status`` row or None) and newest event ``e``."""
    text, parts = _event_words(e)
    oldest = as_utc(s.oldest_unsent_at) if s is not None else None
    copies = as_utc(s.copies_updated_at) if s is not None else None
    return GateRow(
        gate_id=gate_id,
        online=None if s is None else s.state == "online",
        reason=None if s is None else s.reason,
        boot_id=None if s is None else s.boot_id,
        since=None if s is None else as_utc(s.since),
        outbox_depth=None if s is None else s.outbox_depth,
        oldest_unsent_s=None if oldest is None else max(0.0, (now - oldest).total_seconds()),
        clock_trusted=None if s is None else s.clock_trusted,
        copies_stale=None if copies is None else now - copies > dt.timedelta(hours=copies_max_age_h),
        last_event_at=None if e is None else as_utc(e.occurred_at),
        last_event=text,
        last_event_parts=parts,
        readers=_reader_rows(s.readers, now) if s is not None else [],
        never_seen=never_seen,
        port=(s.port or None) if s is not None else None,
    )


def gate_rows(conn: Connection, now: dt.datetime, copies_max_age_h: float) -> list[GateRow]:
    """The live page's gates, by gate id then port: one row per stored status (``gate_status`` is
    keyed by port + gate id: a gate id at two ports is two rows, each with its ``port``), one without
    a port for a gate with events or progress but no status, or named by a ship call or the escala
    (``expected_gates``). A row's last event is the gate's newest one when it is of the row's port."""
    statuses: dict[str, list] = {}
    for r in conn.execute(select(gate_status).order_by(gate_status.c.gate_id, gate_status.c.port)):
        statuses.setdefault(r.gate_id, []).append(r)
    last = _last_events(conn)
    seen = set(statuses) | set(last) | set(conn.execute(select(gate_progress.c.gate_id)).scalars())
    out = []
    for gate_id in sorted(seen | expected_gates(conn, now)):
        e = last.get(gate_id)
        for s in statuses.get(gate_id) or [None]:
            mine = e if e is None or s is None or not s.port or s.port == e.port else None
            out.append(_gate_row(gate_id, s, mine, now, copies_max_age_h, gate_id not in seen))
    return out


class Post(NamedTuple):  # a named tuple: 2,400 of them per panel at 60 ships
    post: str
    function: str
    registration: str
    name: str
    aboard: bool


@dataclasses.dataclass(frozen=True)
class PeriodRow:
    period: str
    date: dt.date
    start: dt.datetime
    end: dt.datetime
    posts: list[Post]


@dataclasses.dataclass(frozen=True)
class ShipRow:
    ship: str
    ship_name: str
    voyage: str
    berth: str
    gate_id: str | None
    arrival: dt.datetime | None
    departure: dt.datetime | None
    periods: list[PeriodRow]
    aboard: list[tuple[str, str, dt.datetime]]  # (registration, name, admitted at)
    alarm: bool
    gate_live: bool = True  # its gangway gate is online (False: no gate, never seen, or offline)


def _calls_and_entries(conn: Connection, now: dt.datetime, tz: ZoneInfo) -> tuple[list, list]:
    """The ship calls in port at ``now`` and the active dispatches of today (port time) or under way."""
    calls = conn.execute(select(ship_calls).where(
        ship_calls.c.arrival <= now, or_(ship_calls.c.departure.is_(None), ship_calls.c.departure > now))
        .order_by(ship_calls.c.ship)).all()
    today = now.astimezone(tz).date()
    entries = conn.execute(select(escala.c.date, escala.c.period, escala.c.ship, escala.c.ship_name, escala.c.voyage,
                                  escala.c.berth, escala.c.gate_id, escala.c.post, escala.c.function,
                                  escala.c.registration, escala.c.start_at, escala.c.end_at).where(
        escala.c.status == "active",
        or_(escala.c.date == today, and_(escala.c.start_at <= now, escala.c.end_at > now)))
        .order_by(escala.c.start_at, escala.c.ship, escala.c.post)).all()
    return calls, entries


def ship_rows(conn: Connection, now: dt.datetime, tz: ZoneInfo) -> list[ShipRow]:
    """The live page's ships: each ship in port now (its call) or with a dispatch today or under way,
    with its periods' posts (names, who is aboard), who is aboard now, its open coverage alarm and
    whether its gate is online. ``now``: aware UTC; ``tz``: the port's zone (today's date)."""
    calls, entries = _calls_and_entries(conn, now, tz)
    gate_ship = {c.gate_id: c.ship for c in calls if c.gate_id}
    first: dict[str, tuple] = {}  # ship -> its first dispatch
    for e in entries:  # rows as tuples (_calls_and_entries' columns): 2,400 at 60 ships
        gate_ship.setdefault(e[6], e[2])
        if e[2] not in first:
            first[e[2]] = e
    open_rows = aboard_now(conn, gate_ship)
    regs = {r[0] for r in open_rows} | {e[9] for e in entries}
    names = dict(conn.execute(select(workers.c.registration, workers.c.name)
                              .where(workers.c.registration.in_(regs))).all()) if regs else {}
    alarmed = set(conn.execute(select(coverage_alarms.c.ship).where(coverage_alarms.c.ended_at.is_(None))).scalars())
    online = set(conn.execute(select(gate_status.c.gate_id).where(gate_status.c.state == "online")).scalars())
    ships: dict[str, dict] = {}
    for c in calls:
        ships[c.ship] = {"ship": c.ship, "ship_name": c.ship_name, "voyage": c.voyage, "berth": c.berth,
                         "gate_id": c.gate_id, "arrival": as_utc(c.arrival), "departure": as_utc(c.departure)}
    for ship, e in first.items():
        ships.setdefault(ship, {"ship": ship, "ship_name": e.ship_name, "voyage": e.voyage, "berth": e.berth,
                                "gate_id": e.gate_id, "arrival": None, "departure": None})
    aboard_by_ship: dict[str, list] = {}
    aboard_regs: dict[str, str] = {}
    for reg, ship, at in open_rows:
        aboard_by_ship.setdefault(ship, []).append((reg, names.get(reg, ""), at))
        aboard_regs[reg] = ship
    by_ship: dict[str, dict[tuple, list[Post]]] = {}  # ship -> (date, period, start, end) -> posts
    for date, period, ship, _n, _v, _b, _g, post, function, reg, start_at, end_at in entries:
        by_ship.setdefault(ship, {}).setdefault((date, period, start_at, end_at), []).append(
            Post(post, function, reg, names.get(reg, ""), aboard_regs.get(reg) == ship))
    out = []
    for ship, info in sorted(ships.items()):
        periods = by_ship.get(ship, {})
        out.append(ShipRow(
            **info,
            periods=[PeriodRow(p, d, as_utc(s), as_utc(en), posts) for (d, p, s, en), posts in periods.items()],
            aboard=sorted(aboard_by_ship.get(ship, [])),
            alarm=ship in alarmed,
            gate_live=bool(info["gate_id"]) and info["gate_id"] in online,
        ))
    return out


def aboard_now(conn: Connection, gate_ship: dict[str, str]) -> list[tuple[str, str, dt.datetime]]:
    """(registration, ship, admitted at) of every worker whose latest admit/exit in the ledger (by
    row id, as ``central.broadcast.presence``) is an admit at a gate serving a known ship."""
    latest = (select(func.max(events.c.id))
              .where(events.c.decision.in_(("admit", "exit")), events.c.registration.is_not(None))
              .group_by(events.c.registration))
    rows = conn.execute(select(events.c.registration, events.c.gate_id, events.c.occurred_at)
                        .where(events.c.id.in_(latest), events.c.decision == "admit")).all()
    return [(r.registration, gate_ship[r.gate_id], as_utc(r.occurred_at)) for r in rows if r.gate_id in gate_ship]


def open_alarms(conn: Connection) -> list[dict]:
    rows = conn.execute(select(coverage_alarms, ship_calls.c.ship_name)
                        .join(ship_calls, ship_calls.c.id == coverage_alarms.c.call_id)
                        .where(coverage_alarms.c.ended_at.is_(None)).order_by(coverage_alarms.c.raised_at))
    return [dict(r._mapping) | {"period_start": as_utc(r.period_start), "raised_at": as_utc(r.raised_at)} for r in rows]


def open_reader_alarms(conn: Connection) -> list[dict]:
    """Readers in fault now (``central.ledger.reader_alarms``), oldest first."""
    return list(reversed(reader_alarms.list_alarms(conn, open_only=True)))


def version(conn: Connection) -> tuple:
    """Changes whenever an event, a gate status, an alarm, a ship call, the escala or a case changes."""
    q = select(
        select(func.max(events.c.id)).scalar_subquery(),
        select(func.max(gate_status.c.received_at)).scalar_subquery(),
        select(func.max(coverage_alarms.c.id)).scalar_subquery(),
        select(func.count()).select_from(coverage_alarms).where(coverage_alarms.c.ended_at.is_not(None))
        .scalar_subquery(),
        select(func.max(ship_calls.c.updated_at)).scalar_subquery(),
        select(func.max(escala.c.id)).scalar_subquery(),
        select(func.count()).select_from(escala).where(escala.c.status == "active").scalar_subquery(),
        select(func.max(cases.c.id)).scalar_subquery(),
        select(func.max(reader_alarms_t.c.id)).scalar_subquery(),
        select(func.count()).select_from(reader_alarms_t).where(reader_alarms_t.c.ended_at.is_not(None))
        .scalar_subquery(),
    )
    return tuple(str(v) for v in conn.execute(q).one())
