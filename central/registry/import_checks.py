"""The registry import's checks of who a worker is (``central.registry.csv_import``): a category
the registry knows (a typo would open a new rotation list, R1), a rotation number no other worker
of the category holds (R1), a CPF or PIS/NIS no other registration holds, a name and a registration
a spreadsheet would not run as a formula, and a registration that is not another one in other
letter case (the add-worker form checks the same, ``central.registry.enrol``). Each returns ``file:line: reason`` errors in English (``central.web.service_codes``
words them in pt-BR)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from central.registry import ids as worker_ids
from central.registry.schema import workers
from portgate import cells, tables
from portgate.errors import BadInput
from portgate.records import WorkerIds
from portgate.registration import FORMULA_LEADS, case_clashes, registration_problem


#: At most this many new categories one import may open (``--new-category``, the upload's field).
MAX_NEW_CATEGORIES = 20
#: A refusal lists at most this many allowed categories ("and N more" for the others).
LISTED_CATEGORIES = 12


def new_category_names(names) -> tuple[str, ...]:
    """The categories an import may open (the command's ``--new-category``, the upload's "Novas
    categorias"), each read as a ``category`` cell is (``portgate.cells.term``: trimmed, inner
    blanks collapsed, lower-cased: ``' Arrumador '`` is ``arrumador``), blanks dropped, repeats once.
    Raises ``BadInput`` naming every name refused: more than ``MAX_NEW_CATEGORIES``, longer than the
    ``workers.category`` column, holding a comma (the upload's field separates names by commas, so
    neither way opens one), starting with a formula character (``FORMULA_LEADS``, as a worker's name)
    or holding a control character. The caller fixes the names; nothing was read."""
    given = [n.strip() for n in names if n and n.strip()]
    if len(given) > MAX_NEW_CATEGORIES:
        raise BadInput(f"at most {MAX_NEW_CATEGORIES} new categories, not {len(given)}")
    longest, problems, found = workers.c.category.type.length, [], []
    for name in given:
        shown = repr(name[:longest])
        if len(name) > longest:
            problems.append(f"new category {shown} is longer than {longest} characters")
        elif "," in name:
            problems.append(f"new category {shown} contains a comma (one name per category)")
        elif name[:1] in FORMULA_LEADS:
            problems.append(f"new category {shown} starts with {name[:1]!r}: not a category "
                            f"(a spreadsheet would run it as a formula)")
        else:
            try:
                found.append(cells.term(name, "category"))
            except BadInput as exc:
                problems.append(str(exc))
    if problems:
        raise BadInput("\n".join(problems))
    return tuple(dict.fromkeys(found))


def category_errors(session: Session, placed_workers: list, new: tuple[str, ...] = ()) -> list[str]:
    """The worker rows whose category is neither a known one nor already registered
    (``central.registry.enrol.categories``, the categories the add form offers): a typo such as
    ``astronaut`` would silently open a new rotation list (R1). The first such row lists the allowed
    ones, in the add form's words (``enrol.add_worker``), at most ``LISTED_CATEGORIES`` of them ("and
    N more"); the later rows point to it, so the refusal stays short whatever the rows and lists.
    ``new``: the categories this import may open (``new_category_names``: the command's
    ``--new-category``, a port's own list, such as ``arrumador``). A category too long for its column
    is left to ``csv_import.worker_problems``, which names it once."""
    from central.registry.enrol import categories  # lazy: enrol imports store, which imports csv_import and this module

    allowed, longest = sorted(set(categories(session)) | set(new)), workers.c.category.type.length
    known = set(allowed)
    bad = [(where, worker.category) for where, worker in placed_workers
           if worker.category not in known and len(worker.category) <= longest]  # longer: worker_problems
    if not bad:
        return []
    more = len(allowed) - LISTED_CATEGORIES
    listed = ", ".join(allowed[:LISTED_CATEGORIES]) + (f" and {more} more" if more > 0 else "")
    first = bad[0][0]
    return [f"{where}: category {category!r} is not one of "
            + (listed if where == first else f"the categories listed at {first}")
            for where, category in bad]


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


def text_problems(registration: str, name: str) -> list[str]:
    """A worker's ``registration`` and ``name`` that are no such thing, one English reason each: a
    name or registration starting with a formula character (``FORMULA_LEADS``: ``=cmd|calc`` is no
    person's name, ``=HYPERLINK("x")`` no registration; a spreadsheet would run it), a registration
    holding a character ``REGISTRATION`` does not allow (a space, a control character, ``#``: the
    first such character is named). An empty registration is left to ``required``."""
    problems = [p for p in (registration_problem(registration),) if p is not None]  # portgate.registration
    if name[:1] in FORMULA_LEADS:
        problems.append(f"name {name!r} starts with {name[:1]!r}: not a person's name "
                        f"(a spreadsheet would run it as a formula)")
    return problems


def case_errors(placed_workers: list, registered: set[str]) -> list[str]:
    """The worker rows whose registration differs only in letter case from a ``registered`` one (the
    registry's registrations; a row restating one of them exactly passes) or from an earlier row's
    (a row repeating one exactly is ``csv_import``'s ``repeats line``)."""
    return case_clashes([(where, worker.registration) for where, worker in placed_workers], registered)
