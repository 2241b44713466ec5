"""What a worker's own pages read (issue 35): every query takes the worker's registration and returns
his rows only; nothing here writes.

- ``escala_of``: his active dispatches of two local dates (today, tomorrow);
- ``next_period``: the first period he may be dispatched to after his last dispatch or shift, given
  the rest of RULES.md G7 / R2 (Lei 9.719 art. 8: ``MIN_REST_HOURS`` after the end of the previous
  shift) — pure (``earliest_period``) over what the ledger holds;
- ``shifts_of``: his shifts of a period of days, each with its taps (gate events), flags and hours;
- ``cases_of`` / ``case_of``: his cases (R7) with their attachments;
- ``cards_of``: his cards and their lifecycle;
- ``category_of``: his registry category (``estivador``: his R8 monthly return of hours is shown,
  ``central.production.hours.worker_months``); ``ship_names``: IMO number -> ship name.

Times are aware UTC datetimes; hours are ``Decimal`` hours (two decimals); dates are local dates.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from decimal import Decimal
from zoneinfo import ZoneInfo

from sqlalchemy import func, select
from sqlalchemy.engine import Connection

from central.calls.schema import ship_calls
from central.ledger.schema import events
from central.ledger.tables import shift_flags, shifts
from central.registry.schema import card_events, case_attachments, cards, cases, workers
from central.rotation.schema import escala
from portgate.records import period_bounds
from portgate.rest import MIN_REST_HOURS
from portgate.timeutil import as_utc

PERIODS = ("01-07", "07-13", "13-19", "19-01")  # the port's four 6-hour periods (local start hours)
TAP_MARGIN = dt.timedelta(hours=3)  # taps this long before a period's start or after its end belong to it


@dataclasses.dataclass(frozen=True, slots=True)
class Dispatch:
    id: int  # the escala entry
    date: dt.date
    period: str
    ship: str
    ship_name: str
    berth: str  # berthed | anchored
    gate_id: str
    post: str
    function: str
    start_at: dt.datetime
    end_at: dt.datetime


def escala_of(conn: Connection, registration: str, days: tuple[dt.date, ...]) -> list[Dispatch]:
    """``registration``'s active dispatches on the local ``days``, by start time."""
    rows = conn.execute(select(escala).where(escala.c.registration == registration, escala.c.status == "active",
                                             escala.c.date.in_(days)).order_by(escala.c.start_at))
    return [Dispatch(r.id, r.date, r.period, r.ship, r.ship_name, r.berth, r.gate_id, r.post, r.function,
                     as_utc(r.start_at), as_utc(r.end_at)) for r in rows]


def earliest_period(last_end: dt.datetime | None, now: dt.datetime, tz: ZoneInfo,
                    rest_hours: float = MIN_REST_HOURS) -> tuple[dt.date, str, dt.datetime]:
    """The first period (local date, ``"HH-HH"``, its UTC start) starting at or after both ``now``
    and ``last_end + rest_hours`` (G7 / R2, Lei 9.719 art. 8). Pure: ``now`` is passed in."""
    earliest = now if last_end is None else max(now, last_end + dt.timedelta(hours=rest_hours))
    day = earliest.astimezone(tz).date() - dt.timedelta(days=1)
    for _ in range(4):
        for period in PERIODS:
            start, _end = period_bounds(day, period, tz)
            if start >= earliest:
                return day, period, start
        day += dt.timedelta(days=1)
    raise AssertionError("no period within 3 days")  # cannot happen: a day has four periods


def last_service_end(conn: Connection, registration: str, now: dt.datetime) -> dt.datetime | None:
    """The end of ``registration``'s latest service: his last active dispatch's period end (also
    one already made for later today or tomorrow) or his recorded exit of a shift started before
    ``now``, whichever is later."""
    disp = conn.execute(select(func.max(escala.c.end_at)).where(
        escala.c.registration == registration, escala.c.status == "active")).scalar()
    shift = conn.execute(select(func.max(func.coalesce(shifts.c.exit_at, shifts.c.period_end))).where(
        shifts.c.registration == registration, shifts.c.period_start <= now)).scalar()
    found = [as_utc(v) for v in (disp, shift) if v is not None]
    return max(found) if found else None


def next_period(conn: Connection, registration: str, now: dt.datetime,
                tz: ZoneInfo) -> tuple[dt.date, str, dt.datetime]:
    """The next period ``registration`` may be dispatched to (``earliest_period`` after his last
    service, ``last_service_end``)."""
    return earliest_period(last_service_end(conn, registration, now), now, tz)


