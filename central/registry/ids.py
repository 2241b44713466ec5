"""A worker's payroll identifiers (CPF, PIS/NIS) in the registry: read, written with an audit row,
and taken from a ``workers.csv``. They live in the ``workers`` table (0022) but not in
``portgate.records.Worker``, so they never reach the gates' roster nor its change feed.

An import or form that leaves a column empty keeps what the registry holds (a file without the
columns does not erase them); a value given replaces it, audited (``worker.ids``).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterable
from pathlib import Path

from sqlalchemy import select, update
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from central.registry.changes import audit
from central.registry.schema import workers
from portgate import tables
from portgate.records import WorkerIds

FIELDS = ("cpf", "pis")


def ids_of(conn: Connection | Session, registrations: Iterable[str]) -> dict[str, WorkerIds]:
    """``{registration: WorkerIds}`` of the registered workers among ``registrations`` (chunks of
    500, under SQLite's parameter limit); a worker without either has ``WorkerIds()``."""
    regs = list(dict.fromkeys(registrations))
    out: dict[str, WorkerIds] = {}
    for i in range(0, len(regs), 500):
        for reg, cpf, pis in conn.execute(select(workers.c.registration, workers.c.cpf, workers.c.pis)
                                          .where(workers.c.registration.in_(regs[i:i + 500]))):
            out[reg] = WorkerIds(cpf, pis)
    return out


def merged(old: WorkerIds, new: WorkerIds) -> WorkerIds:
    """``new`` over ``old``: a field ``new`` leaves None keeps ``old``'s."""
    return WorkerIds(*(getattr(new, f) or getattr(old, f) for f in FIELDS))


def set_ids(session: Session, registration: str, ids: WorkerIds, *, actor: str, now: dt.datetime,
            old: WorkerIds | None = None) -> dict:
    """Give ``registration`` the identifiers ``ids`` (a None field keeps the stored one). Returns
    ``{field: [old, new]}`` of what changed (empty: nothing written); writes them with one
    ``worker.ids`` audit row otherwise. The worker must exist (the caller saved it first).
    ``old``: what he held before a ``release`` of this transaction (default: what is stored).
    ``IntegrityError`` if another registration holds one of them (the unique indexes of 0038: a
    writer that committed it after the caller's ``form_clashes``)."""
    if old is None:
        old = ids_of(session, [registration]).get(registration, WorkerIds())
    new = merged(old, ids)
    changed = {f: [getattr(old, f) or "", getattr(new, f) or ""] for f in FIELDS if getattr(old, f) != getattr(new, f)}
    if changed:
        session.execute(update(workers).where(workers.c.registration == registration)
                        .values(**dataclasses.asdict(new)))
        audit(session, actor=actor, action="worker.ids", subject=registration, detail={"changed": changed}, now=now)
    return changed


def _held(conn: Connection | Session, given: list[tuple[str, str, WorkerIds]]):
    """``(where, field, value, other)`` of each identifier of ``given`` rows ``(where, registration,
    ids)`` that ``other``, another registration, holds in the registry (one not giving that field
    anew in ``given``) or gave on an earlier row. Queried in chunks of 500 (SQLite's parameter
    limit), by the unique indexes of 0038."""
    for field in FIELDS:
        rows = [(where, reg, getattr(ids, field)) for where, reg, ids in given if getattr(ids, field)]
        regiving = {reg for _where, reg, _value in rows}
        values = sorted({value for _where, _reg, value in rows})
        taken: dict[str, str] = {}
        column = workers.c[field]
        for i in range(0, len(values), 500):
            for reg, value in conn.execute(select(workers.c.registration, column)
                                           .where(column.in_(values[i:i + 500]))):
                if reg not in regiving:
                    taken.setdefault(value, reg)
        for where, reg, value in rows:
            other = taken.setdefault(value, reg)
            if other != reg:
                yield where, field, value, other


def clashes(conn: Connection | Session, given: list[tuple[str, str, WorkerIds]]) -> list[str]:
    """The ``where: cpf X is already held by R`` (and ``pis``) errors of ``given`` rows ``(where,
    registration, ids)``: an identifier another registration holds in the registry (one not
    giving that field anew in ``given``) or gave on an earlier row. A CPF and a PIS/NIS name one
    person each (the CPF: Lei 14.534/2023 art. 1 makes it the single and sufficient number
    identifying a citizen in public services' databases; the PIS/NIS: Decreto 97.936/1989, the
    Cadastro Nacional do Trabalhador): two registrations with one is a typo or a double
    registration (and one person on two registrations could be dispatched to two ships, G5).
    The registry import, the add-worker form and the edit form all ask this (``form_clashes``)."""
    return [f"{where}: {field} {value} is already held by {other}"
            for where, field, value, other in _held(conn, given)]


def form_clashes(conn: Connection | Session, registration: str, ids: WorkerIds) -> dict[str, str]:
    """``{field: "cpf X is already held by R"}`` for each of ``ids`` another registration than
    ``registration`` holds (``clashes``' rule, for one worker of a form: the field's reason beside
    it); empty: none."""
    return {field: f"{field} {value} is already held by {other}"
            for _where, field, value, other in _held(conn, [("form", registration, ids)])}


def release(session: Session, stored: dict[str, WorkerIds], given: dict[str, WorkerIds]) -> None:
    """Empty the stored identifiers ``given`` replaces (``{registration: WorkerIds}`` each): an
    import may move a number from one worker to another (one worker's own row gives him a new one,
    another row the old one), which the unique indexes of 0038 refuse while both are stored. The
    caller writes the new ones next (``set_ids`` with ``stored`` as what was there, for the
    audit), in the same transaction."""
    for field in FIELDS:
        regs = [reg for reg, ids in given.items() if getattr(ids, field) and getattr(stored.get(reg, WorkerIds()), field)
                and getattr(ids, field) != getattr(stored[reg], field)]
        for i in range(0, len(regs), 500):
            session.execute(update(workers).where(workers.c.registration.in_(regs[i:i + 500])).values({field: None}))


def csv_ids(path: str | Path) -> dict[str, WorkerIds]:
    """``{registration: WorkerIds}`` of a workers.csv whose rows ``load_csv_rows(path, Worker)``
    has already accepted (so each cell is known good), for the rows giving a CPF or PIS."""
    out: dict[str, WorkerIds] = {}
    for _where, row in tables.read_rows(path):
        ids = WorkerIds.from_row(row)
        if ids != WorkerIds():
            out[(row.get("registration") or "").strip()] = ids
    return out
