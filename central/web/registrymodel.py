"""What the registry screens read: worker search (name, registration, card UID in any UID form)
and a worker's page (validity G3, cards and their lifecycle, penalties and cases, last shifts, rest
since the last shift G7). Read-only; every change goes through ``central.registry.store``."""

from __future__ import annotations

import dataclasses
import datetime as dt

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from central.ledger.tables import shifts
from central.registry.schema import card_events, cards, cases, penalties, workers
from central.registry.store import card_from_row, get_worker, worker_from_row
from central.rotation.eligibility import ValiditySettings, _months_before, registration_problems
from portgate.errors import BadInput
from portgate.records import Card, Worker
from portgate.rest import rest_between
from portgate.timeutil import as_utc
from portgate.uid import PARTIAL_BITS, UidFormat, read_uid

SEARCH_LIMIT = 50


@dataclasses.dataclass(frozen=True, slots=True)
class Hit:
    """One search result: the worker and why it matched (``name``, ``registration`` or
    ``uid <form>``)."""

    worker: Worker
    why: str


def uid_candidates(text: str) -> list[tuple[UidFormat, str, int | None]]:
    """Every reading of ``text`` as a card UID: ``(form, hex, bits)`` for each form of
    ``portgate.uid.UidFormat`` it fits (``bits`` None = whole UID, else the low bits it carries)."""
    out = []
    for form in UidFormat:
        try:
            read = read_uid(text, form)
        except BadInput:
            continue
        out.append((form, read.hex, PARTIAL_BITS.get(form)))
    return out


def search(session: Session, query: str) -> list[Hit]:
    """Workers whose name contains ``query`` (any case), whose registration is ``query``, or who
    hold a card whose UID ``query`` is in some UID form (hex, reversed hex, DEZ10, DEZ10 little
    endian, DEZ8, W26). At most ``SEARCH_LIMIT`` hits, registration matches first."""
    q = (query or "").strip()
    if not q:
        return []
    hits: dict[str, Hit] = {}

    def add(rows, why):
        for row in rows:
            if row.registration not in hits and len(hits) < SEARCH_LIMIT:
                hits[row.registration] = Hit(worker_from_row(row), why)

    add(session.execute(select(workers).where(workers.c.registration == q)), "registration")
    for form, hexa, bits in uid_candidates(q):
        cond = cards.c.uid == hexa if bits is None else cards.c.uid.like(f"%{hexa}")
        regs = select(cards.c.registration).where(cond)
        add(session.execute(select(workers).where(workers.c.registration.in_(regs))), f"uid {form.value}")
    like = "%" + q.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    add(session.execute(select(workers).where(or_(func.lower(workers.c.name).like(like, escape="\\"),
                                                  func.lower(workers.c.registration).like(like, escape="\\")))
                        .order_by(workers.c.name).limit(SEARCH_LIMIT)), "name")
    return list(hits.values())


@dataclasses.dataclass(frozen=True, slots=True)
class CardView:
    card: Card
    events: list[dict]


@dataclasses.dataclass(frozen=True, slots=True)
class WorkerPage:
    """Everything the worker's page shows. ``exam_valid_until``: the last day the health exam is
    valid for the worker's category (G3: 12 months for ``estivador``, DL 2.032 art. 28 §1, else 24);
    ``problems``: the G3 problems today; ``rest_h``: hours since the end of the last shift (G7),
    never negative (``portgate.rest.rest_between``), None when there is no shift or ``on_shift``;
    ``on_shift``: the last shift has no exit and its period has not ended (the worker is aboard)."""

    worker: Worker
    cancelled_on: dt.date | None
    exam_months: int
    exam_valid_until: dt.date | None
    problems: list[str]
    cards: list[CardView]
    penalties: list[dict]
    cases: list[dict]
    shifts: list[dict]
    rest_h: float | None
    on_shift: bool = False


def _add_months(day: dt.date, months: int) -> dt.date:
    return _months_before(day, -months)


def worker_page(session: Session, registration: str, *, today: dt.date, now: dt.datetime,
                validity: ValiditySettings = ValiditySettings(), shift_limit: int = 10) -> WorkerPage:
    """The page of ``registration``; ``BadInput`` if there is no such worker."""
    worker = get_worker(session, registration)
    cancelled_on = session.execute(select(workers.c.cancelled_on)
                                   .where(workers.c.registration == registration)).scalar()
    months = validity.health_months(worker.category)
    valid_until = (_add_months(worker.health_exam_date, months) - dt.timedelta(days=1)
                   if worker.health_exam_date else None)
    card_rows = [card_from_row(r) for r in session.execute(
        select(cards).where(cards.c.registration == registration).order_by(cards.c.uid))]
    views = []
    for card in card_rows:
        events = [dict(r._mapping) for r in session.execute(
            select(card_events).where(card_events.c.uid == card.uid).order_by(card_events.c.id))]
        views.append(CardView(card, events))
    pens = [dict(r._mapping) for r in session.execute(
        select(penalties).where(penalties.c.registration == registration).order_by(penalties.c.id))]
    case_rows = [dict(r._mapping) for r in session.execute(
        select(cases.c.id, cases.c.reason_flag, cases.c.article, cases.c.status, cases.c.occurred_at,
               cases.c.decision_kind).where(cases.c.registration == registration).order_by(cases.c.id))]
    shift_rows = [dict(r._mapping) for r in session.execute(
        select(shifts.c.shift_id, shifts.c.ship, shifts.c.work_date, shifts.c.period, shifts.c.function,
               shifts.c.admit_at, shifts.c.exit_at, shifts.c.period_end)
        .where(shifts.c.registration == registration)
        .order_by(shifts.c.period_start.desc()).limit(shift_limit))]
    rest, on_shift = None, False
    if shift_rows:
        last = shift_rows[0]
        end = as_utc(last["exit_at"] or last["period_end"])
        if last["exit_at"] is None and end > now:
            on_shift = True
        else:
            rest = round(rest_between(end, now).total_seconds() / 3600, 1)
    problems = [p.value for p in registration_problems(worker, today, validity)]
    return WorkerPage(worker, cancelled_on, months, valid_until, problems, views, pens, case_rows,
                      shift_rows, rest, on_shift)
