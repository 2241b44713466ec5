"""The change feed and the audit log: every registry or escala change is one versioned
``downlink_changes`` row (what the MQTT downlink publishes to the gates) and one ``audit_log`` row
naming who made it. Also the JSON bodies of the records as they travel in change rows.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
from typing import Any, Literal

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from central.registry import audit_ports
from central.registry.schema import audit_log, downlink_changes, workers
from portgate.errors import BadInput
from portgate.records import Card, EscalaEntry, Worker

Kind = Literal["roster", "cards", "escala"]
Op = Literal["upsert", "delete"]
HOLDER = object()  # record_change's ``port``: the worker's (a card's holder's) stored port, read now
EVERY_PORT = "*"  # downlink_changes.port of a card whose holder is no registered worker (not a port id)


def utcnow() -> dt.datetime:
    """The office clock (aware UTC). Only the database layer reads it; the pure cores never do."""
    return dt.datetime.now(dt.UTC)


def body(record: Worker | Card | EscalaEntry) -> dict[str, Any]:
    """JSON-ready dict of a record: dates as ISO text, enums as their values, None kept."""
    out: dict[str, Any] = {}
    for field in dataclasses.fields(record):
        value = getattr(record, field.name)
        if isinstance(value, enum.Enum):
            value = value.value
        elif isinstance(value, dt.date):
            value = value.isoformat()
        out[field.name] = value
    return out


def record_change(
    session: Session, kind: Kind, op: Op, key: str, payload: dict[str, Any] | None, *, actor: str,
    now: dt.datetime, port: str | None | object = HOLDER,
) -> int:
    """Append one change row; return its id, which is the new version of ``kind``.

    The row commits with the caller's transaction, so a change is published only if the state it
    describes was saved. ``port`` (0033): the port the row concerns, None the home port; by default
    (``HOLDER``) a roster row takes its worker's stored port (``workers.port``), a cards row its
    holder's (``payload["registration"]``; ``EVERY_PORT`` when the holder is no registered worker,
    e.g. an inspector), an escala row None. Each port's gates get the roster
    rows of their port only (``central.broadcast.port_roster``).
    """
    if port is HOLDER:
        port = holder_port(session, kind, key, payload)
    result = session.execute(
        insert(downlink_changes).values(
            kind=kind, op=op, key=key, body=payload, created_at=now, actor=actor, port=port
        )
    )
    return int(result.inserted_primary_key[0])


def holder_port(session: Session, kind: str, key: str, payload: dict[str, Any] | None) -> str | None:
    """The stored port (None: the home port) of the worker a ``roster`` (``key``) or ``cards``
    (``payload["registration"]``) change concerns; ``EVERY_PORT`` for a card whose holder is no
    registered worker; None for an escala change (or a roster row of no worker)."""
    registration = key if kind == "roster" else (payload or {}).get("registration") if kind == "cards" else None
    if not registration:
        return None
    row = session.execute(select(workers.c.port).where(workers.c.registration == registration)).first()
    if row is None:
        return EVERY_PORT if kind == "cards" else None
    return row.port


_RESOLVE = object()  # audit(): the entry's port from the object it names


def audit(
    session: Session, *, actor: str, action: str, subject: str, detail: dict[str, Any],
    now: dt.datetime, port: Any = _RESOLVE,
) -> None:
    """Append one audit-log row: who (``actor``) did ``action`` to ``subject``, with ``detail``.

    ``port`` (``audit_log.port``, 0031): a port id, None the home port, ``central.audit.ALL`` (only
    all-ports users see it); not given, the port of the object ``subject`` names
    (``central.registry.audit_ports.resolve``: a worker's, a card's, a case's, a flagged event's)."""
    if not actor or not actor.strip():
        raise BadInput("actor is required (who makes the change)", where="--actor")
    follows = None
    if port is _RESOLVE:
        port, follows = audit_ports.resolve(session, action, subject)
    result = session.execute(
        insert(audit_log).values(at=now, actor=actor, action=action, subject=subject, detail=detail,
                                 port=port)
    )
    if follows is not None:
        audit_ports.remember(session, int(result.inserted_primary_key[0]), follows)


def record_changes(session: Session, kind: Kind, rows: list[tuple[Op, str, dict[str, Any] | None]],
                   *, actor: str, now: dt.datetime) -> None:
    """Append many change rows of ``kind`` at once, in order (``(op, key, body)`` each)."""
    if rows:
        session.execute(insert(downlink_changes), [
            {"kind": kind, "op": op, "key": key, "body": payload, "created_at": now, "actor": actor}
            for op, key, payload in rows])
