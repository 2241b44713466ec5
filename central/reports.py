"""Office reports (R5, R6, G11): escala vs presence, gangway coverage gaps, confiscations and
sanctions, and the 25-shift sizing figure. Read-only queries over the registry, the stored escala and
the ledger ``events`` table (tap admits are the presence).

Readings: a dispatched worker "boarded" if a tap admit with their registration is in the ledger at
the entry's gate between 30 min before the period start and the period end. An admit "without
dispatch" is one on the date whose registration has no active escala entry at that gate covering the
admit time (with the same 30 min early tolerance). A coverage gap (G11) is a long-haul ship's period
on the escala where no admit of a worker dispatched to the ``portalo`` post at that gate happened
by 30 min after the period start.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections import defaultdict
from zoneinfo import ZoneInfo

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from central.ledger.schema import events
from central.registry.schema import cases, penalties, workers
from central.rotation.schema import escala
from central.rotation.engine import RotationSettings
from central.rotation.ports import RotationPorts, count_shown, workers_in
from portgate.timeutil import as_utc

EARLY = dt.timedelta(minutes=30)  # G6 early-arrival tolerance
COVERAGE_DELAY = dt.timedelta(minutes=30)  # G11 setting
GANGWAY_POST = "portalo"
PORT_TZ = ZoneInfo(RotationSettings().tz)  # the default port time zone; callers pass theirs


@dataclasses.dataclass(frozen=True, slots=True)
class PresenceReport:
    dispatched_not_boarded: list[dict]
    boarded_without_dispatch: list[dict]


def _local_day(day: dt.date, tz: ZoneInfo) -> tuple[dt.datetime, dt.datetime]:
    """``day``'s local midnight to the next one, as aware UTC datetimes (23, 24 or 25 hours)."""
    start = dt.datetime.combine(day, dt.time(), tz)
    end = dt.datetime.combine(day + dt.timedelta(days=1), dt.time(), tz)
    return start.astimezone(dt.UTC), end.astimezone(dt.UTC)


def _admits(session: Session, start: dt.datetime, end: dt.datetime) -> list:
    return session.execute(select(events.c.event_id, events.c.gate_id, events.c.registration,
                                  events.c.occurred_at).where(
        events.c.type == "tap", events.c.decision == "admit",
        events.c.occurred_at >= start, events.c.occurred_at < end)).all()


def _entries(session: Session, day: dt.date, last: dt.date | None = None) -> list:
    """Active escala entries dated ``day`` (through ``last`` when given), in start order."""
    return session.execute(select(escala).where(escala.c.date >= day, escala.c.date <= (last or day),
                                                escala.c.status == "active")
                           .order_by(escala.c.start_at, escala.c.id)).all()


def presence(session: Session, day: dt.date, tz: ZoneInfo = PORT_TZ) -> PresenceReport:
    """Escala of ``day`` vs tap admits in the ledger (R5, Lei 9.719 art. 7).

    ``day`` is a date of the port's calendar (``tz``). "Dispatched, not boarded": an entry of
    ``day`` with no admit of its worker at its gate from 30 min before its start to its end.
    "Boarded without dispatch": an admit whose time falls on ``day`` in the port's time zone and
    that no active entry at that gate covers (the day before's and after's entries count: a 19-01
    that began yesterday covers a boarding at 00:30 today). Rows carry ``at`` as aware UTC ISO
    text; screens show it in the port's time.
    """
    entries = _entries(session, day)
    day_lo, day_hi = _local_day(day, tz)
    lo = min([day_lo] + [as_utc(e.start_at) - EARLY for e in entries])
    hi = max([day_hi] + [as_utc(e.end_at) for e in entries])
    admits = _admits(session, lo, hi)
    by_key = defaultdict(list)
    for a in admits:
        by_key[(a.registration, a.gate_id)].append(as_utc(a.occurred_at))
    missing = []
    for e in entries:
        start, end = as_utc(e.start_at), as_utc(e.end_at)
        if not any(start - EARLY <= t < end for t in by_key.get((e.registration, e.gate_id), ())):
            missing.append({"entry": e.id, "registration": e.registration, "ship": e.ship,
                            "gate_id": e.gate_id, "period": e.period, "post": e.post})
    covering = defaultdict(list)
    one = dt.timedelta(days=1)
    for e in _entries(session, day - one, day + one):
        covering[(e.registration, e.gate_id)].append((as_utc(e.start_at) - EARLY, as_utc(e.end_at)))
    extra = []
    for a in admits:
        t = as_utc(a.occurred_at)
        if not day_lo <= t < day_hi:
            continue
        if not any(s <= t < e for s, e in covering.get((a.registration, a.gate_id), ())):
            extra.append({"event_id": a.event_id, "registration": a.registration,
                          "gate_id": a.gate_id, "at": t.isoformat()})
    return PresenceReport(missing, extra)


