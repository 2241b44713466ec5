"""Registry operations: suspension and cancellation (R4), infractions, card replacement (G2),
health exams and booklets, and the lists and records read back.

Every function works inside the caller's transaction (``with session.begin():``) and, for each
state change, appends a change row for the gates and an audit row naming the actor. A function that
raises ``BadInput`` has written nothing the caller will commit: roll back and show the message.

The registry's callers import from here what they always did: one worker or card read and written
lives in ``central.registry.rows`` (``get_worker``, ``save_worker``, ``transition_card``, ...), the
CSV import in ``central.registry.csv_import`` (``import_files``, ``PortScope``, ...); both are
re-exported below.
"""

from __future__ import annotations

import dataclasses
import datetime as dt

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from central import bounds
from central.registry.changes import audit, utcnow
from central.registry.csv_import import (  # re-exported: the import's callers use central.registry.store
    CARD_COMMANDS,
    PortScope,
    import_files,
    import_refusal,
    import_summary,
    sanction_refusal,
    worker_problems,
)
from central.registry.rows import (  # re-exported: one worker or card, read and written
    CARD_TRANSITIONS,
    card_from_row,
    get_card,
    get_worker,
    save_card,
    save_with_history,
    save_worker,
    transition_card,
    worker_from_row,
)
from central.registry.sanctions import TODAY, SuspensionLimits
from central.registry.suspensions import period_for_row
from central.registry.schema import booklet_revalidations, cards, health_exams, penalties, workers
from portgate.errors import BadInput
from portgate.records import Card, CardStatus, Worker, WorkerStatus
from portgate.uid import canonical_uid


def rotation_number_holder(session: Session, category: str, number: int | None,
                           registration: str) -> str | None:
    """The other worker of ``category``'s rotation list holding ``number`` (R1), or None."""
    if number is None:
        return None
    return session.execute(select(workers.c.registration).where(
        workers.c.category == category, workers.c.rotation_number == number,
        workers.c.registration != registration).limit(1)).scalar()


def suspend(session: Session, registration: str, *, start: dt.date, days: int, reason: str,
            article: str, actor: str, now: dt.datetime | None = None,
            case_id: int | None = None, limits: SuspensionLimits = TODAY) -> Worker:
    """Suspend ``registration`` for ``days`` days from ``start`` (inclusive) (R4): ``limits`` are the
    rulebook's (``central.registry.sanctions``: up to 30 days under 83.611 art. 21 a, 1-30 under
    DL 2.032 art. 30; by default today's 10-30 days, Lei 12.815 art. 33).

    The worker row gets status ``suspended`` with ``suspended_from``/``suspended_until`` so the
    gates' G3 applies it on those dates only, and the penalty goes on the registration record
    (art. 20 §3). ``BadInput`` if the worker is unknown or cancelled, ``days`` out of range, or the
    suspension would end after 9999-12-31, the reason is blank, or the period clashes with the
    worker's (``central.registry.suspensions``: the same period again is refused, an overlapping one
    extends the row's period to their union, one apart waits for the row's to end).
    """
    now = now or utcnow()
    if not reason.strip():
        raise BadInput("the reason is required", where="--reason")
    problem = limits.problem(days)
    if problem is not None:
        raise BadInput(problem, where="--days")
    worker = get_worker(session, registration)
    if worker.status is WorkerStatus.CANCELLED:
        raise BadInput(f"registration {registration} is cancelled", where="registration")
    try:
        until = start + dt.timedelta(days=days - 1)
    except OverflowError:  # from 9999-12-30 for 30 days
        raise BadInput(f"the suspension would end after {dt.date.max}", where="start") from None
    first, last = period_for_row(session, worker, start, until, now.date())
    changed = dataclasses.replace(worker, status=WorkerStatus.SUSPENDED, suspended_from=first,
                                  suspended_until=last)
    session.execute(penalties.insert().values(
        registration=registration, kind="suspension", rule="R4", article=article, reason=reason,
        starts_on=start, ends_on=until, case_id=case_id, created_at=now, actor=actor))
    save_worker(session, changed, actor=actor, now=now, action="worker.suspend",
                detail={"from": start.isoformat(), "until": until.isoformat(), "reason": reason,
                        "article": article})
    return changed


