"""What the office's forms do to the registry by hand, with the checks of the files and commands:
a worker added with his admission evidence (a ``workers.csv`` row's validation,
``portgate.records.Worker.from_row`` and ``store.worker_problems``, plus RULES.md R9's conditions,
``central.registry.admission``), and a card issued to a worker by its UID typed in any UID form
(``portgate.uid.enrol_uid``).

A refusal is a ``FormRefused`` naming each field and its reason (English, the services' words;
the web application words them in the page's language), so the form is shown again with every
typed value and each error next to its field. Nothing is written then.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Mapping

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from central.registry.admission import CONDITION_NAMES, Admission, admission_problem_fields
from central.registry.admission_store import (
    REQUIRED,
    admission_from_row,
    foreign_share_refusal,
    record_admission,
)
from central.registry.ids import form_clashes, set_ids
from central.registry.schema import cards, workers
from central.registry.store import (
    get_card,
    get_worker,
    rotation_number_holder,
    save_card,
    save_with_history,
    worker_problems,
)
from portgate.errors import BadInput
from portgate.records import COLUMNS, Card, CardKind, CardStatus, Worker, WorkerIds
from portgate.uid import enrol_uid

#: The categories the form offers besides those already registered: the gate's default G12 table
#: (``vigia`` 83.611 art. 1; ``estivador`` DL 2.032 art. 12 §1; ``capatazia`` DL 3.844 art. 4).
KNOWN_CATEGORIES = ("vigia", "estivador", "capatazia")
#: The worker fields the add form carries (a new worker is active: a sanction comes by R4 only).
ADD_FIELDS = ("registration", "name", "category", "health_exam_date", "booklet_revalidated_year",
              "rotation_number", "cpf", "pis")
#: The admission fields: birth date, nationality, registration date, then each condition's
#: document (``NAME``) and date (``NAME_on``).
ADMISSION_FIELDS = REQUIRED[1:] + tuple(c for name in CONDITION_NAMES for c in (name, f"{name}_on"))

_BASE_WORKER = {"registration": "X", "name": "X", "category": "vigia", "status": "active"}
_BASE_ADMISSION = {"registration": "X", "birth_date": "2000-01-01", "nationality": "BR",
                   "registered_on": "2020-01-01"}


class FormRefused(BadInput):
    """A form refused: ``fields`` is ``{field: reason}`` (English), in the form's order."""

    def __init__(self, fields: Mapping[str, str]) -> None:
        self.fields = dict(fields)
        super().__init__("; ".join(self.fields.values()))  # each reason names its field


def _field_of(message: str, known, default: str) -> str:
    head = message.split(" ", 1)[0]
    return head if head in known else default


def _categories_statement():
    """The registered categories by a loose scan of the category index: one index seek per
    category (a recursive CTE; neither SQLite nor PostgreSQL skips through an index for
    ``DISTINCT``), not a read of every worker."""
    first = select(func.min(workers.c.category).label("category")).cte("seen", recursive=True)
    following = select(select(func.min(workers.c.category)).where(workers.c.category > first.c.category)
                       .scalar_subquery()).where(first.c.category.is_not(None))
    seen = first.union_all(following)
    return select(seen.c.category).where(seen.c.category.is_not(None))


_CATEGORIES = _categories_statement()


def categories(session: Session) -> list[str]:
    """The categories a worker may be added to: ``KNOWN_CATEGORIES`` and those registered (read
    by index seeks, ``_categories_statement``: every page of the worker list asks, and a
    ``DISTINCT`` over 50,000 workers took 2 ms)."""
    found = set(session.execute(_CATEGORIES).scalars())
    return sorted(found | set(KNOWN_CATEGORIES))


def worker_row_errors(row: Mapping[str, str]) -> dict[str, str]:
    """``{field: reason}`` of a workers.csv row, each field checked as ``Worker.from_row`` checks it
    (so every bad field is named at once, not the first only), then the whole row (a suspension
    that ends before it starts) and the column sizes and plausible dates
    (``store.worker_problems``). Empty: the row is a worker."""
    errors: dict[str, str] = {}
    fields = COLUMNS[Worker]
    for field in fields:
        try:
            Worker.from_row(_BASE_WORKER | {field: row.get(field, "")})
        except BadInput as exc:
            errors[field] = exc.reason
    if errors:
        return errors
    try:
        worker = Worker.from_row(row)
    except BadInput as exc:
        return {_field_of(exc.reason, fields, "suspended_until"): exc.reason}
    for problem in worker_problems(worker):
        errors.setdefault(_field_of(problem, fields, "name"), problem)
    return errors


