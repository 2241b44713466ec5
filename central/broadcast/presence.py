"""Presence relay: an admit or exit committed in the ledger becomes a ``PresenceDelta`` for the
other gates (G5 double assignment needs to know who is aboard elsewhere). The version is the ledger
row id of the event, so a gate keeps, per worker, the newest change whatever the arrival order."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import func, select
from sqlalchemy.engine import Connection

from central.ledger.schema import events
from wire.downlink import PresenceDelta, PresenceRow, PresenceSnapshot
from wire.events import Event, TapPayload


def delta_for(row_id: int, event: Event, now: dt.datetime) -> PresenceDelta | None:
    """The presence change an event causes, or None (not an admit/exit with a registration)."""
    p = event.payload
    if not isinstance(p, TapPayload) or p.decision not in ("admit", "exit") or not p.registration:
        return None
    open_row = None
    if p.decision == "admit":
        open_row = PresenceRow(
            registration=p.registration,
            gate_id=event.gate_id,
            ship=p.dispatch.ship if p.dispatch else "",
            admitted_at=event.occurred_at,
        )
    return PresenceDelta(
        version=row_id, at=now, registration=p.registration, open=open_row, source_event_id=event.event_id
    )


def snapshot(conn: Connection, now: dt.datetime) -> PresenceSnapshot:
    """Open shifts from the ledger: each worker whose latest admit/exit (by row id) is an admit."""
    latest = (
        select(func.max(events.c.id))
        .where(events.c.decision.in_(("admit", "exit")), events.c.registration.is_not(None))
        .group_by(events.c.registration)
    )
    rows = conn.execute(
        select(events.c.id, events.c.registration, events.c.gate_id, events.c.occurred_at, events.c.payload,
               events.c.decision)
        .where(events.c.id.in_(latest))
    ).all()
    version = max((r.id for r in rows), default=0)
    open_rows = []
    for r in rows:
        if r.decision != "admit":
            continue
        at = r.occurred_at if r.occurred_at.tzinfo else r.occurred_at.replace(tzinfo=dt.UTC)
        ship = ((r.payload or {}).get("dispatch") or {}).get("ship", "")
        open_rows.append(PresenceRow(registration=r.registration, gate_id=r.gate_id, ship=ship, admitted_at=at))
    return PresenceSnapshot(version=version, at=now, open=open_rows)
