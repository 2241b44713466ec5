"""The port of a ledger object, as the events say it (issue 37 item 4): an event's own
``events.port``; a gate's, the port of its first event; a shift's, its admit event's, else its gate's.
The audit log stores it with an entry about the object (``audit_log.port``, 0031,
``central.registry.audit_ports``). Each is one indexed look-up; ``None`` when the ledger does not
know (an unknown event, a gate with no event yet): the caller decides what that means.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from central.ledger.schema import events
from central.ledger.tables import shifts


def event_port(conn: Connection | Session, event_id: str) -> str | None:
    """The port of event ``event_id`` (``events.port``); None for an event the ledger does not hold."""
    return conn.execute(select(events.c.port).where(events.c.event_id == event_id).limit(1)).scalar()


def gate_port(conn: Connection | Session, gate_id: str | None) -> str | None:
    """The port of gate ``gate_id``: its first event's (index ``(gate_id, seq)``); None for no gate
    or a gate that has sent no event."""
    if not gate_id:
        return None
    return conn.execute(select(events.c.port).where(events.c.gate_id == gate_id)
                        .order_by(events.c.seq).limit(1)).scalar()


def shift_port(conn: Connection | Session, shift_id: str) -> str | None:
    """The port of shift ``shift_id``: its admit event's, else its gate's; None when neither is known."""
    row = conn.execute(select(shifts.c.admit_event_id, shifts.c.gate_id)
                       .where(shifts.c.shift_id == shift_id)).first()
    if row is None:
        return None
    return (event_port(conn, row.admit_event_id) if row.admit_event_id else None) or gate_port(conn, row.gate_id)
