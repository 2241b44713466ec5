"""The registry's CSV import (``import_files``: ``workers.csv`` and ``cards.csv``, all or
nothing): reading both files, checking every row against the files and the registry (columns,
repeats, R1 rotation places, R4 sanctions, the card lifecycle G2, ports) so one refusal names every
bad row, then writing what changed; ``import_summary`` words its counts. Imported through
``central.registry.store``.

It works inside the caller's transaction; the records are written by ``central.registry.rows``
(a change row for the gates and an audit row each).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from central import bounds
from central.registry import ids as worker_ids
from central.registry import import_checks, import_writes
from central.registry import worker_ports
from central.registry.changes import utcnow
from central.registry.rows import (CARD_TRANSITIONS, _upsert, card_from_row, save_card, save_with_history,
                                   worker_from_row)
from central.registry.schema import cards, inspectors, workers
from portgate import tables
from portgate.errors import BadInput
from portgate.records import COLUMNS, Card, CardKind, CardStatus, Worker, WorkerIds, WorkerStatus, load_csv_parts
from portgate.timeutil import PLAUSIBLE_FROM, PLAUSIBLE_UNTIL


# What an import says to use instead of moving an existing card (``import_refusal``): the event the
# import's status would be, and the command that makes that move with its checks and records.
CARD_COMMANDS: dict[str, str] = {
    "returned": "portgate registry return-card {uid} --decision TEXT",
    "lost": "portgate registry lost {uid}",
    "replaced": "portgate registry replace-card {uid} --new-uid NEW",
}
_EVENT_TO: dict[str, str] = {"active": "returned", "lost": "lost", "confiscated": "confiscated",
                             "replaced": "replaced"}


@dataclasses.dataclass(frozen=True, slots=True)
class PortScope:
    """What an import may do with ports (``import_files``): ``allowed`` the ports a ``port`` cell may
    name (empty: any port id); ``scope`` the importing web user's view (None: every port, as the
    command line); ``served`` the office's ports, home first (empty: not known, the command line
    without ``--config``)."""

    allowed: tuple[str, ...] = ()
    scope: tuple[str, ...] | None = None
    served: tuple[str, ...] = ()


def import_refusal(old: Card, new: Card) -> str | None:
    """Why an import row ``new`` may not overwrite the registered card ``old`` (same uid), or None.

    An import issues new cards and restates existing ones; it never moves a card through its
    lifecycle (``CARD_TRANSITIONS``: a confiscated card comes back only by ``return-card``, which
    closes its case; a replaced card never comes back), never gives a card to another registration
    and never changes its kind. ``new == old`` is None (a re-run import is a no-op). The reason
    names the card, its current status and the command to use."""
    if new == old:
        return None
    uid, status = old.uid, old.status.value
    if new.registration != old.registration:
        return (f"card {uid} is {status} and held by {old.registration}: an import does not move a "
                f"card to another registration (give {new.registration} a card with a new uid)")
    if new.kind != old.kind:
        return (f"card {uid} is {status} and a {old.kind.value} card: an import does not change a "
                f"card's kind (issue a card with a new uid)")
    event = _EVENT_TO[new.status.value]
    if status == "replaced":
        how = "a replaced card is never used again"
    elif event == "confiscated":
        how = "only a union inspector confiscates a card, at the gate (G10)"
    elif (status, event) not in CARD_TRANSITIONS:
        how = "not a card lifecycle move (docs/office.md)"
    else:
        how = "use `" + CARD_COMMANDS[event].format(uid=uid) + "`"
        if status == "confiscated":
            how += " (it closes the card's open case)"
    return f"card {uid} is {status}: an import does not make it {new.status.value}; {how}"


def sanction_refusal(old: Worker, new: Worker) -> str | None:
    """Why an import row ``new`` may not overwrite the registered worker ``old`` (same
    registration), or None: an import never lifts, changes or imposes an R4 sanction (83.611 arts.
    20 §3, 21). A cancelled worker stays cancelled (a cancellation is final); a suspension
    (status ``suspended`` or its dates) must be restated exactly, and a row cannot suspend or
    cancel a worker the registry holds without one: the penalty goes on the registration record
    only through ``registry suspend``/``registry cancel`` (or a case's decision), and the worker's
    edit page changes it with an audit entry. The other fields are the import's to change."""
    def sanction(w: Worker) -> tuple:
        return w.status, w.suspended_from, w.suspended_until

    if sanction(new) == sanction(old):
        return None
    reg = old.registration
    if old.status is WorkerStatus.CANCELLED:
        return (f"registration {reg} is cancelled (R4): an import does not reinstate a worker "
                f"(a cancellation is final, 83.611 art. 21 b)")
    if old.status is WorkerStatus.SUSPENDED or old.suspended_from is not None:
        span = f"{old.suspended_from or '?'}..{old.suspended_until or '?'}"
        return (f"registration {reg} is suspended {span} (R4): an import does not change a suspension "
                f"(it ends on its own date, and the worker's edit page changes it with an audit entry)")
    verb = "cancel" if new.status is WorkerStatus.CANCELLED else "suspend"
    return (f"registration {reg} is {old.status.value}: an import does not {verb} a worker "
            f"(use `portgate registry {verb}`: the penalty goes on the registration record, R4)")


FORMULA_LEADS = import_checks.FORMULA_LEADS  # a name starting with one: ``worker_problems`` refuses it


def worker_problems(worker: Worker) -> list[str]:
    """Why ``worker``'s fields do not fit the ``workers`` columns (``central.bounds``: a
    registration or category longer than 64 characters, a rotation number or booklet year outside
    a 32-bit whole number) or are not plausible (a health exam, suspension day or booklet year
    outside 2000..2100, ``portgate.timeutil.PLAUSIBLE_FROM``/``PLAUSIBLE_UNTIL``: a typo such as
    9999 would make the registration valid for ever, G3, and break the dates computed from it),
    or a name or registration starting with a formula character or a registration of other characters
    than letters, digits, ``-./`` (``import_checks.text_problems``; the exports escape such cells too,
    ``portgate.tables``), one English reason each; empty when it fits."""
    problems = bounds.problems(workers, dataclasses.asdict(worker), COLUMNS[Worker])
    first, last = PLAUSIBLE_FROM.date(), PLAUSIBLE_UNTIL.date() - dt.timedelta(days=1)
    for name in ("health_exam_date", "suspended_from", "suspended_until"):
        day = getattr(worker, name)
        if day is not None and not first <= day <= last:
            problems.append(f"{name} {day.isoformat()!r} is outside {first}..{last}")
    problems += import_checks.text_problems(worker.registration, worker.name)  # formula leads, odd characters
    year = worker.booklet_revalidated_year
    if year is not None and not first.year <= year <= last.year:  # the plausible years, not the column's range
        problems = [p for p in problems if not p.startswith("booklet_revalidated_year ")]
        problems.append(f"booklet_revalidated_year {year} is outside {first.year}..{last.year}")
    return problems


def _cards_by_uid(session: Session, uids: list[str]) -> list[Card]:
    """The registered cards among ``uids`` (queried in chunks, under SQLite's parameter limit)."""
    found: list[Card] = []
    for i in range(0, len(uids), 500):
        found += [card_from_row(r) for r in session.execute(
            select(cards).where(cards.c.uid.in_(uids[i:i + 500])))]
    return found


def _workers_by_registration(session: Session, registrations: list[str]) -> list[Worker]:
    """The registered workers among ``registrations`` (queried in chunks, as ``_cards_by_uid``)."""
    found: list[Worker] = []
    for i in range(0, len(registrations), 500):
        found += [worker_from_row(r) for r in session.execute(
            select(workers).where(workers.c.registration.in_(registrations[i:i + 500])))]
    return found


def _second_active_cards(session: Session, placed: list[tuple[str, Card]],
                        registered: dict[str, Card]) -> list[str]:
    """The ``file:line`` errors of new active cards whose holder already has an active card of
    that kind (registered or on an earlier line): one active card per holder and kind, a new
    one comes by ``replace-card``, which retires the old one."""
    fresh = [(w, c) for w, c in placed if c.uid not in registered and c.status is CardStatus.ACTIVE]
    if not fresh:
        return []
    regs = sorted({c.registration for _w, c in fresh})
    active: dict[tuple[str, str], str] = {}
    for i in range(0, len(regs), 500):
        for r in session.execute(select(cards.c.uid, cards.c.kind, cards.c.registration).where(
                cards.c.registration.in_(regs[i:i + 500]), cards.c.status == "active")):
            active.setdefault((r.registration, r.kind), r.uid)
    errors = []
    for where, card in fresh:
        other = active.setdefault((card.registration, card.kind.value), card.uid)
        if other != card.uid:
            errors.append(f"{where}: registration {card.registration} already has active "
                          f"{card.kind.value} card {other}; use `portgate registry replace-card "
                          f"{other} --new-uid {card.uid}`")
    return errors


def import_files(session: Session, *, workers_csv: str | Path | None = None,
                 cards_csv: str | Path | None = None, actor: str,
                 now: dt.datetime | None = None, port: str | None = None,
                 ports: PortScope = PortScope(), new_categories: tuple[str, ...] = ()) -> dict[str, int]:
    """Import ``workers.csv`` and/or ``cards.csv`` (DESIGN.md columns), all or nothing.

    Every row of both files is validated first (``load_csv_parts`` names each bad row ``file:line``;
    a value that does not fit its column, ``central.bounds``, is a bad row too), and the rows that
    parse are checked further even when others do not, so one refusal names every bad row of both
    files, in line order, each once (a card row naming a worker whose own row is bad is not
    called unregistered for it);
    a card whose registration is neither in the file nor already registered is a bad row too
    (inspector cards create an inspector), and so is a ``rotation_number`` already held by another
    worker of the same category (in the file or the registry: one place per rotation list, R1).
    A row naming a registered card must restate it exactly (kept as it is, no card event): a
    different status, holder or kind is a bad row (``import_refusal``: the lifecycle moves go
    through ``lost``, ``return-card``, ``replace-card``), and so is a new active card whose
    holder already has an active card of its kind (``replace-card`` issues it). Raises
    ``BadInput`` listing every bad row; the caller rolls back so nothing is half-imported. Returns
    what changed, ``{"workers": n, "cards": m, "unchanged": k}``: ``n`` workers new or different (a CPF
    or PIS the registry lacks or holds otherwise counts; each saved with its audit row and roster change),
    ``m`` cards issued, ``k`` rows restating a worker or card as registered (nothing written for them).
    A category neither known nor registered nor in ``new_categories`` is a bad row; a new name no
    cell could hold is refused first (``import_checks``: ``new_category_names`` reads them as cells).
    The port (``central.registry.worker_ports``, 0029): a worker takes his row's ``port`` cell, else
    ``port`` (None: a registered worker keeps his, a new one is of the home port); ``ports`` says
    which ports the rows may name and, for a web user of some ports, that the file restates no
    worker of another port nor gives him a card (bad rows). A change of port alone counts as a
    worker changed (audited ``worker.port``; it moves him between the ports' rosters: ``set_port``); a
    row restating a worker and giving no port leaves his port, NULL included (``apply_import``)."""
    now = now or utcnow()
    new_categories = import_checks.new_category_names(new_categories)  # raises BadInput
    placed_workers, placed_cards, bad_rows, bad_regs = _parsed_files(workers_csv, cards_csv)
    new_workers = [w for _where, w in placed_workers]
    new_cards = [c for _where, c in placed_cards]
    errors, regs, registered = _import_errors(session, workers_csv, placed_workers, placed_cards, bad_regs, ports,
                                              new_categories)
    if errors or bad_rows:
        raise BadInput("\n".join(_in_line_order(bad_rows + errors)))
    before = set(worker_ports.stored_ports(session, regs))  # registered before: a port given him is audited
    changed, same = _save_workers(session, workers_csv, new_workers, list(regs), actor=actor, now=now)
    issued = _issue_cards(session, new_cards, registered, actor=actor, now=now)
    moved = worker_ports.apply_import(session, workers_csv, port, actor=actor, now=now, served=ports.served, restated={
        w.registration for w in same}, fresh=set(regs) - before) if workers_csv else set()
    moved_only = len({w.registration for w in same} & moved)
    return {"workers": len(changed) + moved_only, "cards": len(issued),
            "unchanged": len(same) - moved_only + len(new_cards) - len(issued)}


def _import_errors(session: Session, workers_csv, placed_workers: list, placed_cards: list, bad_regs: set[str],
                   ports: PortScope, new_categories=()) -> tuple[list[str], dict[str, str], dict[str, Card]]:
    """``import_files``'s checks of the rows that parse, in the order it reports them: ``(errors,
    regs, registered)``, the ``file:line: reason`` errors, the file's registrations (registration
    -> its first row's ``file:line``) and the registered cards the cards file names (by uid)."""
    new_workers = [w for _where, w in placed_workers]
    new_cards = [c for _where, c in placed_cards]
    known_before = set(session.execute(select(workers.c.registration)).scalars())  # registered already
    known = {w.registration for w in new_workers} | known_before | bad_regs
    registered = {c.uid: c for c in _cards_by_uid(session, [c.uid for c in new_cards])}
    errors = [f"{where}: {p}" for where, worker in placed_workers for p in worker_problems(worker)]
    errors += _sanction_errors(session, placed_workers, known_before)
    errors += _card_errors(placed_cards, known, registered, worker_ports.foreign_holders(
        session, [c.registration for c in registered.values()], scope=ports.scope, served=ports.served))
    errors += _second_active_cards(session, placed_cards, registered)
    errors += worker_ports.import_problems(
        session, workers_csv, [(w, c.registration) for w, c in placed_cards if c.kind is not CardKind.INSPECTOR],
        [w.registration for w in new_workers], allowed=ports.allowed, scope=ports.scope, served=ports.served)
    repeated, regs = _repeated_registrations(placed_workers)
    errors += repeated
    errors += import_checks.case_errors(placed_workers, known_before)
    errors += import_checks.rotation_errors(session, placed_workers, regs)
    errors += import_checks.category_errors(session, placed_workers, new_categories)
    errors += import_checks.id_errors(session, workers_csv, placed_workers)
    return errors, regs, registered


def _sanction_errors(session: Session, placed_workers: list, known_before: set[str]) -> list[str]:
    """The rows that would lift, change or impose an R4 sanction (``sanction_refusal``): an import
    never does. ``known_before``: the registrations registered before the import."""
    errors = []
    held = {w.registration: w for w in (worker_from_row(r) for r in session.execute(select(workers).where(
        (workers.c.status != WorkerStatus.ACTIVE.value) | workers.c.suspended_from.is_not(None))))}
    for where, worker in placed_workers:  # R4: sanctions are never lifted or imposed by an import
        old = held.get(worker.registration)
        if old is None and worker.registration in known_before and (
                worker.status is not WorkerStatus.ACTIVE or worker.suspended_from is not None):
            old = dataclasses.replace(worker, status=WorkerStatus.ACTIVE, suspended_from=None,
                                      suspended_until=None)
        refusal = sanction_refusal(old, worker) if old is not None else None
        if refusal:
            errors.append(f"{where}: {refusal}")
    return errors


def _card_errors(placed_cards: list, known: set[str], registered: dict[str, Card],
                 foreign: set[str] = frozenset()) -> list[str]:
    """The card rows that do not fit their columns, repeat a uid, name a registration neither in the
    file nor ``known``, or would change a ``registered`` card (``import_refusal``; a holder in
    ``foreign``, of a port outside the user's view, is not named: ``worker_ports.other_port_card``)."""
    errors = [f"{where}: {p}" for where, card in placed_cards
              for p in bounds.problems(cards, dataclasses.asdict(card), COLUMNS[Card])]
    seen: dict[str, str] = {}
    for where, card in placed_cards:
        if card.uid in seen:
            errors.append(f"{where}: uid {card.uid} repeats line {seen[card.uid].rsplit(':', 1)[1]}")
        seen[card.uid] = where
        if card.kind is not CardKind.INSPECTOR and card.registration not in known:
            errors.append(f"{where}: registration {card.registration!r} is not registered")
        held = registered.get(card.uid)
        refusal = import_refusal(held, card) if held is not None else None
        if refusal and held.registration in foreign:
            refusal = worker_ports.other_port_card(card.uid, card.registration)
        if refusal:
            errors.append(f"{where}: {refusal}")
    return errors


def _repeated_registrations(placed_workers: list) -> tuple[list[str], dict[str, str]]:
    """``(errors, regs)``: the worker rows repeating an earlier row's registration, and each
    registration of the file -> its first row's ``file:line``."""
    errors = []
    regs: dict[str, str] = {}
    for where, worker in placed_workers:
        if worker.registration in regs:
            errors.append(f"{where}: registration {worker.registration} "
                          f"repeats line {regs[worker.registration].rsplit(':', 1)[1]}")
        regs[worker.registration] = where
    return errors, regs


def _save_workers(session: Session, workers_csv, new_workers: list[Worker], registrations: list[str], *,
                  actor: str, now: dt.datetime) -> tuple[list[Worker], list[Worker]]:
    """Save the checked workers that are new or different (``save_with_history``; a CPF or PIS the
    registry lacks or holds otherwise makes a worker different: ``central.registry.ids``, written
    with ``set_ids``; the new workers in batches, ``import_writes.insert_new_workers``). Returns ``(changed, same)``: the workers saved and the rows restating a
    worker exactly as registered (nothing written)."""
    as_registered = {w.registration: w for w in _workers_by_registration(session, registrations)}
    given = worker_ids.csv_ids(workers_csv) if workers_csv else {}  # CPF/PIS: the registry only
    stored = worker_ids.ids_of(session, given)
    renewed = {reg for reg, ids in given.items()
               if worker_ids.merged(stored.get(reg, WorkerIds()), ids) != stored.get(reg, WorkerIds())}
    same = [w for w in new_workers if as_registered.get(w.registration) == w and w.registration not in renewed]
    changed = [w for w in new_workers if as_registered.get(w.registration) != w or w.registration in renewed]
    fresh = [w for w in changed if w.registration not in as_registered]  # new workers: written in batches
    worker_ids.release(session, stored, given)  # a number moving to another row: unique (0038)
    import_writes.insert_new_workers(session, fresh, given, actor=actor, now=now)
    for worker in (w for w in changed if w.registration in as_registered):
        reg = worker.registration
        if as_registered.get(reg) != worker:
            save_with_history(session, worker, actor=actor, now=now, action="worker.import")
        if reg in given:
            worker_ids.set_ids(session, reg, given[reg], actor=actor, now=now, old=stored.get(reg, WorkerIds()))
    return changed, same


def _issue_cards(session: Session, new_cards: list[Card], registered: dict[str, Card], *, actor: str,
                 now: dt.datetime) -> list[Card]:
    """Issue the checked cards not ``registered`` yet (an inspector card also makes its inspector);
    the registered ones stay as they are (``import_refusal`` refused any difference). Returns the
    cards issued."""
    for card in new_cards:
        if card.uid in registered:
            continue  # the registered card as it is (import_refusal refused any difference)
        save_card(session, card, event="issued", actor=actor, now=now, detail="import")
        if card.kind is CardKind.INSPECTOR:
            _upsert(session, inspectors, {"registration": card.registration, "name": "",
                                          "active": 1, "updated_at": now}, "registration")
    return [c for c in new_cards if c.uid not in registered]


def _parsed_files(workers_csv, cards_csv) -> tuple[list, list, list[str], set[str]]:
    """``import_files``'s two files read: the good rows of each (``(where, record)``), every row
    that does not parse (``file:line: reason``) and the registrations the workers file's bad rows
    name (a card of such a worker is not called unregistered: his own row's error says what is
    wrong). ``BadInput`` naming a file that cannot be read at all (missing, a bad header), with
    the other file's bad rows."""
    unreadable: list[str] = []

    def parts(path, record) -> tuple[list, list[str]]:
        if not path:
            return [], []
        try:
            return load_csv_parts(path, record)
        except BadInput as exc:
            unreadable.append(str(exc))
            return [], []

    (placed_workers, bad_workers), (placed_cards, bad_cards) = parts(workers_csv, Worker), parts(cards_csv, Card)
    if unreadable:
        raise BadInput("\n".join(unreadable + bad_workers + bad_cards))
    bad_regs = {(row.get("registration") or "").strip() for _where, row in tables.read_rows(workers_csv)} \
        if bad_workers else set()
    return placed_workers, placed_cards, bad_workers + bad_cards, bad_regs


def _in_line_order(errors: list[str]) -> list[str]:
    """``file.csv:LINE: reason`` errors each once, by file (in the order the files first appear)
    then line; an error naming no line keeps its place at the head of its file's."""
    files: dict[str, int] = {}
    keyed = {}
    for error in errors:
        head = error.split(": ", 1)[0]
        name, _sep, line = head.rpartition(":")
        name, line = (name, int(line)) if line.isdigit() else (head, 0)
        keyed.setdefault(error, (files.setdefault(name, len(files)), line))
    return sorted(keyed, key=keyed.__getitem__)


def import_summary(counts: dict[str, int]) -> str:
    """``import_files``'s counts as the command line reports them, in its language
    (``portgate.clitext``): ``imported 2 worker(s), 1 card(s); 3 row(s) unchanged``, or ``nothing
    changed: 4 row(s) already registered as given`` when no row changed anything."""
    from portgate.clitext import tr  # lazy: only the command line words the counts

    unchanged = counts.get("unchanged", 0)
    if not counts.get("workers") and not counts.get("cards"):
        return tr("cli.registry.nothing_changed", n=unchanged)
    tail = tr("cli.registry.rows_unchanged", n=unchanged) if unchanged else ""
    return tr("cli.registry.imported", workers=counts["workers"], cards=counts["cards"], tail=tail)