def ids_errors(row: Mapping[str, str]) -> dict[str, str]:
    """``{field: reason}`` of the ``cpf`` and ``pis`` cells (``portgate.records.WorkerIds``: their
    length and check digits; empty cells are allowed). Empty: both are good."""
    errors: dict[str, str] = {}
    for field in ("cpf", "pis"):
        try:
            WorkerIds.from_row({field: row.get(field, "")})
        except BadInput as exc:
            errors[field] = exc.reason
    return errors


def ids_problems(session: Session, registration: str, cells: Mapping[str, str]) -> dict[str, str]:
    """``{field: reason}`` of the ``cpf`` and ``pis`` cells: a bad one (``ids_errors``), or a good
    one another registration holds (``cpf X is already held by R``: the registry import's rule,
    ``ids.form_clashes``; one person, one registration: G5 keeps a worker off two ships)."""
    errors = ids_errors(cells)
    good = {f: cells.get(f, "") for f in ("cpf", "pis") if f not in errors}
    return errors | form_clashes(session, registration, WorkerIds.from_row(good))


def save_ids(session: Session, registration: str, ids: WorkerIds, *, actor: str, now: dt.datetime) -> dict:
    """``ids.set_ids`` for a form: a CPF or PIS another form committed after this one's
    ``ids_problems`` (two submissions at once) is refused by the unique indexes of 0038 and
    becomes a ``FormRefused`` naming its holder (on PostgreSQL in a savepoint, so the holder can be
    read; SQLite's failed statement leaves the transaction usable)."""
    pg = session.get_bind().dialect.name == "postgresql"
    try:
        with session.begin_nested() if pg else contextlib.nullcontext():
            return set_ids(session, registration, ids, actor=actor, now=now)
    except IntegrityError:
        held = form_clashes(session, registration, ids)
        if not held:
            raise
        raise FormRefused(held) from None


def admission_row_errors(row: Mapping[str, str]) -> dict[str, str]:
    """``{field: reason}`` of an admissions.csv row's cells, each as ``admission_from_row``
    reads it (a condition's document and date are checked as a pair)."""
    errors: dict[str, str] = {}
    for field in REQUIRED[1:]:
        if not (row.get(field) or "").strip():
            errors[field] = f"{field} is required"
            continue
        try:
            admission_from_row(_BASE_ADMISSION | {field: row.get(field, "")}, "form")
        except BadInput as exc:
            errors[field] = exc.reason
    for name in CONDITION_NAMES:
        try:
            admission_from_row(_BASE_ADMISSION | {name: row.get(name, ""), f"{name}_on": row.get(f"{name}_on", "")},
                               "form")
        except BadInput as exc:
            errors[_field_of(exc.reason, (name, f"{name}_on"), f"{name}_on")] = exc.reason
    return errors


def _registration_taken(session: Session, reg: str) -> str | None:
    """Why the add form may not register ``reg``: it is registered, or a registration differing
    from it only in letter case is (``v017`` beside ``V017``, as ``import_checks.case_errors``
    refuses it in a file; a registration is ASCII, ``portgate.registration.REGISTRATION``); else None."""
    held = list(session.execute(select(workers.c.registration).where(
        func.lower(workers.c.registration) == reg.lower())).scalars())
    if reg in held:
        return f"{reg} is already registered"
    return f"registration {reg} differs only in letter case from the registered {held[0]}" if held else None


