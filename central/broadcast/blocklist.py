"""Blocklist relay: a confiscation committed in the ledger blocks the card at every gate (G10,
83.611 art. 20 §1). The office's blocklist is the configured base (cards.csv: every card not
active) plus every registry card not active (a card reported lost on the web) plus every card
confiscated at a gate, as recorded in the ledger.

Version: the base snapshot's version plus the ledger row id of the newest confiscation, so it grows
with each confiscation and with each new base file; gates ignore any snapshot not newer than theirs.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import func, select
from sqlalchemy.engine import Connection

from central.ledger.schema import events
from central.registry.schema import cards, downlink_changes
from portgate.timeutil import as_utc
from wire.downlink import BlockedCard, CardsSnapshot
from wire.events import ConfiscationPayload, Event


def has_confiscation(inserted: list[tuple[int, Event]]) -> bool:
    """True if any newly inserted event is a confiscation."""
    return any(isinstance(event.payload, ConfiscationPayload) for _row, event in inserted)


def snapshot(conn: Connection, now: dt.datetime, base: CardsSnapshot | None = None) -> CardsSnapshot:
    """The whole blocklist: ``base`` (may be None) plus the registry's cards that are not active
    (reported lost at the office or by the worker himself: ``[publish] source = "csv"`` still blocks
    them at every gate, G2) plus the ledger's confiscations, one per UID. Version: the base's plus
    the newest confiscation's row id plus the newest registry card change's id (all only grow)."""
    blocked = {b.uid: b for b in (base.blocked if base else [])}
    for r in conn.execute(select(cards.c.uid, cards.c.status, cards.c.updated_at).where(cards.c.status != "active")):
        blocked.setdefault(r.uid, BlockedCard(uid=r.uid, reason=r.status, at=as_utc(r.updated_at) or now))
    card_change = conn.execute(select(func.max(downlink_changes.c.id)).where(downlink_changes.c.kind == "cards")).scalar()
    rows = conn.execute(
        select(events.c.id, events.c.payload, events.c.occurred_at)
        .where(events.c.type == "confiscation")
        .order_by(events.c.id)
    ).all()
    newest = 0
    for row in rows:
        uid = (row.payload or {}).get("uid")
        if not uid:
            continue
        at = as_utc(row.occurred_at)
        blocked[uid] = BlockedCard(uid=uid, reason="confiscated", at=at)
        newest = max(newest, row.id)
    version = (base.version if base else 0) + newest + (card_change or 0)
    return CardsSnapshot(version=version, at=now, blocked=list(blocked.values()))
