"""Registry operations: import, suspension and cancellation (R4), card lifecycle (G2).

Every function works inside the caller's transaction (``with session.begin():``) and, for each
state change, appends a change row for the gates and an audit row naming the actor. A function that
raises ``BadInput`` has written nothing the caller will commit: roll back and show the message.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from central import bounds
from central.registry import ids as worker_ids
from central.registry import worker_ports
from central.registry.changes import audit, body, record_change, utcnow
from central.registry.sanctions import TODAY, SuspensionLimits
from central.registry.schema import (
    booklet_revalidations,
    card_events,
    cards,
    health_exams,
    inspectors,
    penalties,
    workers,
)
from portgate import tables
from portgate.errors import BadInput
from portgate.records import (
    COLUMNS,
    Card,
    CardKind,
    CardStatus,
    Worker,
    WorkerIds,
    WorkerStatus,
    load_csv_parts,
)
from portgate.textfold import fold
from portgate.timeutil import PLAUSIBLE_FROM, PLAUSIBLE_UNTIL
from portgate.uid import canonical_uid


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


def worker_problems(worker: Worker) -> list[str]:
    """Why ``worker``'s fields do not fit the ``workers`` columns (``central.bounds``: a
    registration or category longer than 64 characters, a rotation number or booklet year outside
    a 32-bit whole number) or are not plausible (a health exam, suspension day or booklet year
    outside 2000..2100, ``portgate.timeutil.PLAUSIBLE_FROM``/``PLAUSIBLE_UNTIL``: a typo such as
    9999 would make the registration valid for ever, G3, and break the dates computed from it),
    one English reason each; empty when it fits."""
    problems = bounds.problems(workers, dataclasses.asdict(worker), COLUMNS[Worker])
    first, last = PLAUSIBLE_FROM.date(), PLAUSIBLE_UNTIL.date() - dt.timedelta(days=1)
    for name in ("health_exam_date", "suspended_from", "suspended_until"):
        day = getattr(worker, name)
        if day is not None and not first <= day <= last:
            problems.append(f"{name} {day.isoformat()!r} is outside {first}..{last}")
    year = worker.booklet_revalidated_year
    if year is not None and not first.year <= year <= last.year and not any("booklet" in p for p in problems):
        problems.append(f"booklet_revalidated_year {year} is outside {first.year}..{last.year}")
    return problems


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


def rotation_number_holder(session: Session, category: str, number: int | None,
                           registration: str) -> str | None:
    """The other worker of ``category``'s rotation list holding ``number`` (R1), or None."""
    if number is None:
        return None
    return session.execute(select(workers.c.registration).where(
        workers.c.category == category, workers.c.rotation_number == number,
        workers.c.registration != registration).limit(1)).scalar()


