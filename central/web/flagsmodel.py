"""The inspectors' queue of flagged events, read from the ledger, and the taps around one event.

Filters (all optional, each validated before it reaches SQL; values are bound parameters and the
LIKE patterns are built only from validated text, so no filter can widen the query):

- ``date``: local date (``YYYY-MM-DD``) of the event in the port's time zone;
- ``ship``: IMO number (digits) of the event's dispatch;
- ``gate``: gate id; ``worker``: registration (card holder or the badge's holder);
- ``flag``: one of ``FLAGS``, every code the queue can show (``wire.flags.Flag``, and
  ``CONFISCATION`` = a confiscation event);
- ``state``: ``new`` | ``seen`` | ``handled`` (``central.registry.flag_reviews``).

``BadInput`` names the filter whose value is not acceptable.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from zoneinfo import ZoneInfo

from sqlalchemy import Text, and_, case, cast, exists, func, or_, select
from sqlalchemy.engine import Connection

from central.ledger.schema import events
from central.registry.flag_reviews import NEW, STATES, Review, states
from central.registry.schema import cases, flag_reviews
from portgate.errors import BadInput
from portgate.timeutil import as_utc
from wire.flags import Flag

# every code the queue can list: a tap's flags are ``wire.flags.Flag`` values, a confiscation event
# is ``CONFISCATION`` (its reason flag is a ``Flag`` too)
FLAGS = tuple(x.value for x in Flag) + ("CONFISCATION",)
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
PAGE = 200


@dataclasses.dataclass(frozen=True)
class Filters:
    date: dt.date | None = None
    ship: str | None = None
    gate: str | None = None
    worker: str | None = None
    flag: str | None = None
    state: str | None = None
    ports: tuple[str, ...] | None = None  # the user's view (central.web.ports), not a query parameter

    def query(self) -> dict[str, str]:
        """The filters as query parameters (for links and the CSV export)."""
        return {k: (v.isoformat() if isinstance(v, dt.date) else v)
                for k, v in dataclasses.asdict(self).items() if v and k != "ports"}


def parse_filters(params, ports: tuple[str, ...] | None = None) -> Filters:
    """``Filters`` from query parameters; empty values are no filter. ``ports``: the events' ports
    the user sees (``request.state.ports``; None: every port)."""
    def get(name):
        value = (params.get(name) or "").strip()
        return value or None

    date = get("date")
    try:
        day = dt.date.fromisoformat(date) if date else None
    except ValueError:
        raise BadInput(f"date {date!r} is not YYYY-MM-DD", where="date") from None
    if day is not None and not dt.date(2000, 1, 1) <= day <= dt.date(2100, 12, 31):
        raise BadInput(f"date {date!r} is outside 2000-01-01..2100-12-31", where="date")
    ship = get("ship")
    if ship and not (ship.isdigit() and len(ship) <= 10):
        raise BadInput(f"ship {ship!r} is not an IMO number", where="ship")
    gate, worker = get("gate"), get("worker")
    for name, value in (("gate", gate), ("worker", worker)):
        if value and not _ID.match(value):
            raise BadInput(f"{name} {value!r} has characters an id does not have", where=name)
    flag = get("flag")
    if flag and flag not in FLAGS:
        raise BadInput(f"flag {flag!r} is not one of {', '.join(FLAGS)}", where="flag")
    state = get("state")
    if state and state not in STATES:
        raise BadInput(f"state {state!r} is not one of {', '.join(STATES)}", where="state")
    return Filters(day, ship, gate, worker, flag, state, ports)


@dataclasses.dataclass(frozen=True)
class FlagRow:
    event_id: str
    gate_id: str
    seq: int
    occurred_at: dt.datetime
    registration: str | None
    badge_registration: str | None
    flags: list[str]
    decision: str | None
    message: str
    ship: str | None
    case_id: int | None
    review: Review = NEW


# a flagged event's state in SQL, as ``flag_reviews.states`` reads it (a case opened from it, or
# whose evidence it is, handles it)
_CASE = exists().where(or_(cases.c.event_id == events.c.event_id, cases.c.source_event_id == events.c.event_id))
_OUTCOME = select(flag_reviews.c.outcome).where(flag_reviews.c.event_id == events.c.event_id).scalar_subquery()
_STATE = case((_CASE, "handled"), (_OUTCOME == "no_infraction", "handled"), (_OUTCOME.is_not(None), "seen"),
              else_="new")


def _flagged_query(f: Filters, tz: ZoneInfo, *columns):
    """SELECT ``columns`` of the flagged events that pass ``f`` but its state."""
    text = cast(events.c.payload, Text)
    q = select(*columns).select_from(events).where(
        or_(events.c.type == "confiscation", and_(events.c.type == "tap", text.like('%"flags":["%'))))
    if f.date:
        start = dt.datetime.combine(f.date, dt.time(0), tz).astimezone(dt.UTC)
        q = q.where(events.c.occurred_at >= start, events.c.occurred_at < start + dt.timedelta(days=1))
    if f.gate:
        q = q.where(events.c.gate_id == f.gate)
    if f.ports is not None:
        q = q.where(events.c.port.in_(f.ports))
    if f.worker:
        q = q.where(or_(events.c.registration == f.worker, text.like(f'%"badge_registration":"{f.worker}"%')))
    if f.ship:
        q = q.where(text.like(f'%"ship":"{f.ship}"%'))
    if f.flag == "CONFISCATION":
        q = q.where(events.c.type == "confiscation")
    elif f.flag:
        q = q.where(text.like(f'%"{f.flag}"%'))
    return q


def state_counts(conn: Connection, f: Filters, tz: ZoneInfo) -> dict[str, int]:
    """How many flagged events pass ``f`` (its state aside) in each state: ``{new, seen, handled}``."""
    each = _flagged_query(f, tz, _STATE.label("state")).subquery()
    got = {r.state: int(r.n) for r in conn.execute(
        select(each.c.state, func.count().label("n")).group_by(each.c.state)).all()}
    return {s: got.get(s, 0) for s in STATES}


def flag_rows(conn: Connection, f: Filters, tz: ZoneInfo, limit: int = PAGE) -> list[FlagRow]:
    """The newest ``limit`` flagged events that pass ``f``, newest first, each with its review."""
    q = _flagged_query(f, tz, events.c.event_id, events.c.gate_id, events.c.seq, events.c.occurred_at,
                       events.c.registration, events.c.type, events.c.decision, events.c.payload)
    if f.state:
        q = q.where(_STATE == f.state)
    rows = conn.execute(q.order_by(events.c.occurred_at.desc(), events.c.id.desc()).limit(limit)).all()
    ids = [r.event_id for r in rows]
    reviews = states(conn, ids)
    out = []
    for r in rows:
        p = r.payload or {}
        flags = ["CONFISCATION", p.get("reason_flag", "")] if r.type == "confiscation" else list(p.get("flags") or [])
        out.append(FlagRow(r.event_id, r.gate_id, r.seq, as_utc(r.occurred_at), r.registration or p.get("registration"),
                           p.get("badge_registration"), [x for x in flags if x], r.decision,
                           # a confiscation's reason is the flag column; its message, the article it cites
                           p.get("message") or (p.get("article") or "" if r.type == "confiscation" else ""),
                           (p.get("dispatch") or {}).get("ship"), reviews[r.event_id].case_id,
                           reviews[r.event_id]))
    return out


def _flags_of(kind: str, payload: dict) -> list[str]:
    if kind == "confiscation":
        return [x for x in (payload.get("reason_flag"),) if x]
    return list(payload.get("flags") or [])


def event_row(conn: Connection, event_id: str, ports: tuple[str, ...] | None = None):
    """The event ``event_id``; ``BadInput`` "no event" if unknown or not of ``ports`` (None: any)."""
    row = conn.execute(select(events).where(events.c.event_id == event_id)).first()
    if row is None or (ports is not None and row.port not in ports):
        raise BadInput(f"no event {event_id}", where="event")
    return row


def taps_around(conn: Connection, event_id: str, n: int = 10) -> list[dict]:
    """The ``n`` events before and after ``event_id`` at the same gate (by sequence)."""
    row = event_row(conn, event_id)
    rows = conn.execute(select(events.c.event_id, events.c.seq, events.c.occurred_at, events.c.type,
                               events.c.decision, events.c.registration, events.c.payload)
                        .where(events.c.gate_id == row.gate_id, events.c.seq >= row.seq - n,
                               events.c.seq <= row.seq + n).order_by(events.c.seq)).all()
    return [{"event_id": r.event_id, "gate_id": row.gate_id, "seq": r.seq, "occurred_at": as_utc(r.occurred_at), "type": r.type,
             "decision": r.decision, "registration": r.registration,
             "flags": _flags_of(r.type, r.payload or {}), "message": (r.payload or {}).get("message", ""),
             "uid": (r.payload or {}).get("uid", ""), "this": r.event_id == event_id} for r in rows]