def add_worker(session: Session, row: Mapping[str, str], admission: Mapping[str, str], *, actor: str,
               now: dt.datetime) -> Worker:
    """Register one new worker from the office's form: ``row`` holds ``ADD_FIELDS`` as
    workers.csv text (dates ``YYYY-MM-DD``), ``admission`` the ``ADMISSION_FIELDS`` as
    admissions.csv text. The worker is active; the category must be one of ``categories``.

    Refused with ``FormRefused`` naming every bad field (nothing written): a bad cell as the CSV
    import refuses it, an unknown category, a registration already registered, a rotation number
    another worker of the category holds (R1), an unmet admission condition (R9: age, nationality,
    a missing or later-dated document; 83.611 art. 15, DL 2.032 art. 5 §1-§2) and a foreign
    stevedore beyond one third (DL 2.032 art. 5 §3), a CPF or PIS/NIS with wrong digits (both optional)
    or that another registration holds (``ids_problems``; one another form took meanwhile: ``save_ids``).
    Otherwise writes the worker (roster change for the gates, ``worker.add`` audit row, exam and
    booklet history) and the admission record (``worker.admission`` audit row); returns the worker."""
    cells = {k: str(row.get(k) or "").strip() for k in ADD_FIELDS} | {"status": "active"}
    errors = worker_row_errors(cells) | ids_problems(session, cells["registration"], cells)
    if "category" not in errors and cells["category"] not in categories(session):
        errors["category"] = (f"category {cells['category']!r} is not one of "
                              f"{', '.join(categories(session))}")
    reg = cells["registration"]
    taken = None if "registration" in errors else _registration_taken(session, reg)
    if taken:
        errors["registration"] = taken
    adm_cells = {k: str(admission.get(k) or "").strip() for k in ADMISSION_FIELDS} | {"registration": reg or "X"}
    adm_errors = admission_row_errors(adm_cells)
    worker_ok = not errors
    errors |= adm_errors
    worker = adm = None
    if worker_ok:
        worker = Worker.from_row(cells)
        other = rotation_number_holder(session, worker.category, worker.rotation_number, reg)
        if other:
            errors["rotation_number"] = (f"rotation_number {worker.rotation_number} is already held by "
                                         f"{other} ({worker.category})")
    if not adm_errors:  # the conditions are checked even when a worker field is wrong: all at once
        adm = admission_from_row(adm_cells, "form")
        if "category" not in errors:
            for field, problem in admission_problem_fields(cells["category"], adm):
                errors.setdefault(field, problem)
        if worker is not None:
            share = foreign_share_refusal(session, [(worker, adm)])
            if share:
                errors.setdefault("nationality", share)
    if errors:
        raise FormRefused({k: errors[k] for k in (*ADD_FIELDS, *ADMISSION_FIELDS) if k in errors})
    assert worker is not None and isinstance(adm, Admission)
    save_with_history(session, worker, actor=actor, now=now, action="worker.add")
    save_ids(session, reg, WorkerIds.from_row(cells), actor=actor, now=now)
    record_admission(session, worker, adm, actor=actor, now=now)
    return worker


def issue_card(session: Session, registration: str, uid: str, uid_form: str | None, kind: str, *,
               actor: str, now: dt.datetime) -> Card:
    """Issue a new active card of ``kind`` (control or badge) to ``registration``, its UID typed
    in ``uid_form`` (``portgate.uid.enrol_uid``: hex, hex_reversed, decimal10 as a 4-byte UID,
    decimal10_le; 10 digits with no form, dez8 and wiegand26 are refused). Sent to the gates
    (cards change), ``card.issued`` audit row, lifecycle event ``issued``.

    ``FormRefused`` naming ``uid`` (a UID that does not fit its form, or a card that exists
    already) or ``kind``; ``BadInput`` for an unknown worker; and, naming ``uid``, when the worker
    already has an active card of that kind (one at a time, G2: report it lost or replace it)."""
    get_worker(session, registration)
    errors = {}
    try:
        card_kind = CardKind(kind)
        if card_kind is CardKind.INSPECTOR:
            raise ValueError(kind)
    except ValueError:
        errors["kind"] = f"kind {kind!r} is not control or badge"
        card_kind = None
    try:
        canonical = enrol_uid(uid, uid_form or None)
    except BadInput as exc:
        errors["uid"] = exc.reason
        canonical = None
    if canonical is not None:
        held = session.execute(select(cards.c.registration, cards.c.status)
                               .where(cards.c.uid == canonical)).first()
        if held is not None:
            errors["uid"] = f"card {canonical} already exists ({held.status}, held by {held.registration})"
    if card_kind is not None and "uid" not in errors:
        active = session.execute(select(cards.c.uid).where(
            cards.c.registration == registration, cards.c.kind == card_kind.value,
            cards.c.status == "active")).scalar()
        if active:
            errors["uid"] = (f"registration {registration} already has active {card_kind.value} card "
                             f"{active}: report it lost or replace it")
    if errors:
        raise FormRefused(errors)
    card = Card(uid=canonical, kind=card_kind, registration=registration, status=CardStatus.ACTIVE)
    save_card(session, card, event="issued", actor=actor, now=now, detail="office form")
    return card


def card_of(session: Session, registration: str, uid: str) -> Card:
    """The card ``uid`` if ``registration`` holds it; ``BadInput`` otherwise (a form of one
    worker's page never moves another's card)."""
    card = get_card(session, uid)
    if card.registration != registration:
        raise BadInput(f"card {uid} is not held by {registration}", where="uid")
    return card
