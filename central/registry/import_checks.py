"""The registry import's checks of who a worker is (``central.registry.csv_import``): a category
the registry knows (a typo would open a new rotation list, R1), a rotation number no other worker
of the category holds (R1) and a CPF or PIS/NIS no other registration holds. Each returns ``file:line: reason`` errors in English (``central.web.service_codes``
words them in pt-BR)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from central.registry import ids as worker_ids
from central.registry.schema import workers
from portgate import tables
from portgate.records import WorkerIds


def category_errors(session: Session, placed_workers: list, new: tuple[str, ...] = ()) -> list[str]:
    """The worker rows whose category is neither a known one nor already registered
    (``central.registry.enrol.categories``, the categories the add form offers): a typo such as
    ``astronaut`` would silently open a new rotation list (R1). The reason lists the allowed ones, in
    the add form's words (``enrol.add_worker``). ``new``: the categories this import may open (the
    command's ``--new-category``: a port's own list, such as ``arrumador``). A category too long for its column is left to
    ``csv_import.worker_problems``, which names it once."""
    from central.registry.enrol import categories  # lazy: enrol imports store, which imports csv_import and this module

    allowed, longest = sorted(set(categories(session)) | set(new)), workers.c.category.type.length
    return [f"{where}: category {worker.category!r} is not one of {', '.join(allowed)}"
            for where, worker in placed_workers
            if worker.category not in allowed and len(worker.category) <= longest]  # longer: worker_problems


def id_errors(session: Session, workers_csv, placed_workers: list) -> list[str]:
    """The worker rows giving a CPF or PIS another registration holds, in the registry or on an
    earlier line (``central.registry.ids.clashes``: a CPF names one person, Lei 14.534/2023 art. 1
    making it the single and sufficient number identifying a citizen in public services' databases;
    one PIS/NIS per worker, Decreto 97.936/1989, the Cadastro Nacional do Trabalhador)."""
    if not workers_csv:
        return []
    good = {where for where, _worker in placed_workers}
    given = [(where, (row.get("registration") or "").strip(), WorkerIds.from_row(row))
             for where, row in tables.read_rows(workers_csv) if where in good]
    return worker_ids.clashes(session, [g for g in given if g[2] != WorkerIds()])


def rotation_errors(session: Session, placed_workers: list, regs: dict[str, str]) -> list[str]:
    """The worker rows whose ``rotation_number`` another worker of the same category holds, in the
    file or in the registry (one place per rotation list, R1); ``regs``: the file's registrations."""
    errors = []
    taken = {(r.category, r.rotation_number): r.registration for r in session.execute(
        select(workers.c.registration, workers.c.category, workers.c.rotation_number).where(
            workers.c.rotation_number.is_not(None))) if r.registration not in regs}
    for where, worker in placed_workers:
        if worker.rotation_number is None:
            continue
        other = taken.setdefault((worker.category, worker.rotation_number), worker.registration)
        if other != worker.registration:
            errors.append(f"{where}: rotation_number {worker.rotation_number} is already held by "
                          f"{other} ({worker.category})")
    return errors
