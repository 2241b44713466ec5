"""The office's coverage alarm (RULES.md G11, 83.611 arts. 5-8).

A long-haul ship in port (a ship call, arrival to departure) must have a gangway watchman aboard
in every period of its stay (01-07, 07-13, 13-19, 19-01 local). For each period overlapping the
stay, the reference time is its start (or the arrival, for the period the ship arrives in); if no
gangway watchman is aboard ``grace`` after it (default 30 min), a COVERAGE_GAP alarm is raised at
that moment and ends when a gangway watchman is admitted (or the ship leaves). A cabotage call
raises only for the periods for which a gangway watchman was requisitioned (an active escala entry
of the ship at the gangway post with a watchman function). A call whose gangway has no gate
(``gate_id`` empty) or whose gate never connected raises all the same: nobody can be admitted
there, and the gate's own G11 check never runs, so the office is the only one to see it.

``gaps`` is pure (no clock, no database); ``evaluate`` reads the ledger's admits/exits at the
ship's gate and writes ``coverage_alarms`` rows (one per call and period, start and end).

A gangway watchman: an admit whose dispatch is the gangway post (``portalo``) with a watchman
function, or an admit without a dispatch at the ship's gate (the gate decided on its own copy).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from zoneinfo import ZoneInfo

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from central.calls.schema import coverage_alarms, ship_calls
from central.ledger.schema import events
from central.rotation.schema import escala
from portgate.timeutil import as_utc

PERIOD_HOURS = (1, 7, 13, 19)
WATCH_FUNCTIONS = ("vigia", "vigia_chefe")
GANGWAY_POST = "portalo"
LOOKBACK = dt.timedelta(hours=36)  # periods older than this are not looked at again


@dataclasses.dataclass(frozen=True, slots=True)
class Gap:
    period_start: dt.datetime  # the reference time (period start, or arrival)
    raised_at: dt.datetime  # reference + grace
    ended_at: dt.datetime | None  # first gangway admit after raised_at (or departure), else None
    ended_by: str | None  # the admit's event id


def periods(arrival: dt.datetime, until: dt.datetime, tz: ZoneInfo) -> list[tuple[dt.datetime, dt.datetime]]:
    """(reference, period end) of each period overlapping [arrival, until], aware UTC, in order."""
    out = []
    local = arrival.astimezone(tz)
    day = local.date() - dt.timedelta(days=1)
    while True:
        for hour in PERIOD_HOURS:
            start = dt.datetime.combine(day, dt.time(hour), tz).astimezone(dt.UTC)
            end = start + dt.timedelta(hours=6)
            if start > until:
                return out
            if end > arrival:
                out.append((max(start, arrival), end))
        day += dt.timedelta(days=1)


def gaps(arrival: dt.datetime, departure: dt.datetime | None, watch: list[tuple[dt.datetime, dt.datetime | None, str]],
         now: dt.datetime, tz: ZoneInfo, grace: dt.timedelta, since: dt.datetime | None = None,
         only: set[dt.datetime] | None = None) -> list[Gap]:
    """The coverage gaps of one call up to ``now``.

    ``watch``: gangway watchmen's stays aboard at the ship's gate, (admitted at, exited at or None,
    admit event id). ``since``: ignore periods whose reference is before it. ``only``: the starts
    (aware UTC) of the periods to check (a cabotage call: those with a watchman requisitioned);
    None: every period of the stay (long haul). Pure."""
    until = min(now, departure) if departure else now
    out = []
    for ref, end in periods(arrival, until, tz):
        if only is not None and end - dt.timedelta(hours=6) not in only:
            continue
        due = ref + grace
        if due > now or due >= end or (departure is not None and due >= departure) or (since and ref < since):
            continue
        if any(a <= due and (b is None or b > due) for a, b, _eid in watch):
            continue
        later = sorted((a, eid) for a, _b, eid in watch if a > due)
        ended, by = (later[0] if later else (None, None))
        if departure is not None and (ended is None or departure < ended):
            ended, by = departure, None
        out.append(Gap(ref, due, ended, by))
    return out


def _watch(session: Session, gate_id: str, since: dt.datetime) -> list[tuple[dt.datetime, dt.datetime | None, str]]:
    rows = session.execute(
        select(events.c.event_id, events.c.registration, events.c.decision, events.c.occurred_at, events.c.payload)
        .where(events.c.gate_id == gate_id, events.c.type == "tap", events.c.decision.in_(("admit", "exit")),
               events.c.registration.is_not(None), events.c.occurred_at >= since)
        .order_by(events.c.occurred_at, events.c.id)).all()
    open_: dict[str, tuple[dt.datetime, str]] = {}
    stays = []
    for r in rows:
        at = as_utc(r.occurred_at)
        if r.decision == "admit":
            d = (r.payload or {}).get("dispatch")
            if d is None or (d.get("post") == GANGWAY_POST and d.get("function") in WATCH_FUNCTIONS):
                open_[r.registration] = (at, r.event_id)
        elif r.registration in open_:
            a, eid = open_.pop(r.registration)
            stays.append((a, at, eid))
    stays += [(a, None, eid) for a, eid in open_.values()]
    return stays


def _requisitioned(session: Session, ship: str, since: dt.datetime) -> set[dt.datetime]:
    """Starts (aware UTC) of the periods from ``since`` on for which a gangway watchman of ``ship``
    is dispatched (active escala entries, post ``portalo``, a watchman function)."""
    rows = session.execute(select(escala.c.start_at).where(
        escala.c.ship == ship, escala.c.status == "active", escala.c.post == GANGWAY_POST,
        escala.c.function.in_(WATCH_FUNCTIONS), escala.c.end_at > since)).scalars()
    return {as_utc(r) for r in rows}


def evaluate(session: Session, now: dt.datetime, tz: ZoneInfo, grace_min: int = 30) -> int:
    """Raise and end coverage alarms for every call in port (or that left within the look-back):
    long haul, every period; cabotage, the periods with a gangway watchman requisitioned; a call
    without a gate too (nobody can be admitted). Returns the number of rows inserted or changed.
    Idempotent."""
    grace = dt.timedelta(minutes=grace_min)
    since = now - LOOKBACK
    calls = session.execute(select(ship_calls).where(
        ship_calls.c.voyage.in_(("long_haul", "cabotage")), ship_calls.c.arrival <= now,
        or_(ship_calls.c.departure.is_(None), ship_calls.c.departure > since))).all()
    changed = 0
    for call in calls:
        arrival, departure = as_utc(call.arrival), as_utc(call.departure)
        only = None if call.voyage == "long_haul" else _requisitioned(session, call.ship, max(since, arrival))
        if only is not None and not only:
            continue  # cabotage with no watchman requisitioned: no alert (G11)
        watch = _watch(session, call.gate_id, max(since, arrival) - dt.timedelta(hours=24)) if call.gate_id else []
        held = {as_utc(r.period_start): r for r in session.execute(
            select(coverage_alarms).where(coverage_alarms.c.call_id == call.id))}
        for gap in gaps(arrival, departure, watch, now, tz, grace, since=since, only=only):
            row = held.get(gap.period_start)
            if row is None:
                session.execute(coverage_alarms.insert().values(
                    call_id=call.id, ship=call.ship, gate_id=call.gate_id, period_start=gap.period_start,
                    raised_at=gap.raised_at, ended_at=gap.ended_at, ended_by_event=gap.ended_by))
                changed += 1
            elif as_utc(row.ended_at) != gap.ended_at:
                session.execute(update(coverage_alarms).where(coverage_alarms.c.id == row.id)
                                .values(ended_at=gap.ended_at, ended_by_event=gap.ended_by))
                changed += 1
    return changed


def list_alarms(session: Session, limit: int = 200) -> list[dict]:
    """Alarms, newest first, with the ship's name."""
    rows = session.execute(select(coverage_alarms, ship_calls.c.ship_name)
                           .join(ship_calls, ship_calls.c.id == coverage_alarms.c.call_id)
                           .order_by(coverage_alarms.c.raised_at.desc()).limit(limit))
    return [dict(r._mapping) | {"period_start": as_utc(r.period_start), "raised_at": as_utc(r.raised_at),
                                "ended_at": as_utc(r.ended_at)} for r in rows]
