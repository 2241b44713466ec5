"""What the MQTT downlink publishes: versioned snapshots and the change feed since a version.

The version of a kind is the id of its latest ``downlink_changes`` row (ids grow across all kinds,
so versions are comparable within a kind and never go back). A gate that holds version ``v`` of a
kind applies ``changes_since(session, kind, v)`` in order; a gate with nothing takes the snapshot.

Keys: ``roster`` -> registration, ``cards`` -> card uid, ``escala`` -> the escala entry id (text).
Bodies are JSON objects of the record's fields (``Worker``/``Card``/``EscalaEntry``, dates as ISO
text; escala bodies also carry ``id``); a delete carries the last body too.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from central.registry.changes import Kind, aware
from central.registry.schema import cards, downlink_changes, workers
from central.registry.store import card_from_row, worker_from_row
from portgate.errors import BadInput
from portgate.records import Card, Worker

KINDS = ("roster", "cards", "escala")


@dataclasses.dataclass(frozen=True, slots=True)
class Change:
    version: int
    kind: str
    op: str  # upsert | delete
    key: str
    body: dict[str, Any] | None
    created_at: dt.datetime  # aware UTC
    actor: str


def change_version(session: Session, *kinds: str) -> int:
    """The id of the newest ``downlink_changes`` row of any of ``kinds`` (0 when none)."""
    value = session.execute(select(func.max(downlink_changes.c.id))
                            .where(downlink_changes.c.kind.in_(kinds))).scalar()
    return int(value or 0)


def roster_snapshot(session: Session) -> tuple[int, list[Worker], list[Card]]:
    """(version, every worker, every card) as of now. The version is the latest roster-or-cards
    change id; follow with ``changes_since(session, "roster"|"cards", version)``. Read it in one
    transaction so version and rows agree."""
    version = change_version(session, "roster", "cards")
    ws = [worker_from_row(r) for r in session.execute(select(workers).order_by(workers.c.registration))]
    cs = [card_from_row(r) for r in session.execute(select(cards).order_by(cards.c.uid))]
    return version, ws, cs


def changes_since(session: Session, kind: Kind, version: int) -> list[Change]:
    """Changes of ``kind`` with version > ``version``, oldest first. ``BadInput`` for an unknown kind."""
    if kind not in KINDS:
        raise BadInput(f"kind {kind!r} is not one of {'|'.join(KINDS)}", where="kind")
    rows = session.execute(select(downlink_changes).where(
        downlink_changes.c.kind == kind, downlink_changes.c.id > version)
        .order_by(downlink_changes.c.id))
    return [Change(r.id, r.kind, r.op, r.key, r.body, aware(r.created_at), r.actor) for r in rows]
