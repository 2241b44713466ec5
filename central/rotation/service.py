"""The rotation against the database: dispatch a day, refusals (R3), late substitutions, export
(R5), monthly fairness. Each function runs inside the caller's transaction and publishes every escala
change as a change row (the MQTT downlink sends it to the gates at once) with an audit row."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections import Counter
from pathlib import Path

from sqlalchemy import bindparam, func, select, update
from sqlalchemy.orm import Session

from central import bounds
from central.registry.api import change_version
from central.registry.changes import audit, body, record_change, record_changes
from central.registry.store import get_worker, list_workers, record_infraction
from central.registry.schema import workers as workers_t
from central.registry.suspensions import with_recorded_suspension
from central.rotation.engine import (
    DispatchResult,
    Fairness,
    Requisition,
    RotationSettings,
    category_of,
    dispatch,
    ended_at,
    fairness,
    function_problem,
    known_functions as functions_of,
    merge,
)
from central.rotation.dispatch_lock import one_dispatch_at_a_time
from central.rotation.ports import RotationPorts, by_port, gate_port, shown, worker_port_map, workers_in
from central.rotation.schema import escala, refusals, requisitions, rotation_turns
from portgate import csvout
from portgate.errors import BadInput
from portgate.records import COLUMNS, Berth, EscalaEntry, Voyage
from portgate.timeutil import as_utc, require_aware


def entry_from_row(row) -> EscalaEntry:
    """Build an ``EscalaEntry`` from an ``escala`` row."""
    return EscalaEntry(date=row.date, period=row.period, ship=row.ship, ship_name=row.ship_name,
                       voyage=Voyage(row.voyage), berth=Berth(row.berth), gate_id=row.gate_id,
                       post=row.post, function=row.function, registration=row.registration)


def _busy(session: Session, start: dt.datetime, end: dt.datetime,
          skip_id: int | None = None) -> dict[str, list[tuple[dt.datetime, dt.datetime]]]:
    stmt = select(escala.c.id, escala.c.registration, escala.c.start_at, escala.c.end_at).where(
        escala.c.status == "active", escala.c.end_at > start, escala.c.start_at < end)
    out: dict[str, list] = {}
    for row in session.execute(stmt):
        if row.id != skip_id:
            out.setdefault(row.registration, []).append((as_utc(row.start_at), as_utc(row.end_at)))
    return out


def _turns(session: Session) -> dict[str, int]:
    return dict(session.execute(select(rotation_turns.c.registration, rotation_turns.c.last_turn)).all())


def _save_turns(session: Session, new: dict[str, int], categories: dict[str, str]) -> None:
    existing = set(session.execute(select(rotation_turns.c.registration).where(
        rotation_turns.c.registration.in_(list(new)))).scalars()) if new else set()
    inserts = [{"registration": r, "category": categories[r], "last_turn": t}
               for r, t in new.items() if r not in existing]
    if inserts:
        session.execute(rotation_turns.insert(), inserts)
    updates = [{"reg": r, "turn": t} for r, t in new.items() if r in existing]
    if updates:
        session.execute(update(rotation_turns).where(
            rotation_turns.c.registration == bindparam("reg")).values(last_turn=bindparam("turn"))
            .execution_options(synchronize_session=False), updates)


def _insert_many(session: Session, table, rows: list[dict]) -> list[int]:
    """Insert ``rows`` in one executemany; return their ids in the same order."""
    if not rows:
        return []
    result = session.execute(table.insert().returning(table.c.id, sort_by_parameter_order=True),
                             rows)
    return [int(i) for i in result.scalars()]


def _store_entry(session: Session, entry: EscalaEntry, *, operator: str, requisition_id: int | None,
                 settings: RotationSettings, actor: str, now: dt.datetime,
                 prev_turn: int | None = None) -> int:
    start, end = entry.bounds(settings.tz)
    entry_id = session.execute(escala.insert().values(
        **dataclasses.asdict(entry) | {"voyage": entry.voyage.value, "berth": entry.berth.value},
        operator=operator, requisition_id=requisition_id, start_at=start, end_at=end,
        status="active", prev_turn=prev_turn, created_at=now)).inserted_primary_key[0]
    record_change(session, "escala", "upsert", str(entry_id), body(entry) | {"id": entry_id},
                  actor=actor, now=now)
    return int(entry_id)


@dataclasses.dataclass(frozen=True)
class DayResult:
    result: DispatchResult
    entry_ids: tuple[int, ...]


def requisition_key(r) -> tuple[str, str, str, str, str]:
    """A requisition's identity within its date: (period, ship, gate_id, post, function)."""
    return (r.period, r.ship, r.gate_id, r.post, r.function)


