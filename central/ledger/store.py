"""Ledger I/O around the pure shift reconstruction: read events, write and read derived shifts.

All times written are aware UTC; SQLite returns them naive, so every read goes through ``as_utc``.
Vendor (SQLAlchemy) errors are translated to ``StoreError`` at the public functions.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from operator import itemgetter
from zoneinfo import ZoneInfo

import msgspec
from sqlalchemy import and_, delete, insert, or_, select
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from central.ledger.bulk import insert_rows
from central.ledger.schema import events
from central.ledger.corrections import apply_corrections
from central.ledger.shifts import Flag, Shift, reconstruct
from central.ledger.tables import shift_flags, shifts
from portgate.errors import StoreError
from portgate.timeutil import as_utc
from wire.events import Event, TapPayload, decode, encode

#: Events are read this far around the requested work dates (periods cross midnight; extensions).
MARGIN = dt.timedelta(days=2)



def event_row(event: Event, received_at: dt.datetime) -> dict:
    """The ``events`` row of a wire event (what the ingest inserts), keeping its MAC and raw bytes."""
    payload = event.payload
    tap = isinstance(payload, TapPayload)
    return {
        "event_id": event.event_id, "port": event.port, "gate_id": event.gate_id,
        "boot_id": event.boot_id, "seq": event.seq, "occurred_at": event.occurred_at.astimezone(dt.UTC),
        "clock_trusted": event.clock_trusted, "mono_ns": event.mono_ns,
        "type": type(payload).__struct_config__.tag, "registration": getattr(payload, "registration", None),
        "decision": payload.decision if tap else None, "payload": msgspec.to_builtins(payload),
        "mac": event.mac, "raw": encode(event), "received_at": received_at,
    }


def insert_events(conn: Connection, evs: list[Event], received_at: dt.datetime) -> None:
    """Append events (tests, demo, bench). The ingest has its own deduplicating path."""
    if evs:
        conn.execute(insert(events), [event_row(e, received_at) for e in evs])


def load_events(conn: Connection, date_from: dt.date, date_to: dt.date, zone: ZoneInfo) -> list[Event]:
    """Admit/exit taps and meal-worked records (P6) that can belong to shifts of local work dates
    [date_from, date_to], every
    untrusted-clock tap (its stored time means nothing), and the trusted events of those boots (clock
    anchors)."""
    lo = dt.datetime.combine(date_from, dt.time(0), zone).astimezone(dt.UTC) - MARGIN
    hi = dt.datetime.combine(date_to + dt.timedelta(days=1), dt.time(0), zone).astimezone(dt.UTC) + MARGIN
    taps = conn.execute(
        select(events.c.raw).where(
            or_(and_(events.c.type == "tap", events.c.decision.in_(("admit", "exit"))),
                events.c.type == "meal_worked"),  # P6 recorded at the gate
            or_(and_(events.c.occurred_at >= lo, events.c.occurred_at < hi),
                events.c.clock_trusted.is_(False)),
        )
    ).scalars().all()
    out = [decode(raw) for raw in taps]
    seen = {e.event_id for e in out}
    boots = {(e.gate_id, e.boot_id) for e in out if not e.clock_trusted}
    for gate, boot in sorted(boots):
        rows = conn.execute(
            select(events.c.raw).where(events.c.gate_id == gate, events.c.boot_id == boot,
                                       events.c.clock_trusted.is_(True))
        ).scalars().all()
        for raw in rows:
            ev = decode(raw)
            if ev.event_id not in seen:
                seen.add(ev.event_id)
                out.append(ev)
    return out


def rebuild_shifts(engine: Engine, date_from: dt.date, date_to: dt.date, zone: ZoneInfo,
                   *, now: dt.datetime) -> list[Shift]:
    """Reconstruct the shifts of work dates [date_from, date_to] from the events table and replace
    the stored ``shifts``/``shift_flags`` of those dates. ``now`` is stamped as ``rebuilt_at``.
    Raises ``StoreError`` if the database fails (nothing is half-written: one transaction)."""
    try:
        with engine.begin() as conn:
            found = [s for s in reconstruct(load_events(conn, date_from, date_to, zone), zone)
                     if date_from <= s.work_date <= date_to]
            found = apply_corrections(conn, found)  # P6 meal worked recorded by the office
            conn.execute(delete(shifts).where(shifts.c.work_date >= date_from,
                                              shifts.c.work_date <= date_to))
            if found:
                insert_rows(conn, shifts, [_shift_row(s, now) for s in found])
                insert_rows(conn, shift_flags, [{"shift_id": s.shift_id, "flag": f.code, "detail": f.detail}
                                                for s in found for f in s.flags])
        return found
    except SQLAlchemyError as exc:
        raise StoreError(f"rebuilding shifts failed: {exc}") from exc


def _shift_row(s: Shift, now: dt.datetime) -> dict:
    return {
        "shift_id": s.shift_id, "registration": s.registration, "ship": s.ship,
        "work_date": s.work_date, "period": s.period, "function": s.function, "berth": s.berth,
        "voyage": s.voyage, "post": s.post, "gate_id": s.gate_id, "period_start": s.period_start,
        "period_end": s.period_end, "admit_at": s.admit_at, "exit_at": s.exit_at,
        "closed_by": s.closed_by, "admit_event_id": s.admit_event_id,
        "exit_event_id": s.exit_event_id, "meal_worked": s.meal_worked, "held": s.held,
        "rebuilt_at": now,
    }


def read_shifts(conn: Connection, date_from: dt.date, date_to: dt.date) -> list[Shift]:
    """Stored shifts of work dates [date_from, date_to] with their flags, ordered by period start."""
    try:
        flag_map: dict[str, list[Flag]] = defaultdict(list)
        for sid, code, detail in conn.execute(
            select(shift_flags.c.shift_id, shift_flags.c.flag, shift_flags.c.detail)
            .join(shifts, shifts.c.shift_id == shift_flags.c.shift_id)
            .where(shifts.c.work_date >= date_from, shifts.c.work_date <= date_to)
            .order_by(shift_flags.c.id)
        ):
            flag_map[sid].append(Flag(code, detail))
        c = shifts.c
        rows = conn.execute(
            select(c.shift_id, c.registration, c.ship, c.work_date, c.period, c.function, c.berth,
                   c.voyage, c.post, c.gate_id, c.period_start, c.period_end, c.admit_at, c.exit_at,
                   c.closed_by, c.admit_event_id, c.exit_event_id, c.meal_worked)
            .where(c.work_date >= date_from, c.work_date <= date_to)
        ).all()
        # ordered here: sorting the fetched rows is cheaper than SQLite's temporary B-tree
        rows.sort(key=itemgetter(10, 1))  # (period_start, registration)
        utc, combine = dt.UTC, dt.datetime.combine
        bounds: dict[dt.datetime, dt.datetime] = {}  # a month has ~124 distinct period bounds
        out = []
        for (sid, reg, ship, wdate, period, function, berth, voyage, post, gate, pstart, pend,
             admit, exit_, closed_by, admit_id, exit_id, meal) in rows:
            # SQLite hands back naive UTC: put the zone back (PostgreSQL is already aware);
            # combine() is several times cheaper than replace(tzinfo=) on CPython 3.11
            if pstart.tzinfo is None:
                start = bounds.get(pstart)
                if start is None:
                    start = bounds[pstart] = combine(pstart.date(), pstart.time(), utc)
                end = bounds.get(pend)
                if end is None:
                    end = bounds[pend] = combine(pend.date(), pend.time(), utc)
                pstart, pend = start, end
                if admit is not None:
                    admit = combine(admit.date(), admit.time(), utc)
                if exit_ is not None:
                    exit_ = combine(exit_.date(), exit_.time(), utc)
            elif pstart.tzinfo is not utc:
                pstart, pend, admit, exit_ = (as_utc(v) for v in (pstart, pend, admit, exit_))
            out.append(Shift(sid, reg, ship, wdate, period, function, berth, voyage, post, gate,
                             pstart, pend, admit, exit_, closed_by, admit_id, exit_id, bool(meal),
                             tuple(flag_map[sid]) if sid in flag_map else ()))
        return out
    except SQLAlchemyError as exc:
        raise StoreError(f"reading shifts failed: {exc}") from exc
