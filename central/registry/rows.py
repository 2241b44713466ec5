"""One worker or one card in the registry's tables: read it (``get_worker``, ``get_card``, a row
to its record), write it (``save_worker``, ``save_card``, ``save_with_history``) and move a card
through its lifecycle (``transition_card``, G2). Imported through ``central.registry.store``.

Every function works inside the caller's transaction (``with session.begin():``) and, for each
state change, appends a change row for the gates and an audit row naming the actor. A function that
raises ``BadInput`` has written nothing the caller will commit: roll back and show the message.
"""

from __future__ import annotations

import dataclasses
import datetime as dt

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from central import bounds
from central.registry.changes import audit, body, record_change
from central.registry.schema import booklet_revalidations, card_events, cards, health_exams, workers
from portgate.errors import BadInput
from portgate.records import Card, CardKind, CardStatus, Worker, WorkerStatus
from portgate.textfold import fold


# Card lifecycle as data (STYLE.md 2): (from status, event) -> new status. Anything else is refused.
CARD_TRANSITIONS: dict[tuple[str, str], str] = {
    ("active", "lost"): "lost",
    ("active", "confiscated"): "confiscated",
    ("active", "replaced"): "replaced",
    ("lost", "replaced"): "replaced",
    ("confiscated", "replaced"): "replaced",
    ("confiscated", "returned"): "active",
    ("lost", "returned"): "active",  # a lost card found again
}


def worker_from_row(row) -> Worker:
    """Build a ``Worker`` from a ``workers`` row."""
    return Worker(
        registration=row.registration, name=row.name, category=row.category,
        status=WorkerStatus(row.status), suspended_from=row.suspended_from,
        suspended_until=row.suspended_until, health_exam_date=row.health_exam_date,
        booklet_revalidated_year=row.booklet_revalidated_year, rotation_number=row.rotation_number,
    )


def card_from_row(row) -> Card:
    """Build a ``Card`` from a ``cards`` row."""
    return Card(uid=row.uid, kind=CardKind(row.kind), registration=row.registration,
                status=CardStatus(row.status))


def get_worker(session: Session, registration: str) -> Worker:
    """The worker with ``registration``; ``BadInput`` if there is none, or if ``registration`` does
    not fit the column (a NUL, which PostgreSQL refuses to compare, or over 64 characters: no
    stored one can)."""
    bounds.check(workers, {"registration": registration}, where="registration")
    row = session.execute(select(workers).where(workers.c.registration == registration)).first()
    if row is None:
        raise BadInput(f"no worker with registration {registration!r}", where="registration")
    return worker_from_row(row)


def get_card(session: Session, uid: str) -> Card:
    """The card with canonical ``uid``; ``BadInput`` if there is none, or if ``uid`` does not fit
    the column (a NUL, over 32 characters)."""
    bounds.check(cards, {"uid": uid}, where="uid")
    row = session.execute(select(cards).where(cards.c.uid == uid)).first()
    if row is None:
        raise BadInput(f"no card with uid {uid!r}", where="uid")
    return card_from_row(row)


def _upsert(session: Session, table, values: dict, key: str) -> None:
    exists = session.execute(select(table.c[key]).where(table.c[key] == values[key])).first()
    if exists:
        session.execute(update(table).where(table.c[key] == values[key]).values(**values))
    else:
        session.execute(table.insert().values(**values))


def save_worker(session: Session, worker: Worker, *, actor: str, now: dt.datetime,
                action: str, detail: dict | None = None) -> int:
    """Write ``worker``; emit a roster change and an audit row. Returns the change version."""
    values = dataclasses.asdict(worker) | {"status": worker.status.value, "updated_at": now,
                                           "name_folded": fold(worker.name)}  # the text search's (0030)
    _upsert(session, workers, values, "registration")
    audit(session, actor=actor, action=action, subject=worker.registration,
          detail=detail or body(worker), now=now)
    return record_change(session, "roster", "upsert", worker.registration, body(worker),
                         actor=actor, now=now)


def save_card(session: Session, card: Card, *, event: str, actor: str, now: dt.datetime,
              detail: str = "", replaced_by: str | None = None) -> int:
    """Write ``card``, append its lifecycle event, emit a cards change and an audit row."""
    values = body(card) | {"updated_at": now, "replaced_by": replaced_by}  # no dates in a card
    _upsert(session, cards, values, "uid")
    session.execute(card_events.insert().values(uid=card.uid, event=event, at=now, actor=actor,
                                                detail=detail))
    audit(session, actor=actor, action=f"card.{event}", subject=card.uid,
          detail=body(card) | {"detail": detail}, now=now)
    return record_change(session, "cards", "upsert", card.uid, body(card), actor=actor, now=now)


def transition_card(session: Session, uid: str, event: str, *, actor: str, now: dt.datetime,
                    detail: str = "", replaced_by: str | None = None) -> Card:
    """Move card ``uid`` through ``event`` (lost, confiscated, replaced, returned) per
    ``CARD_TRANSITIONS``; ``BadInput`` if the card is unknown or the move is not allowed (G2)."""
    card = get_card(session, uid)
    new = CARD_TRANSITIONS.get((card.status.value, event))
    if new is None:
        raise BadInput(f"card {uid} is {card.status.value}: cannot be {event}", where="uid")
    changed = Card(uid=card.uid, kind=card.kind, registration=card.registration,
                   status=CardStatus(new))
    save_card(session, changed, event=event, actor=actor, now=now, detail=detail,
              replaced_by=replaced_by)
    return changed


def save_with_history(session: Session, worker: Worker, *, actor: str, now: dt.datetime, action: str) -> None:
    """``save_worker`` plus the history rows of its health exam and booklet year (what an import
    and the office's add-worker form write for a worker)."""
    save_worker(session, worker, actor=actor, now=now, action=action)
    if worker.health_exam_date:
        session.execute(health_exams.insert().values(
            registration=worker.registration, exam_date=worker.health_exam_date,
            recorded_at=now, actor=actor))
    if worker.booklet_revalidated_year:
        session.execute(booklet_revalidations.insert().values(
            registration=worker.registration, year=worker.booklet_revalidated_year,
            recorded_at=now, actor=actor))