def _refuse_duplicates(session: Session, day: dt.date, reqs: list[Requisition]) -> None:
    """``BadInput`` (one line per requisition) if a requisition's key (date, period, ship, gate,
    post, function) is already stored for ``day`` or repeated in ``reqs``: the same requisition
    sent twice is never dispatched twice, and a changed head count is refused, not added (R1)."""
    one_dispatch_at_a_time(session, day)
    stored = {requisition_key(r): r for r in session.execute(
        select(requisitions).where(requisitions.c.date == day).order_by(requisitions.c.id))}
    seen: dict[tuple, Requisition] = {}
    problems = []
    for r in reqs:
        key = requisition_key(r)
        what = "/".join(key)
        old = stored.get(key)
        if old is not None:
            head = (f"{r.ref}: requisition already registered as requisition {old.id} "
                    f"({what}, {old.workers} workers)")
            problems.append(head + (": nobody dispatched again" if old.workers == r.workers else
                                    f": a changed head count ({r.workers}) is not added, "
                                    "substitute or remove its escala entries instead"))
        elif key in seen:
            problems.append(f"{r.ref}: repeats requisition {seen[key].ref} ({what})")
        seen.setdefault(key, r)
    if problems:
        raise BadInput("; ".join(problems))


def known_functions(session: Session) -> frozenset[str]:
    """The functions a requisition may name (``engine.known_functions``): the office's table and
    every category registered in the registry."""
    return functions_of(session.execute(select(workers_t.c.category).distinct()).scalars())


def _refuse_unknown_functions(session: Session, reqs: list[Requisition]) -> None:
    """``BadInput`` (``REF: function ...``, one per requisition, ``; ``) for a requisition whose
    function no category fills (``engine.function_problem``)."""
    known = known_functions(session) if reqs else frozenset()
    problems = [f"{r.ref}: {p}" for r in reqs if (p := function_problem(r.function, known))]
    if problems:
        raise BadInput("; ".join(problems))


class PastEscala(BadInput):
    """A dispatch or a change (refusal, substitution) of a period that has ended (``engine.ended_at``):
    refused, nothing written. ``reasons``: each reason without its requisition's place (a form
    shows it beside its period field)."""

    def __init__(self, message: str, *, where: str | None = None, reasons: tuple[str, ...] = ()) -> None:
        super().__init__(message, where=where)
        self.reasons = reasons or (message,)


def _refuse_ended(reqs: list[Requisition], now: dt.datetime, settings: RotationSettings) -> None:
    """``PastEscala`` (one reason per requisition, ``; ``) if a requisition's period has ended at
    ``now``: a past day's escala is not written afterwards (``engine.ended_at``)."""
    problems = []
    for r in reqs:
        end = ended_at(r.entry("-"), now, settings.tz)
        if end is not None:
            problems.append((r.ref, f"the period {r.period} of {r.date} ended at {end:%Y-%m-%d %H:%M} "
                                    "port time: a past escala is not dispatched"))
    if problems:
        raise PastEscala("; ".join(f"{ref}: {why}" for ref, why in problems),
                         reasons=tuple(why for _ref, why in problems))