def cancel(session: Session, registration: str, *, on: dt.date, reason: str, article: str,
           actor: str, now: dt.datetime | None = None, case_id: int | None = None) -> Worker:
    """Cancel ``registration`` (R4, 83.611 art. 21 b) from date ``on``: recorded on the registration
    record; the roster change carries status ``cancelled`` (G3 denies at every gate).
    ``BadInput`` if unknown or already cancelled."""
    now = now or utcnow()
    worker = get_worker(session, registration)
    if worker.status is WorkerStatus.CANCELLED:
        raise BadInput(f"registration {registration} is already cancelled", where="registration")
    changed = dataclasses.replace(worker, status=WorkerStatus.CANCELLED)
    session.execute(penalties.insert().values(
        registration=registration, kind="cancellation", rule="R4", article=article, reason=reason,
        starts_on=on, ends_on=None, case_id=case_id, created_at=now, actor=actor))
    save_worker(session, changed, actor=actor, now=now, action="worker.cancel",
                detail={"on": on.isoformat(), "reason": reason, "article": article})
    session.execute(update(workers).where(workers.c.registration == registration)
                    .values(cancelled_on=on))
    return changed


def record_infraction(session: Session, registration: str, *, rule: str, article: str,
                      reason: str, actor: str, now: dt.datetime, case_id: int | None = None) -> None:
    """Put an infraction on the worker's registration record (83.611 art. 20 §3)."""
    get_worker(session, registration)
    session.execute(penalties.insert().values(
        registration=registration, kind="infraction", rule=rule, article=article, reason=reason,
        starts_on=None, ends_on=None, case_id=case_id, created_at=now, actor=actor))
    audit(session, actor=actor, action="worker.infraction", subject=registration,
          detail={"rule": rule, "article": article, "reason": reason}, now=now)


def replace_card(session: Session, old_uid: str, new_uid: str, *, actor: str,
                 now: dt.datetime | None = None) -> Card:
    """Replace card ``old_uid`` (active, lost or confiscated) by a new card ``new_uid`` of the same
    kind and registration. Both changes go to the gates. ``BadInput`` if ``new_uid`` exists."""
    now = now or utcnow()
    new_uid = canonical_uid(new_uid)
    if session.execute(select(cards.c.uid).where(cards.c.uid == new_uid)).first():
        raise BadInput(f"card {new_uid} already exists", where="--new-uid")
    old = transition_card(session, old_uid, "replaced", actor=actor, now=now,
                          detail=f"replaced by {new_uid}", replaced_by=new_uid)
    new = Card(uid=new_uid, kind=old.kind, registration=old.registration, status=CardStatus.ACTIVE)
    save_card(session, new, event="issued", actor=actor, now=now, detail=f"replaces {old_uid}")
    return new


def list_workers(session: Session, category: str | None = None,
                 registration: str | None = None) -> list[Worker]:
    """Every worker (optionally of one category, one registration), by category then rotation number."""
    stmt = select(workers).order_by(workers.c.category, workers.c.rotation_number,
                                    workers.c.registration)
    if category:
        stmt = stmt.where(workers.c.category == category)
    if registration:
        stmt = stmt.where(workers.c.registration == registration)
    return [worker_from_row(r) for r in session.execute(stmt)]


def list_cards(session: Session, registration: str | None = None) -> list[Card]:
    """Every card (optionally of one registration), by uid."""
    stmt = select(cards).order_by(cards.c.uid)
    if registration:
        stmt = stmt.where(cards.c.registration == registration)
    return [card_from_row(r) for r in session.execute(stmt)]


def record_of(session: Session, registration: str) -> list[dict]:
    """The worker's registration record: every penalty, oldest first (83.611 art. 20 §3)."""
    get_worker(session, registration)
    rows = session.execute(select(penalties).where(penalties.c.registration == registration)
                           .order_by(penalties.c.id))
    return [dict(r._mapping) for r in rows]


def record_health_exam(session: Session, registration: str, *, exam_date: dt.date, actor: str,
                       now: dt.datetime | None = None) -> Worker:
    """Record a health exam (G3: valid for 24 months); the roster copy gets the new date."""
    now = now or utcnow()
    worker = dataclasses.replace(get_worker(session, registration), health_exam_date=exam_date)
    session.execute(health_exams.insert().values(registration=registration, exam_date=exam_date,
                                                 recorded_at=now, actor=actor))
    save_worker(session, worker, actor=actor, now=now, action="worker.health_exam",
                detail={"exam_date": exam_date.isoformat()})
    return worker


def revalidate_booklet(session: Session, registration: str, *, year: int, actor: str,
                       now: dt.datetime | None = None) -> Worker:
    """Record the yearly booklet revalidation (G3; DL 2.032 art. 5 §4). ``BadInput`` naming
    ``--year`` for a year outside the column's whole numbers (``central.bounds``), or an unknown
    worker; nothing is written then."""
    now = now or utcnow()
    bounds.check(booklet_revalidations, {"year": year}, where="--year")
    worker = dataclasses.replace(get_worker(session, registration), booklet_revalidated_year=year)
    session.execute(booklet_revalidations.insert().values(registration=registration, year=year,
                                                          recorded_at=now, actor=actor))
    save_worker(session, worker, actor=actor, now=now, action="worker.booklet",
                detail={"year": year})
    return worker
