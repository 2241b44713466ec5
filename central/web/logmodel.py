"""The read log (every tap: gate, time, card, worker, decision, flags) and the audit log (who
changed what, when) as the office searches them (issue 34 item 12), at a million taps.

Both pages are keyset-paged, newest first: a page is ``WHERE <filters> AND (key) < (cursor) ORDER
BY key DESC LIMIT n+1`` over an index whose leading columns are the filter's, so the last page
costs what the first does (no ``OFFSET``). The read log's key is ``(occurred_at, id)`` of
``events`` (type ``tap``); its indexes (0024): ``(occurred_at, id)`` for a date range alone,
``(gate_id, occurred_at, id)``, ``(decision, occurred_at, id)``, ``(registration, occurred_at)``
(0001) and the card's UID as the
payload holds it with ``occurred_at`` (an expression index, ``UID``). The audit log's key is
``id``; ``(subject, id)`` and ``(actor, id)`` serve the worker/card and user searches, ``(at, id)``
the date range.

Dates are the port's local days, ``[first, last]`` inclusive, turned into UTC instants here.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterator
from zoneinfo import ZoneInfo

from sqlalchemy import String, and_, or_, select, tuple_
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.functions import FunctionElement
from sqlalchemy.engine import Connection

from central.audit import audit_log
from central.ledger.schema import events
from central.registry.schema import workers
from central.registry.worker_ports import in_ports
from central.web.registrymodel import uid_candidates
from portgate.errors import BadInput
from portgate.timeutil import as_utc

PAGE_SIZE = 50
class tap_uid(FunctionElement):
    """The card UID a tap's JSON payload holds, written exactly as the card index of 0024 is
    (SQLite ``json_extract(payload, '$.uid')``, PostgreSQL ``(payload ->> 'uid')``), so each
    planner matches the index's expression."""

    type = String()
    inherit_cache = True
    name = "tap_uid"


@compiles(tap_uid, "sqlite")
def _tap_uid_sqlite(element, compiler, **kw):
    return f"json_extract({compiler.process(element.clauses, **kw)}, '$.uid')"


@compiles(tap_uid, "postgresql")
def _tap_uid_postgresql(element, compiler, **kw):
    return f"({compiler.process(element.clauses, **kw)} ->> 'uid')"


#: The tap's card UID as stored in the payload: the expression the card index (0024) is built on.
UID = tap_uid(events.c.payload)
DECISIONS = ("admit", "exit", "deny", "inspector", "aboard")
MAX_DAYS = 3700  # about ten years: a wider range is refused rather than scanning everything


@dataclasses.dataclass(frozen=True, slots=True)
class ReadQuery:
    """The read log's search: local days ``first``..``last`` (None: the caller's default), exact
    ``gate``, ``worker`` (registration), ``card`` (a UID in any UID form), ``decision``; ``after``:
    the event row id the page continues after (0: the first page)."""

    first: dt.date
    last: dt.date
    gate: str = ""
    worker: str = ""
    card: str = ""
    decision: str = ""
    after: int = 0
    ports: tuple[str, ...] | None = None  # the user's view (central.web.ports); None: every port


@dataclasses.dataclass(frozen=True, slots=True)
class ReadRow:
    id: int
    at: dt.datetime
    gate: str
    card: str
    registration: str
    name: str
    decision: str
    flags: tuple[str, ...]
    message: str


def day_bounds(first: dt.date, last: dt.date, tz: ZoneInfo) -> tuple[dt.datetime, dt.datetime]:
    """UTC ``[start, end)`` of the local days ``first``..``last``. ``BadInput`` when ``last`` is
    before ``first`` or the range is longer than ``MAX_DAYS``."""
    if last < first:
        raise BadInput("the period ends before it starts", where="to")
    if (last - first).days > MAX_DAYS:
        raise BadInput(f"the period is longer than {MAX_DAYS} days", where="to")
    start = dt.datetime.combine(first, dt.time(0), tz).astimezone(dt.UTC)
    end = dt.datetime.combine(last + dt.timedelta(days=1), dt.time(0), tz).astimezone(dt.UTC)
    return start, end