def dispatch_day(session: Session, day: dt.date, reqs: list[Requisition], *, actor: str,
                 now: dt.datetime, settings: RotationSettings = RotationSettings(),
                 ports: RotationPorts | None = None) -> DayResult:
    """Fill the day's requisitions from the rotation (R1, R2) and store the escala; every entry is
    published as an escala change row. ``now``: the caller's clock (aware; the web app's, the
    command's ``--at``), stamping rows and deciding which periods have ended. ``BadInput`` (nothing
    written) if a requisition is for another date, an unknown function, a period ended at ``now``,
    stored / repeated (``_refuse_duplicates``, one dispatch of a day at a time) or at a gate outside
    ``ports``' view (``by_port``: filled from its port's workers). Returns the result and entry ids."""
    now = require_aware(now, "now")
    wrong = [r.ref for r in reqs if r.date != day]
    if wrong:
        raise BadInput(f"requisition(s) not for {day}: {', '.join(wrong[:10])}", where="--date")
    _refuse_unknown_functions(session, reqs)
    _refuse_ended(reqs, now, settings)
    _refuse_duplicates(session, day, reqs)
    workers = with_recorded_suspension(session, list_workers(session), day)
    groups = by_port(session, reqs, workers, ports)
    horizon = dt.timedelta(days=2)
    start = dt.datetime.combine(day, dt.time(), dt.UTC) - horizon
    busy = _busy(session, start, start + 2 * horizon + dt.timedelta(days=1))
    turns = _turns(session)
    result = merge(dispatch(group, pool, turns, busy, settings) for group, pool in groups)
    filled = Counter(id(a.requisition) for a in result.assignments)
    req_rows = [dataclasses.asdict(r) | {"voyage": r.voyage.value, "berth": r.berth.value,
                                         "filled": filled[id(r)], "created_at": now, "actor": actor}
                for r in reqs]
    req_ids = dict(zip((id(r) for r in reqs), _insert_many(session, requisitions, req_rows)))
    entry_rows = []
    for a in result.assignments:
        start_at, end_at = a.entry.bounds(settings.tz)
        entry_rows.append(body(a.entry) | {
            "date": a.entry.date, "operator": a.requisition.operator,
            "requisition_id": req_ids[id(a.requisition)], "start_at": start_at, "end_at": end_at,
            "status": "active", "prev_turn": turns.get(a.entry.registration, 0), "created_at": now})
    ids = tuple(_insert_many(session, escala, entry_rows))
    record_changes(session, "escala", [
        ("upsert", str(i), body(a.entry) | {"id": i}) for i, a in zip(ids, result.assignments)],
        actor=actor, now=now)
    _save_turns(session, result.turns, {w.registration: w.category for w in workers})
    audit(session, actor=actor, action="rotation.dispatch", subject=day.isoformat(),
          detail={"requisitions": len(reqs), "dispatched": len(ids),
                  "shortfalls": {s.requisition.ref: s.missing for s in result.shortfalls}}, now=now)
    return DayResult(result, ids)


def _active_entry(session: Session, entry_id: int, now: dt.datetime, settings: RotationSettings,
                  ports: RotationPorts | None = None):
    """The active escala row ``entry_id``; ``BadInput`` as ``substitute`` says (an entry of a port
    outside ``ports.view`` as a missing one: "no escala entry N")."""
    if bounds.problem(escala, "id", entry_id) is not None:  # no stored id is that large
        raise BadInput(f"no escala entry {entry_id}", where="--entry")
    row = session.execute(select(escala).where(escala.c.id == entry_id)).first()
    keep = shown(session, ports) if row is not None else None
    if row is None or (keep is not None and not keep(row.gate_id)):
        raise BadInput(f"no escala entry {entry_id}", where="--entry")
    if row.status != "active":
        raise BadInput(f"escala entry {entry_id} was already removed ({row.removed_reason})",
                       where="--entry")
    end = ended_at(entry_from_row(row), now, settings.tz)
    if end is not None:
        raise PastEscala(f"escala entry {entry_id} ({row.date} {row.period}) ended at {end:%Y-%m-%d %H:%M} "
                         "port time: a past escala is not changed", where="--entry")
    return row


def _remove(session: Session, row, reason: str, *, actor: str, now: dt.datetime) -> None:
    session.execute(update(escala).where(escala.c.id == row.id)
                    .values(status="removed", removed_reason=reason))
    record_change(session, "escala", "delete", str(row.id), body(entry_from_row(row)) | {"id": row.id},
                  actor=actor, now=now)


def _pool(session: Session, registration: str | None, gate_id: str, ports: RotationPorts | None) -> list:
    """A substitution's candidates: the named worker (in the rotation this once), else all; on an office
    of several ports those of ``gate_id``'s port (R1), another port's named one as an unknown one."""
    if registration is not None:
        pool = [get_worker(session, registration)]
        pool = [dataclasses.replace(w, rotation_number=w.rotation_number or 0) for w in pool]
    else:
        pool = list_workers(session)
    if ports is not None and ports.split:
        of_worker, port = worker_port_map(session, ports), gate_port(session, ports)(gate_id)
        pool = [w for w in pool if of_worker.get(w.registration) == port]
        if registration is not None and not pool:
            raise BadInput(f"no worker with registration {registration!r}", where="registration")
    return pool