@dataclasses.dataclass(frozen=True, slots=True)
class Tap:
    at: dt.datetime
    gate_id: str
    decision: str  # admit | exit | deny | ...
    flags: tuple[str, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class ShiftView:
    shift_id: str
    work_date: dt.date
    period: str
    ship: str
    ship_name: str  # from his escala or the ship calls; the IMO number when neither names it
    berth: str
    post: str | None
    gate_id: str | None
    function: str
    admit_at: dt.datetime | None
    exit_at: dt.datetime | None
    meal_worked: bool
    held: bool
    hours: Decimal  # admit to exit (or the period's end), hours with 2 decimals; 0 if never admitted
    flags: tuple[tuple[str, str], ...]  # (flag, detail)
    taps: tuple[Tap, ...]


def _hours(start: dt.datetime | None, end: dt.datetime | None) -> Decimal:
    if start is None or end is None or end <= start:
        return Decimal("0.00")
    return (Decimal((end - start).total_seconds()) / Decimal(3600)).quantize(Decimal("0.01"))


def shifts_of(conn: Connection, registration: str, first: dt.date, last: dt.date) -> list[ShiftView]:
    """``registration``'s shifts of the local work dates ``first..last``, newest first, each with
    its taps (the gate events of his registration from ``TAP_MARGIN`` before the period to
    ``TAP_MARGIN`` after its end or his exit) and its flags."""
    rows = conn.execute(select(shifts).where(shifts.c.registration == registration, shifts.c.work_date >= first,
                                             shifts.c.work_date <= last).order_by(shifts.c.period_start.desc())).all()
    if not rows:
        return []
    ids = [r.shift_id for r in rows]
    flags: dict[str, list[tuple[str, str]]] = {}
    for f in conn.execute(select(shift_flags).where(shift_flags.c.shift_id.in_(ids)).order_by(shift_flags.c.id)):
        flags.setdefault(f.shift_id, []).append((f.flag, f.detail or ""))
    lo = min(as_utc(r.period_start) for r in rows) - TAP_MARGIN
    hi = max(max(as_utc(r.period_end), as_utc(r.exit_at) or as_utc(r.period_end)) for r in rows) + TAP_MARGIN
    taps = [Tap(as_utc(e.occurred_at), e.gate_id, e.decision or e.type, tuple((e.payload or {}).get("flags") or ()))
            for e in conn.execute(select(events.c.occurred_at, events.c.gate_id, events.c.decision, events.c.type,
                                         events.c.payload)
                                  .where(events.c.registration == registration, events.c.type == "tap",
                                         events.c.occurred_at >= lo, events.c.occurred_at <= hi)
                                  .order_by(events.c.occurred_at))]
    names = _ship_names(conn, registration, {r.ship for r in rows})
    out = []
    for r in rows:
        start, end = as_utc(r.period_start), as_utc(r.period_end)
        until = max(end, as_utc(r.exit_at) or end)
        mine = tuple(t for t in taps if start - TAP_MARGIN <= t.at <= until + TAP_MARGIN)
        admit, exit_ = as_utc(r.admit_at), as_utc(r.exit_at)
        out.append(ShiftView(r.shift_id, r.work_date, r.period, r.ship, names.get(r.ship, r.ship), r.berth, r.post,
                             r.gate_id, r.function,
                             admit, exit_, bool(r.meal_worked), bool(r.held),
                             _hours(admit, exit_ or (end if admit else None)),
                             tuple(flags.get(r.shift_id, ())), mine))
    return out


def category_of(conn: Connection, registration: str) -> str | None:
    """``registration``'s registry category (``vigia``, ``estivador``, ...), None if not registered."""
    return conn.execute(select(workers.c.category).where(workers.c.registration == registration)).scalar()


def ship_names(conn: Connection, registration: str, ships: set[str]) -> dict[str, str]:
    """IMO number -> ship name for ``registration``'s pages (``_ship_names``)."""
    return _ship_names(conn, registration, ships)


def _ship_names(conn: Connection, registration: str, ships: set[str]) -> dict[str, str]:
    """IMO number -> ship name, from the ship calls, then his own escala rows (which win)."""
    names = {r.ship: r.ship_name for r in conn.execute(
        select(ship_calls.c.ship, ship_calls.c.ship_name).where(ship_calls.c.ship.in_(ships))
        .order_by(ship_calls.c.arrival)) if r.ship_name}
    names.update({r.ship: r.ship_name for r in conn.execute(
        select(escala.c.ship, escala.c.ship_name).where(escala.c.registration == registration,
                                                        escala.c.ship.in_(ships)).order_by(escala.c.id))
        if r.ship_name})
    return names


def cases_of(conn: Connection, registration: str) -> list[dict]:
    """``registration``'s cases, newest first (id, status, flag, article, occurred_at, opened_at)."""
    rows = conn.execute(select(cases.c.id, cases.c.status, cases.c.reason_flag, cases.c.article, cases.c.occurred_at,
                               cases.c.opened_at, cases.c.gate_id)
                        .where(cases.c.registration == registration).order_by(cases.c.id.desc()))
    return [dict(r._mapping) for r in rows]


def case_of(conn: Connection, registration: str, case_id: int) -> tuple[dict, list[dict]] | None:
    """Case ``case_id`` with its attachments (no data) when it charges ``registration``; None
    otherwise (another worker's case is answered as not found)."""
    row = conn.execute(select(cases).where(cases.c.id == case_id, cases.c.registration == registration)).first()
    if row is None:
        return None
    files = conn.execute(select(case_attachments.c.id, case_attachments.c.filename, case_attachments.c.uploaded_at,
                                case_attachments.c.actor)
                         .where(case_attachments.c.case_id == case_id).order_by(case_attachments.c.id))
    return dict(row._mapping), [dict(f._mapping) for f in files]


def cards_of(conn: Connection, registration: str) -> list[dict]:
    """``registration``'s cards (uid, kind, status) with their lifecycle events, newest first."""
    found = [dict(r._mapping) for r in conn.execute(
        select(cards.c.uid, cards.c.kind, cards.c.status, cards.c.replaced_by)
        .where(cards.c.registration == registration).order_by(cards.c.kind, cards.c.uid))]
    for card in found:
        card["events"] = [dict(e._mapping) for e in conn.execute(
            select(card_events.c.event, card_events.c.at, card_events.c.actor, card_events.c.detail)
            .where(card_events.c.uid == card["uid"]).order_by(card_events.c.id.desc()).limit(10))]
    return found