def card_uids(text: str) -> list[str]:
    """The canonical UIDs a typed card may be (``portgate.uid.uid_candidates``: hex, reversed,
    decimal forms; partial forms left out). ``BadInput`` naming ``card`` when it is none."""
    found = sorted({hexa for _form, hexa, bits in uid_candidates(text.strip()) if bits is None})
    if not found:
        raise BadInput(f"card {text.strip()[:40]!r} is not a card UID in any UID form", where="card")
    return found


def check_read_query(q: ReadQuery, tz: ZoneInfo) -> None:
    """Raise ``BadInput`` (naming the field) where ``read_conditions`` would: a bad period,
    decision or card; builds no SQL (the page checks the typed search before it reads)."""
    day_bounds(q.first, q.last, tz)
    if q.decision and q.decision not in DECISIONS:
        raise BadInput(f"decision {q.decision[:20]!r} is not one of {', '.join(DECISIONS)}", where="decision")
    if q.card:
        card_uids(q.card)


def read_conditions(q: ReadQuery, tz: ZoneInfo, after_at: dt.datetime | None = None) -> list:
    """The SQL conditions of ``q`` (what ``read_page``, the CSV export and the benchmark run),
    continuing after ``(after_at, q.after)`` when ``after_at`` is given. The time's upper bound
    is one condition, the tighter of the period's end and the cursor: SQLite's planner bounds its
    index scan by one of two upper bounds on a column, and the period's end would make a page deep
    in a month scan every newer row (2 s at a million taps)."""
    start, end = day_bounds(q.first, q.last, tz)
    after_at = as_utc(after_at) if after_at is not None else None  # SQLite gives it back naive (UTC)
    if after_at is not None and after_at < end:
        upper = [events.c.occurred_at <= after_at,
                 tuple_(events.c.occurred_at, events.c.id) < tuple_(after_at, q.after)]
    else:
        upper = [events.c.occurred_at < end]
    conds = [events.c.type == "tap", events.c.occurred_at >= start, *upper]
    if q.gate:
        conds.append(events.c.gate_id == q.gate[:64])
    if q.ports is not None:
        conds.append(events.c.port.in_(q.ports))
    if q.worker:
        conds.append(events.c.registration == q.worker[:64])
    if q.decision:
        if q.decision not in DECISIONS:
            raise BadInput(f"decision {q.decision[:20]!r} is not one of {', '.join(DECISIONS)}", where="decision")
        conds.append(events.c.decision == q.decision)
    if q.card:
        uids = card_uids(q.card)
        conds.append(UID == uids[0] if len(uids) == 1 else or_(*(UID == u for u in uids)))
    return conds


_COLUMNS = (events.c.id, events.c.occurred_at, events.c.gate_id, events.c.registration, events.c.decision,
            events.c.payload)


#: the tap's worker's name beside it (a registration the registry does not know: NULL): one
#: statement per page, not a second one for the names (an outer join keeps ``events`` the outer
#: loop on SQLite, so each search still reads its own index)
_FROM = events.outerjoin(workers, workers.c.registration == events.c.registration)


def read_statement(q: ReadQuery, tz: ZoneInfo, *, limit: int, after_at: dt.datetime | None = None):
    """The page's SELECT: ``q``'s conditions, after ``(after_at, q.after)`` when given, newest first;
    each row with its worker's ``name`` (NULL when the registry has none)."""
    conds = read_conditions(q, tz, after_at)
    return select(*_COLUMNS, workers.c.name).select_from(_FROM).where(and_(*conds)).order_by(
        events.c.occurred_at.desc(), events.c.id.desc()).limit(limit)


def _cursor(conn: Connection, after: int) -> dt.datetime | None:
    if not after:
        return None
    return conn.execute(select(events.c.occurred_at).where(events.c.id == after)).scalar()


def _rows(found) -> list[ReadRow]:
    out = []
    for r in found:
        p = r.payload or {}
        out.append(ReadRow(r.id, as_utc(r.occurred_at), r.gate_id, str(p.get("uid", "")), r.registration or "",
                           (r.name or "") if r.registration else "", r.decision or "",
                           tuple(p.get("flags") or ()), str(p.get("message", ""))))
    return out