def substitute(session: Session, entry_id: int, *, reason: str, actor: str, now: dt.datetime,
               registration: str | None = None, settings: RotationSettings = RotationSettings(),
               exclude: frozenset[str] = frozenset(), ports: RotationPorts | None = None) -> int | None:
    """Late substitution: remove escala entry ``entry_id`` and dispatch the next eligible worker of
    the rotation (or ``registration``, checked for eligibility) to the same ship, post and period.
    Both changes are published at once (a delete and an upsert change row). Returns the new entry
    id, or None if nobody eligible is left (the position stays open and is reported).
    ``now``: the caller's clock (aware), as ``dispatch_day``. ``ports``: the substitute is of the
    entry's port (``_pool``); an entry outside ``ports.view`` is refused as an unknown one.
    ``BadInput`` if the entry is unknown/removed, its period has ended at ``now`` (a past escala is
    not changed: ``engine.ended_at``), the named worker is not eligible (R2), or the reason holds a
    NUL (``central.bounds``); nothing is written then."""
    now = require_aware(now, "now")
    bounds.check(refusals, {"reason": reason}, where="reason")
    row = _active_entry(session, entry_id, now, settings, ports)
    req_row = session.execute(select(requisitions).where(
        requisitions.c.id == row.requisition_id)).first() if row.requisition_id else None
    req = Requisition(
        ref=f"substitute:{entry_id}", date=row.date, period=row.period, operator=row.operator,
        ship=row.ship, ship_name=row.ship_name, voyage=Voyage(row.voyage), berth=Berth(row.berth),
        gate_id=row.gate_id, post=row.post, function=row.function, workers=1,
        category=req_row.category if req_row else category_of(row.function))
    _remove(session, row, reason, actor=actor, now=now)
    start = as_utc(row.start_at) - dt.timedelta(days=2)
    busy = _busy(session, start, start + dt.timedelta(days=5), skip_id=row.id)
    pool = with_recorded_suspension(session, _pool(session, registration, row.gate_id, ports), row.date)
    turns = _turns(session)
    result = dispatch([req], pool, turns, busy, settings, exclude=exclude | {row.registration})
    if registration is not None and not result.assignments:
        problems = result.ineligible.get(registration) or tuple(s.reason for s in result.skips)
        raise BadInput(f"{registration} is not eligible: {', '.join(problems) or 'other category'}",
                       where="--registration")
    new_id = None
    if result.assignments:
        a = result.assignments[0]
        new_id = _store_entry(session, a.entry, operator=row.operator,
                              requisition_id=row.requisition_id, settings=settings, actor=actor,
                              now=now, prev_turn=turns.get(a.entry.registration, 0))
        if registration is None:
            _save_turns(session, result.turns, {a.entry.registration: req.category})
    audit(session, actor=actor, action="rotation.substitute", subject=str(entry_id),
          detail={"reason": reason, "out": row.registration, "new_entry": new_id,
                  "in": result.assignments[0].entry.registration if result.assignments else None},
          now=now)
    return new_id