def coverage_gaps(session: Session, day: dt.date, delay: dt.timedelta = COVERAGE_DELAY) -> list[dict]:
    """Long-haul ships' periods of ``day`` with no gangway watchman admitted ``delay`` after the
    period start (G11, 83.611 arts. 5-8). Ships and periods come from the escala."""
    entries = [e for e in _entries(session, day) if e.voyage == "long_haul"]
    if not entries:
        return []
    admits = _admits(session, min(as_utc(e.start_at) for e in entries) - EARLY,
                     max(as_utc(e.start_at) for e in entries) + delay)
    gangway = defaultdict(set)
    slots = {}
    for e in entries:
        key = (e.ship, e.gate_id, e.period)
        slots.setdefault(key, (as_utc(e.start_at), e.ship_name))
        if e.post == GANGWAY_POST:
            gangway[key].add(e.registration)
    gaps = []
    for key, (start, ship_name) in sorted(slots.items()):
        ship, gate_id, period = key
        ok = any(a.gate_id == gate_id and a.registration in gangway[key]
                 and start - EARLY <= as_utc(a.occurred_at) <= start + delay for a in admits)
        if not ok:
            gaps.append({"ship": ship, "ship_name": ship_name, "gate_id": gate_id,
                         "period": period, "start": start.isoformat(),
                         "dispatched": sorted(gangway[key]), "rule": "G11"})
    return gaps


def sanctions(session: Session, start: dt.date, end: dt.date) -> dict[str, list[dict]]:
    """Confiscation cases opened and penalties recorded from ``start`` to ``end`` (inclusive)."""
    lo = dt.datetime.combine(start, dt.time(), dt.UTC)
    hi = dt.datetime.combine(end + dt.timedelta(days=1), dt.time(), dt.UTC)
    cs = session.execute(select(cases).where(cases.c.occurred_at >= lo, cases.c.occurred_at < hi)
                         .order_by(cases.c.id)).all()
    ps = session.execute(select(penalties).where(penalties.c.created_at >= lo,
                                                 penalties.c.created_at < hi)
                         .order_by(penalties.c.id)).all()
    return {"confiscations": [dict(r._mapping) for r in cs],
            "penalties": [dict(r._mapping) for r in ps]}


def sizing(session: Session, month: dt.date, category: str = "vigia", target: int = 25,
           ports: RotationPorts | None = None) -> dict:
    """R6 (83.611 art. 13): average shifts per registered worker of ``category`` per month over the
    12 months before ``month`` (its first day), from the stored escala; and the number of workers
    that would give each ``target`` shifts a month. Registered = not cancelled today (the registry
    keeps no history of head counts). With ``ports`` (a view of some of the office's ports,
    ``central.rotation.ports``): the escala rows of those ports' gates and the workers registered there."""
    first = month.replace(day=1)
    y, m = divmod(first.year * 12 + first.month - 1 - 12, 12)
    since = dt.date(y, m + 1, 1)
    shifts = count_shown(session, ports, session.execute(select(escala.c.gate_id, func.count()).select_from(escala).join(
        workers, workers.c.registration == escala.c.registration).where(
        escala.c.status == "active", escala.c.date >= since, escala.c.date < first,
        workers.c.category == category).group_by(escala.c.gate_id)))
    registered = session.execute(select(func.count()).select_from(workers).where(
        workers.c.category == category, workers.c.status != "cancelled", workers_in(ports))).scalar() or 0
    per_month = shifts / 12
    return {"from": since.isoformat(), "to": (first - dt.timedelta(days=1)).isoformat(),
            "category": category, "shifts": shifts, "registered": registered,
            "average_shifts_per_worker_month": round(per_month / registered, 2) if registered else None,
            "target": target, "workers_for_target": round(per_month / target, 1), "rule": "R6"}