def read_page(conn: Connection, q: ReadQuery, tz: ZoneInfo, *, page_size: int = PAGE_SIZE
              ) -> tuple[list[ReadRow], int | None]:
    """One page of the taps ``q`` finds, newest first, and the id the next page continues after
    (None: last page). An ``after`` id that is not an event starts from the first page.
    ``BadInput`` (naming the field) for a bad card, decision or period."""
    found = conn.execute(read_statement(q, tz, limit=page_size + 1, after_at=_cursor(conn, q.after))).all()
    rows = _rows(found[:page_size])
    return rows, (rows[-1].id if len(found) > page_size else None)


def read_all(conn: Connection, q: ReadQuery, tz: ZoneInfo, *, chunk: int = 5000) -> Iterator[ReadRow]:
    """Every tap ``q`` finds, newest first, read ``chunk`` rows at a time by the same keyset (the
    CSV export: memory stays one chunk whatever the range holds)."""
    after_at, after = None, 0
    while True:
        found = conn.execute(read_statement(dataclasses.replace(q, after=after), tz, limit=chunk,
                                            after_at=after_at)).all()
        yield from _rows(found)
        if len(found) < chunk:
            return
        after_at, after = found[-1].occurred_at, found[-1].id


# -- the audit log ------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True, slots=True)
class AuditQuery:
    """The audit log's search: local days ``first``..``last``, exact ``actor`` (``web:office``),
    ``action`` prefix (``worker.``, ``pay.mark_paid``), exact ``subject`` (a registration, a card
    UID, a statement...); ``after``: the audit row id the page continues after; ``ports``: the
    user's view (``central.web.ports``; None: every port) on an office serving ``served`` (home
    first): a view of some ports finds the entries of those ports (``audit_log.port``, 0031; NULL the
    home port), never an entry of every port (``*``: no port's object, or written before 0031)."""

    first: dt.date
    last: dt.date
    actor: str = ""
    action: str = ""
    subject: str = ""
    after: int = 0
    ports: tuple[str, ...] | None = None
    served: tuple[str, ...] = ()


def _like_prefix(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def audit_statement(q: AuditQuery, tz: ZoneInfo, *, limit: int):
    start, end = day_bounds(q.first, q.last, tz)
    conds = [audit_log.c.at >= start, audit_log.c.at < end]
    if q.actor:
        conds.append(audit_log.c.actor == q.actor[:128])
    if q.subject:
        conds.append(audit_log.c.subject == q.subject[:128])
    if q.action:
        conds.append(audit_log.c.action.like(_like_prefix(q.action[:64]), escape="\\"))
    if q.after:
        conds.append(audit_log.c.id < q.after)
    conds.append(in_ports(audit_log.c.port, q.ports, q.served))
    return select(audit_log).where(and_(*conds)).order_by(audit_log.c.id.desc()).limit(limit)


def audit_page(conn: Connection, q: AuditQuery, tz: ZoneInfo, *, page_size: int = PAGE_SIZE
               ) -> tuple[list[dict], int | None]:
    """One page of the audit rows ``q`` finds, newest first, and the id the next page continues
    after (None: last page)."""
    found = [dict(r._mapping) | {"at": as_utc(r.at)} for r in conn.execute(audit_statement(q, tz, limit=page_size + 1))]
    return found[:page_size], (found[page_size - 1]["id"] if len(found) > page_size else None)


def audit_all(conn: Connection, q: AuditQuery, tz: ZoneInfo, *, chunk: int = 5000) -> Iterator[dict]:
    """Every audit row ``q`` finds, newest first, ``chunk`` at a time (the CSV export)."""
    after = q.after
    while True:
        found = [dict(r._mapping) | {"at": as_utc(r.at)} for r in conn.execute(
            audit_statement(dataclasses.replace(q, after=after), tz, limit=chunk))]
        yield from found
        if len(found) < chunk:
            return
        after = found[-1]["id"]
