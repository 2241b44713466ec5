"""The office's reader alarm: a gate's card reader in fault, as the gate's own status says.

Each gate's retained status (``wire.downlink.GateStatus.readers``, kept in ``gate_status.readers``
by the ingest) names its configured readers with ``ok`` / ``fault`` / ``unknown`` and since when. A
reader in fault is a gate that cannot read that card, which looks the same as a quiet gate: the
office raises a ``reader_alarms`` row when a status says "fault" (``raised_at`` = when the reader
went into fault) and ends it when a status says "ok" again (``ended_at`` = when it was ok again) or
no longer names the reader (configuration changed). A gate that went offline keeps its alarm open:
nothing is known of the reader then.

``changes`` is pure (no clock, no database); ``evaluate`` applies it to the ledger (idempotent, one
call a second from the web's background loop, like the coverage alarm).
"""

from __future__ import annotations

import dataclasses
import datetime as dt

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from central.ledger.schema import gate_status, reader_alarms
from portgate.timeutil import as_utc


@dataclasses.dataclass(frozen=True, slots=True)
class Raise:
    gate_id: str
    reader_id: str
    kind: str
    at: dt.datetime
    detail: str


@dataclasses.dataclass(frozen=True, slots=True)
class End:
    alarm_id: int
    at: dt.datetime


def _when(text, fallback: dt.datetime) -> dt.datetime:
    try:
        return as_utc(dt.datetime.fromisoformat(text)) if text else fallback
    except (TypeError, ValueError):
        return fallback


def changes(gate_id: str, readers: list[dict] | None, status_at: dt.datetime,
            open_alarms: dict[str, int]) -> list[Raise | End]:
    """What one gate's newest status changes. ``readers``: its ``gate_status.readers`` (None: the
    status did not say: nothing changes); ``status_at``: the status's own time (used when a reader
    has no ``since``); ``open_alarms``: ``{reader_id: alarm id}`` of its alarms still open."""
    if readers is None:
        return []
    out: list[Raise | End] = []
    named = set()
    for r in readers:
        if not isinstance(r, dict) or not r.get("reader_id"):
            continue
        rid = str(r["reader_id"])
        named.add(rid)
        since = _when(r.get("since"), status_at)
        if r.get("state") == "fault" and rid not in open_alarms:
            out.append(Raise(gate_id, rid, str(r.get("kind") or "?")[:16], since, str(r.get("detail") or "")))
        elif r.get("state") == "ok" and rid in open_alarms:
            out.append(End(open_alarms[rid], since))
    out += [End(aid, status_at) for rid, aid in open_alarms.items() if rid not in named]
    return out


def evaluate(session: Session, now: dt.datetime) -> int:
    """Raise and end reader alarms from every gate's stored status; return the rows changed."""
    held: dict[str, dict[str, int]] = {}
    for row in session.execute(select(reader_alarms.c.id, reader_alarms.c.gate_id, reader_alarms.c.reader_id)
                               .where(reader_alarms.c.ended_at.is_(None))):
        held.setdefault(row.gate_id, {})[row.reader_id] = row.id
    n, done = 0, set()
    # a gate id's statuses are per port (0035); its alarms are per gate id: the newest status says
    for s in session.execute(select(gate_status.c.gate_id, gate_status.c.at, gate_status.c.readers)
                             .order_by(gate_status.c.at.desc())):
        if s.gate_id in done:
            continue
        done.add(s.gate_id)
        for c in changes(s.gate_id, s.readers, as_utc(s.at) or now, held.get(s.gate_id, {})):
            if isinstance(c, Raise):
                session.execute(reader_alarms.insert().values(
                    gate_id=c.gate_id, reader_id=c.reader_id, kind=c.kind, raised_at=c.at, detail=c.detail))
            else:
                session.execute(update(reader_alarms).where(reader_alarms.c.id == c.alarm_id).values(ended_at=c.at))
            n += 1
    return n


def list_alarms(session_or_conn, *, open_only: bool = False, limit: int = 200) -> list[dict]:
    """Reader alarms, newest first (``open_only``: those not ended), times aware UTC."""
    q = select(reader_alarms).order_by(reader_alarms.c.raised_at.desc()).limit(limit)
    if open_only:
        q = q.where(reader_alarms.c.ended_at.is_(None))
    return [dict(r._mapping) | {"raised_at": as_utc(r.raised_at), "ended_at": as_utc(r.ended_at)}
            for r in session_or_conn.execute(q)]
