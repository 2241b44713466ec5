"""Blocklist relay: a confiscation committed in the ledger blocks the card at every gate (G10,
83.611 art. 20 §1). The office's blocklist is the configured base (cards.csv: every card not
active) plus every card confiscated at a gate, as recorded in the ledger.

Version: the base snapshot's version plus the ledger row id of the newest confiscation, so it grows
with each confiscation and with each new base file; gates ignore any snapshot not newer than theirs.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select
from sqlalchemy.engine import Connection

from central.ledger.schema import events
from wire.downlink import BlockedCard, CardsSnapshot
from wire.events import ConfiscationPayload, Event


def has_confiscation(inserted: list[tuple[int, Event]]) -> bool:
    """True if any newly inserted event is a confiscation."""
    return any(isinstance(event.payload, ConfiscationPayload) for _row, event in inserted)


def snapshot(conn: Connection, now: dt.datetime, base: CardsSnapshot | None = None) -> CardsSnapshot:
    """The whole blocklist: ``base`` (may be None) plus the ledger's confiscations, one per UID."""
    rows = conn.execute(
        select(events.c.id, events.c.payload, events.c.occurred_at)
        .where(events.c.type == "confiscation")
        .order_by(events.c.id)
    ).all()
    blocked = {b.uid: b for b in (base.blocked if base else [])}
    newest = 0
    for row in rows:
        uid = (row.payload or {}).get("uid")
        if not uid:
            continue
        at = row.occurred_at if row.occurred_at.tzinfo else row.occurred_at.replace(tzinfo=dt.UTC)
        blocked[uid] = BlockedCard(uid=uid, reason="confiscated", at=at)
        newest = max(newest, row.id)
    version = (base.version if base else 0) + newest
    return CardsSnapshot(version=version, at=now, blocked=list(blocked.values()))
