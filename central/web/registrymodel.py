"""What the registry screens read: worker search (name, registration, card UID in any UID form)
and a worker's page (validity G3, cards and their lifecycle, penalties and cases, last shifts, rest
since the last shift G7). Read-only; every change goes through ``central.registry.store``."""

from __future__ import annotations

import dataclasses
import datetime as dt

from sqlalchemy import String, and_, func, literal, or_, select, tuple_, union
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.functions import FunctionElement
from sqlalchemy.orm import Session

from central.ledger.tables import shifts
from central.registry import name_search
from central.registry.ids import ids_of
from central.registry.schema import card_events, cards, cases, penalties, workers
from central.registry.store import card_from_row, get_worker, worker_from_row
from central.registry.suspensions import with_recorded_suspension
from central.rotation.eligibility import ValiditySettings, months_before, registration_problems
from portgate.errors import BadInput
from portgate.records import Card, Worker, WorkerIds
from portgate.rest import rest_between
from portgate.textfold import fold
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
    """Workers whose name contains ``query`` (any case or accent: ``portgate.textfold.fold``), whose
    registration is ``query``, or who hold a card whose UID ``query`` is in some UID form (hex,
    reversed hex, DEZ10, DEZ10 little endian, DEZ8, W26). At most ``SEARCH_LIMIT`` hits,
    registration matches first."""
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
    like, by_name = "%" + _like(q) + "%", "%" + _escaped(fold(q)) + "%"
    add(session.execute(select(workers).where(or_(workers.c.name_folded.like(by_name, escape="\\"),
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
    ids: WorkerIds = WorkerIds()  # CPF and PIS/NIS (``central.registry.ids``)


def _add_months(day: dt.date, months: int) -> dt.date:
    return months_before(day, -months)


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
    on_record = with_recorded_suspension(session, [worker], today)[0]  # every suspension, not the row's only
    problems = [p.value for p in registration_problems(on_record, today, validity)]
    return WorkerPage(worker, cancelled_on, months, valid_until, problems, views, pens, case_rows,
                      shift_rows, rest, on_shift, ids_of(session, [registration]).get(registration, WorkerIds()))


#: Workers per page of the list (``worker_list``).
PAGE_SIZE = 50
#: The longest "G3 validity expiring within N days" the list accepts (about 3 years).
MAX_EXPIRING_DAYS = 1100


@dataclasses.dataclass(frozen=True, slots=True)
class ListQuery:
    """The worker list's filters, from the page's query string: ``category`` and ``status``
    (exact; empty: any), ``expiring_days`` (None: any; N: the health exam's validity, G3, ends
    within N days of today or has ended, or there is no exam), ``q`` (a registration, its start,
    part of the name in any case, or a card UID in any UID form). ``after``/``before``: the
    registration of the row the page starts after (next page) or ends before (previous page)."""

    category: str = ""
    status: str = ""
    expiring_days: int | None = None
    q: str = ""
    after: str = ""
    before: str = ""


@dataclasses.dataclass(frozen=True, slots=True)
class ListRow:
    """One row: the worker, the last valid day of the health exam (None: no exam) and today's
    G3 problems (``rotation.eligibility.registration_problems`` values)."""

    worker: Worker
    exam_valid_until: dt.date | None
    problems: list[str]


@dataclasses.dataclass(frozen=True, slots=True)
class ListPage:
    """A page of ``worker_list``: its rows in (name, registration) order, and the registrations
    the next and previous pages start after / end before (None: no such page)."""

    rows: list[ListRow]
    next_after: str | None
    prev_before: str | None


class folded(FunctionElement):
    """A text column folded for a case-insensitive ``LIKE`` against a lower-case pattern:
    ``lower(column)`` (PostgreSQL: ``LIKE`` is case-sensitive there), but the bare column on
    SQLite, whose ``LIKE`` already ignores ASCII case and whose ``lower()`` folds ASCII only, so
    the rows found are the same, without a ``lower()`` string built per row: the text search
    reads every name (a name may contain the text anywhere), 3.5x faster at 50,000 workers."""

    type = String()
    inherit_cache = True
    name = "folded"


@compiles(folded)
def _folded(element, compiler, **kw):
    return f"lower({compiler.process(element.clauses, **kw)})"


@compiles(folded, "sqlite")
def _folded_sqlite(element, compiler, **kw):
    return compiler.process(element.clauses, **kw)


def _escaped(text: str) -> str:
    """``text`` as a ``LIKE`` pattern's literal part (``\\``, ``%``, ``_`` escaped by ``\\``)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _like(text: str) -> str:
    return _escaped(text.lower())


def list_conditions(query: ListQuery, today: dt.date, validity: ValiditySettings = ValiditySettings(),
                    name_index: str | None = None) -> list:
    """The SQL conditions of ``query``'s filters (what ``worker_list`` and the benchmark run).
    The expiring filter is exact: a worker of a category whose exam lasts ``m`` months is listed
    when his exam date is at most ``m`` months before the day after the last day asked for
    (``exam + m months - 1 day <= today + N``), or he has no exam. The text search finds a worker
    whose registration is the text or begins with it (any case), whose name holds the text without
    regard to accents or case (``name_folded``, 0029: ``joao`` finds João), or who holds a card
    the text reads as in some UID form. ``name_index``: the dialect
    (``sqlite``, ``postgresql``) whose substring index the text search may narrow by
    (``central.registry.name_search``: the candidates are ANDed with the search's own
    conditions, so the rows are the same); None: no index."""
    conds = []
    if query.category:
        conds.append(workers.c.category == query.category)
    if query.status:
        conds.append(workers.c.status == query.status)
    if query.expiring_days is not None:
        limit_next = today + dt.timedelta(days=query.expiring_days + 1)
        special = dict(validity.health_exam_months_by_category)
        by_cat = [and_(workers.c.category == cat, workers.c.health_exam_date <= months_before(limit_next, months))
                  for cat, months in special.items()]
        rest = workers.c.health_exam_date <= months_before(limit_next, validity.health_exam_months)
        if special:
            rest = and_(workers.c.category.not_in(list(special)), rest)
        conds.append(or_(workers.c.health_exam_date.is_(None), rest, *by_cat))
    q = (query.q or "").strip()
    if q:
        like = _like(q)
        matches = [workers.c.registration == q,
                   folded(workers.c.registration).like(like + "%", escape="\\"),
                   workers.c.name_folded.like("%" + _escaped(fold(q)) + "%", escape="\\")]
        by_card = []
        for _form, hexa, bits in uid_candidates(q):
            cond = cards.c.uid == hexa if bits is None else cards.c.uid.like(f"%{hexa}")
            by_card.append(select(cards.c.registration).where(cond))
            matches.append(workers.c.registration.in_(by_card[-1]))
        conds.append(or_(*matches))
        narrow = name_search.candidates(name_index, q) if name_index else None
        if narrow is not None:  # every row the OR finds is among these: the index drives the search
            conds.append(workers.c.registration.in_(union(*narrow, *by_card)))
    return conds


def worker_list(session: Session, query: ListQuery, *, today: dt.date, page_size: int = PAGE_SIZE,
                validity: ValiditySettings = ValiditySettings(), scope=None) -> ListPage:
    """One page of the workers that pass ``query``'s filters, by name then registration, with
    keyset paging (no OFFSET: a page costs the same at the list's end as at its start, over the
    index ``ix_workers_name_registration``). An ``after``/``before`` registration that is not
    registered starts the list from its beginning. ``scope``: an SQL condition on ``workers`` the
    rows must also meet (the view's ports, ``central.registry.worker_ports.in_ports``); None: any
    worker. Read-only."""
    conn = session.connection()
    narrow = name_search.available(conn) and name_search.selective(conn, (query.q or "").strip())
    conds = list_conditions(query, today, validity, conn.dialect.name if narrow else None)
    if scope is not None:
        conds.append(scope)
    key = tuple_(workers.c.name, workers.c.registration)
    backwards = False
    anchor_reg = query.before or query.after
    if anchor_reg:
        bounds_ok = len(anchor_reg) <= 64 and "\x00" not in anchor_reg
        name = session.execute(select(workers.c.name).where(workers.c.registration == anchor_reg)).scalar() \
            if bounds_ok else None
        if name is not None:
            backwards = bool(query.before)
            conds.append(key < tuple_(literal(name), literal(anchor_reg)) if backwards
                         else key > tuple_(literal(name), literal(anchor_reg)))
    order = (workers.c.name.desc(), workers.c.registration.desc()) if backwards else (
        workers.c.name, workers.c.registration)
    rows = session.execute(select(workers).where(*conds).order_by(*order).limit(page_size + 1)).all()
    more = len(rows) > page_size
    rows = rows[:page_size]
    if backwards:
        rows.reverse()
    found = []
    for r in rows:
        w = worker_from_row(r)
        months = validity.health_months(w.category)
        until = (_add_months(w.health_exam_date, months) - dt.timedelta(days=1)) if w.health_exam_date else None
        found.append(ListRow(w, until, [p.value for p in registration_problems(w, today, validity)]))
    if not found:
        return ListPage([], None, None)
    has_next = more if not backwards else True
    has_prev = (more if backwards else bool(anchor_reg and not backwards and query.after))
    return ListPage(found, found[-1].worker.registration if has_next else None,
                    found[0].worker.registration if has_prev else None)


def matched_by(session: Session, query: str, shown: list[Worker]) -> dict[str, str]:
    """Why each of the ``shown`` workers matches the text search ``query``: ``registration``,
    ``name`` or ``uid <form>`` (the card UID form it was read in), for the list's column."""
    q = (query or "").strip()
    out: dict[str, str] = {}
    if not q or not shown:
        return out
    regs = [w.registration for w in shown]
    held: dict[str, list[str]] = {}
    for uid, reg in session.execute(select(cards.c.uid, cards.c.registration).where(cards.c.registration.in_(regs))):
        held.setdefault(reg, []).append(uid)
    candidates = uid_candidates(q)
    for w in shown:
        if w.registration == q or w.registration.lower().startswith(q.lower()):
            out[w.registration] = "registration"
        elif fold(q) in fold(w.name):
            out[w.registration] = "name"
        else:
            for form, hexa, bits in candidates:
                if any(uid == hexa if bits is None else uid.endswith(hexa) for uid in held.get(w.registration, ())):
                    out[w.registration] = f"uid {form.value}"
                    break
    return out
