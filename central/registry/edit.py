"""A worker's record edited by hand (the office's form): the same validation as a ``workers.csv``
row (``portgate.records.Worker.from_row``), one audit row naming every field changed, a roster
change for the gates (G3), and the history tables for a new health exam or booklet year."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping

from sqlalchemy.orm import Session

from central.registry.schema import booklet_revalidations, health_exams
from central.registry.enrol import FormRefused, ids_problems, save_ids, worker_row_errors
from central.registry.store import get_worker, rotation_number_holder, save_worker
from portgate.errors import BadInput
from portgate.records import Worker, WorkerIds

EDITABLE = ("name", "category", "status", "suspended_from", "suspended_until", "health_exam_date",
            "booklet_revalidated_year", "rotation_number", "cpf", "pis")
WORKER_FIELDS = EDITABLE[:-2]  # the ``Worker`` record's; cpf and pis are ``central.registry.ids``


def _text(value) -> str:
    if value is None:
        return ""
    return value.value if hasattr(value, "value") else str(value)


def edit_worker(session: Session, registration: str, row: Mapping[str, str], *, actor: str,
                now: dt.datetime) -> tuple[Worker, dict[str, list[str]]]:
    """Apply the form ``row`` (``EDITABLE`` columns, workers.csv text) to ``registration``.

    Returns the saved worker and ``{field: [old, new]}`` (empty: nothing changed, nothing written).
    Raises ``FormRefused`` (a ``BadInput``) naming each bad field and its reason (as the CSV import
    checks a row, sizes and ranges of the ``workers`` columns included; a rotation number another
    worker of the category holds; a CPF or PIS another registration holds, the import's rule:
    ``enrol.ids_problems``, ``enrol.save_ids``), or ``BadInput`` for an unknown worker; nothing is written then."""
    old = get_worker(session, registration)
    cells = {k: _text(getattr(old, k)) for k in WORKER_FIELDS}
    cells.update({k: str(v).strip() for k, v in row.items() if k in EDITABLE})
    full = {"registration": registration, **cells}
    errors = worker_row_errors(full) | ids_problems(session, registration, full)
    if errors:
        raise FormRefused({k: errors[k] for k in EDITABLE if k in errors})
    new = Worker.from_row(full)
    ids = WorkerIds.from_row(full)
    changed = {f.name: [_text(getattr(old, f.name)), _text(getattr(new, f.name))]
               for f in dataclasses.fields(Worker) if getattr(old, f.name) != getattr(new, f.name)}
    if not changed:
        if ids != WorkerIds() and actor:
            return old, save_ids(session, registration, ids, actor=actor, now=now)
        return old, {}
    if not actor:
        raise BadInput("actor is required (who makes the change)")
    if "rotation_number" in changed or "category" in changed:
        other = rotation_number_holder(session, new.category, new.rotation_number, registration)
        if other:
            raise FormRefused({"rotation_number": f"rotation_number {new.rotation_number} is already held by "
                                                  f"{other} ({new.category})"})
    save_worker(session, new, actor=actor, now=now, action="worker.edit", detail={"changed": changed})
    changed |= save_ids(session, registration, ids, actor=actor, now=now)
    if "health_exam_date" in changed and new.health_exam_date:
        session.execute(health_exams.insert().values(registration=registration,
                                                     exam_date=new.health_exam_date, recorded_at=now,
                                                     actor=actor))
    if "booklet_revalidated_year" in changed and new.booklet_revalidated_year:
        session.execute(booklet_revalidations.insert().values(
            registration=registration, year=new.booklet_revalidated_year, recorded_at=now, actor=actor))
    return new, changed