def refuse(session: Session, entry_id: int, *, reason: str, actor: str, now: dt.datetime,
           health_proof: str | None = None, settings: RotationSettings = RotationSettings(),
           ports: RotationPorts | None = None) -> tuple[int, int | None]:
    """Record that the worker of escala entry ``entry_id`` refused it (R3, 83.611 art. 10 sole
    paragraph) and dispatch the next eligible worker in their place.

    With ``health_proof`` (the reference of the medical proof) the refusal is no infraction and the
    worker keeps their place in the rotation (their turn is given back). Without it, the refusal is
    an infraction on the registration record and the turn counts as taken.
    Returns (refusal id, new escala entry id or None). ``BadInput`` as ``substitute`` (an entry
    whose period has ended at ``now`` included, and one of a port outside ``ports.view``: nothing is
    recorded), or for a reason or proof holding a NUL (``central.bounds``). The next worker is of
    the entry's port (``ports``, as ``substitute``).
    """
    now = require_aware(now, "now")
    bounds.check(refusals, {"reason": reason, "health_proof": health_proof}, where="reason")
    row = _active_entry(session, entry_id, now, settings, ports)
    infraction = not (health_proof and health_proof.strip())
    refusal_id = session.execute(refusals.insert().values(
        escala_id=entry_id, registration=row.registration, date=row.date,
        health_proof=None if infraction else health_proof.strip(), infraction=int(infraction),
        reason=reason, created_at=now, actor=actor)).inserted_primary_key[0]
    if infraction:
        record_infraction(session, row.registration, rule="R3", article="83.611 art. 10 par. único",
                          reason=f"refused dispatch {entry_id}: {reason}", actor=actor, now=now)
    elif row.prev_turn is not None:  # give the turn back: the worker keeps their place
        session.execute(update(rotation_turns).where(rotation_turns.c.registration ==
                                                     row.registration)
                        .values(last_turn=row.prev_turn))
    new_id = substitute(session, entry_id, reason=f"refused: {reason}", actor=actor,
                        settings=settings, now=now, ports=ports)
    return int(refusal_id), new_id


def day_entries(session: Session, day: dt.date,
                ports: RotationPorts | None = None) -> list[tuple[int, str, EscalaEntry]]:
    """The active escala of ``day``: (entry id, operator, entry), by period, ship, post; only the
    entries of ``ports.view``'s gates when it is given (``central.rotation.ports.shown``)."""
    rows = session.execute(select(escala).where(escala.c.date == day, escala.c.status == "active")
                           .order_by(escala.c.start_at, escala.c.ship, escala.c.post, escala.c.id))
    keep = shown(session, ports)
    return [(r.id, r.operator, entry_from_row(r)) for r in rows if keep is None or keep(r.gate_id)]


def escala_snapshot(session: Session, date: dt.date) -> tuple[int, list[EscalaEntry]]:
    """(version, the active escala entries of local ``date``). Version: latest escala change id."""
    version = change_version(session, "escala")
    return version, [entry for _id, _op, entry in day_entries(session, date)]


def export(session: Session, day: dt.date, out_dir: str | Path, ports: RotationPorts | None = None) -> list[Path]:
    """Write the day's escala per operator and per ship (R5, Lei 9.719 art. 7) as escala.csv files:
    ``escala-DATE-operator-NAME.csv`` and ``escala-DATE-ship-IMO.csv`` (the entries of ``ports.view``
    only, when given: ``day_entries``). Returns the paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    groups: dict[tuple[str, str], list[EscalaEntry]] = {}
    for _id, operator, entry in day_entries(session, day, ports):
        groups.setdefault(("operator", operator), []).append(entry)
        groups.setdefault(("ship", entry.ship), []).append(entry)
    paths = []
    for (by, name), entries in sorted(groups.items()):
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in name)
        path = out_dir / f"escala-{day.isoformat()}-{by}-{safe}.csv"
        with path.open("w", newline="", encoding="utf-8") as fh:
            writer = csvout.dict_writer(fh, COLUMNS[EscalaEntry])
            writer.writeheader()
            for entry in entries:
                writer.writerow(body(entry))
        paths.append(path)
    return paths


def month_fairness(session: Session, year: int, month: int, category: str = "vigia",
                   target: int = 25, ports: RotationPorts | None = None) -> Fairness:
    """Shifts per registered (not cancelled) worker of ``category`` in a month, against the target;
    with ``ports`` (a view): the workers registered there and their shifts at those ports' gates."""
    first = dt.date(year, month, 1)
    nxt = dt.date(year + month // 12, month % 12 + 1, 1)
    regs = list(session.execute(select(workers_t.c.registration).where(
        workers_t.c.category == category, workers_t.c.status != "cancelled", workers_in(ports))).scalars())
    keep = shown(session, ports)
    counts: Counter = Counter()
    for reg, gate, n in session.execute(select(escala.c.registration, escala.c.gate_id, func.count()).where(
            escala.c.status == "active", escala.c.date >= first, escala.c.date < nxt)
            .group_by(escala.c.registration, escala.c.gate_id)):
        counts[reg] += n if keep is None or keep(gate) else 0
    return fairness(counts, regs, target)