def import_files(session: Session, *, workers_csv: str | Path | None = None,
                 cards_csv: str | Path | None = None, actor: str,
                 now: dt.datetime | None = None, port: str | None = None,
                 ports: PortScope = PortScope()) -> dict[str, int]:
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
    what changed, ``{"workers": n, "cards": m, "unchanged": k}``: ``n`` workers new or different
    (a CPF or PIS given that the registry lacks or holds otherwise counts: ``central.registry.ids``)
    (each saved with its audit row and roster change), ``m`` cards issued, and ``k`` rows that
    restate a worker or card exactly as registered (nothing written for them: no audit row, no
    change sent to the gates). ``import_summary`` words it for the command line.

    The port (``central.registry.worker_ports``, 0029): a worker takes his row's ``port`` cell, else
    ``port`` (None: a registered worker keeps his, a new one is of the home port); ``ports`` says
    which ports the rows may name and, for a web user of some ports, that the file restates no
    worker of another port nor gives him a card (bad rows). A change of port alone counts as a
    worker changed (audited ``worker.port``; it moves him between the ports' rosters: ``set_port``).
    """
    now = now or utcnow()
    placed_workers, placed_cards, bad_rows, bad_regs = _parsed_files(workers_csv, cards_csv)
    new_workers = [w for _where, w in placed_workers]
    new_cards = [c for _where, c in placed_cards]
    known_before = set(session.execute(select(workers.c.registration)).scalars())  # registered already
    known = {w.registration for w in new_workers} | known_before | bad_regs
    registered = {c.uid: c for c in _cards_by_uid(session, [c.uid for c in new_cards])}
    errors = [f"{where}: {p}" for where, worker in placed_workers for p in worker_problems(worker)]
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
    errors += [f"{where}: {p}" for where, card in placed_cards
               for p in bounds.problems(cards, dataclasses.asdict(card), COLUMNS[Card])]
    seen: dict[str, str] = {}
    for where, card in placed_cards:
        if card.uid in seen:
            errors.append(f"{where}: uid {card.uid} repeats line {seen[card.uid].rsplit(':', 1)[1]}")
        seen[card.uid] = where
        if card.kind is not CardKind.INSPECTOR and card.registration not in known:
            errors.append(f"{where}: registration {card.registration!r} is not registered")
        refusal = import_refusal(registered[card.uid], card) if card.uid in registered else None
        if refusal:
            errors.append(f"{where}: {refusal}")
    errors += _second_active_cards(session, placed_cards, registered)
    errors += worker_ports.import_problems(
        session, workers_csv, [(w, c.registration) for w, c in placed_cards if c.kind is not CardKind.INSPECTOR],
        [w.registration for w in new_workers], allowed=ports.allowed, scope=ports.scope, served=ports.served)
    regs: dict[str, str] = {}
    for where, worker in placed_workers:
        if worker.registration in regs:
            errors.append(f"{where}: registration {worker.registration} "
                          f"repeats line {regs[worker.registration].rsplit(':', 1)[1]}")
        regs[worker.registration] = where
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
    if errors or bad_rows:
        raise BadInput("\n".join(_in_line_order(bad_rows + errors)))
    as_registered = {w.registration: w for w in _workers_by_registration(session, list(regs))}
    given = worker_ids.csv_ids(workers_csv) if workers_csv else {}  # CPF/PIS: the registry only
    stored = worker_ids.ids_of(session, given)
    renewed = {reg for reg, ids in given.items()
               if worker_ids.merged(stored.get(reg, WorkerIds()), ids) != stored.get(reg, WorkerIds())}
    same = [w for w in new_workers if as_registered.get(w.registration) == w and w.registration not in renewed]
    new_workers = [w for w in new_workers if as_registered.get(w.registration) != w or w.registration in renewed]
    for worker in new_workers:
        if as_registered.get(worker.registration) != worker:
            save_with_history(session, worker, actor=actor, now=now, action="worker.import")
        if worker.registration in given:
            worker_ids.set_ids(session, worker.registration, given[worker.registration], actor=actor, now=now)
    for card in new_cards:
        if card.uid in registered:
            continue  # the registered card as it is (import_refusal refused any difference)
        save_card(session, card, event="issued", actor=actor, now=now, detail="import")
        if card.kind is CardKind.INSPECTOR:
            _upsert(session, inspectors, {"registration": card.registration, "name": "",
                                          "active": 1, "updated_at": now}, "registration")
    issued = [c for c in new_cards if c.uid not in registered]
    moved = worker_ports.apply_import(session, workers_csv, port, actor=actor, now=now,
                                      served=ports.served) if workers_csv else set()
    moved_only = len({w.registration for w in same} & moved)
    return {"workers": len(new_workers) + moved_only, "cards": len(issued),
            "unchanged": len(same) - moved_only + len(new_cards) - len(issued)}


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


def suspend(session: Session, registration: str, *, start: dt.date, days: int, reason: str,
            article: str, actor: str, now: dt.datetime | None = None,
            case_id: int | None = None, limits: SuspensionLimits = TODAY) -> Worker:
    """Suspend ``registration`` for ``days`` days from ``start`` (inclusive) (R4): ``limits`` are the
    rulebook's (``central.registry.sanctions``: up to 30 days under 83.611 art. 21 a, 1-30 under
    DL 2.032 art. 30; by default today's 10-30 days, Lei 12.815 art. 33).

    The worker row gets status ``suspended`` with ``suspended_from``/``suspended_until`` so the
    gates' G3 applies it on those dates only, and the penalty goes on the registration record
    (art. 20 §3). ``BadInput`` if the worker is unknown or cancelled, ``days`` out of range, or the
    suspension would end after 9999-12-31.
    """
    now = now or utcnow()
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
    changed = dataclasses.replace(worker, status=WorkerStatus.SUSPENDED, suspended_from=start,
                                  suspended_until=until)
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


def list_workers(session: Session, category: str | None = None) -> list[Worker]:
    """Every worker (optionally of one category), by category then rotation number."""
    stmt = select(workers).order_by(workers.c.category, workers.c.rotation_number,
                                    workers.c.registration)
    if category:
        stmt = stmt.where(workers.c.category == category)
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
