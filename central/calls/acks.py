"""Acknowledging an alarm (issue 33): an inspector or the office says, with a comment, that a
coverage alarm (G11, ``coverage_alarms``) or a reader alarm (``reader_alarms``) was seen and what
is being done. An acknowledgement does not end the alarm: a coverage alarm ends when a watchman is
admitted, a reader alarm when the reader is ok again. A later acknowledgement replaces the comment;
each one is an audit_log row (``alarm.acknowledge``).
"""

from __future__ import annotations

import dataclasses
import datetime as dt

from sqlalchemy import select
from sqlalchemy.orm import Session

from central.audit import ALL
from central.calls.schema import alarm_acks, coverage_alarms
from central.ledger.object_ports import gate_port
from central.ledger.schema import reader_alarms
from central.registry.changes import audit
from portgate.errors import BadInput
from portgate.timeutil import as_utc

KINDS = {"coverage": coverage_alarms, "reader": reader_alarms}
MAX_COMMENT = 2_000  # characters


@dataclasses.dataclass(frozen=True, slots=True)
class Ack:
    """The latest acknowledgement of one alarm: its comment, who (``web:<login>``), when (aware UTC)."""

    comment: str
    actor: str
    at: dt.datetime


def acks(session_or_conn, kind: str, ids: list[int]) -> dict[int, Ack]:
    """The acknowledgements of the ``kind`` alarms ``ids`` (absent: never acknowledged)."""
    if not ids:
        return {}
    rows = session_or_conn.execute(select(alarm_acks).where(alarm_acks.c.kind == kind,
                                                            alarm_acks.c.alarm_id.in_(ids)))
    return {r.alarm_id: Ack(r.comment, r.actor, as_utc(r.at)) for r in rows}


def acknowledge(session: Session, kind: str, alarm_id: int, comment: str | None, *, actor: str,
                now: dt.datetime) -> Ack:
    """Acknowledge the ``kind`` (``coverage`` | ``reader``) alarm ``alarm_id`` with ``comment``
    (required, at most ``MAX_COMMENT`` characters, no NUL); ``now`` aware UTC. ``BadInput`` for an
    unknown kind or alarm or a missing comment; the caller rolls back."""
    table = KINDS.get(kind)
    if table is None:
        raise BadInput(f"alarm kind {kind[:20]!r} is not one of {', '.join(KINDS)}", where="kind")
    found = session.execute(select(table.c.id, table.c.gate_id).where(table.c.id == alarm_id)).first()
    if found is None:
        raise BadInput(f"no {kind} alarm {alarm_id}", where="alarm")
    text = (comment or "").strip()
    if not text:
        raise BadInput("the comment is required: say what was seen or what is being done", where="comment")
    if "\x00" in text:
        raise BadInput("the comment contains a NUL character", where="comment")
    if len(text) > MAX_COMMENT:
        raise BadInput(f"the comment is longer than {MAX_COMMENT} characters ({len(text)})", where="comment")
    values = {"comment": text, "actor": actor, "at": now}
    if acks(session, kind, [alarm_id]):
        session.execute(alarm_acks.update().where(alarm_acks.c.kind == kind, alarm_acks.c.alarm_id == alarm_id)
                        .values(**values))
    else:
        session.execute(alarm_acks.insert().values(kind=kind, alarm_id=alarm_id, **values))
    audit(session, actor=actor, action="alarm.acknowledge", subject=f"{kind}:{alarm_id}",
          detail={"comment": text}, now=now, port=gate_port(session, found.gate_id) or ALL)
    return Ack(text, actor, now)
