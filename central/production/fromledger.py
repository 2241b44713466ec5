"""The ledger side of production from the gate: read the shifts rebuilt from the ledger's gate
events around the gangs' dates (read only, nothing stored) and apply them (``central.production.gate``).

    works, notes = gate_applied(engine, works, zone)
    result = noted(result, notes.get(result.summary.gang_id, ()))

``ledger_checks`` adds R10: the gangs already imported into the ledger (DOUBLE_ASSIGNMENT on both).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Sequence
from zoneinfo import ZoneInfo

import msgspec
from sqlalchemy import inspect as sa_inspect
from sqlalchemy import select
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from central.ledger.shifts import Flag, Shift, ShiftFlag, reconstruct
from central.ledger.store import load_events
from central.production.gate import StoredGang, from_gate, gangway_against_gangs, stored_conflicts
from central.production.model import GangResult, GangWork
from central.production.schema import production_gangs, production_members
from portgate.errors import StoreError


@dataclasses.dataclass(frozen=True, slots=True)
class LedgerChecks:
    """What the ledger changes for a batch of gangs: ``works`` with gate minutes, the notes per
    gang id (MINUTES_FROM_GATE, MINUTES_TYPED, DOUBLE_ASSIGNMENT) and the R10 notes to store on
    gangs imported earlier (``(production_gangs.id, note)``)."""

    works: list[GangWork]
    notes: dict[str, tuple[str, ...]]
    on_stored: list[tuple[int, str]]


def ledger_checks(engine: Engine, works: Sequence[GangWork], zone: ZoneInfo) -> LedgerChecks:
    """``gate_applied`` plus R10 against the gangs already in the ledger (``stored_conflicts``).
    Raises ``StoreError`` (one line) if the database cannot be read, ``BadInput`` for a period that
    cannot be read."""
    works, notes = gate_applied(engine, works, zone)
    found, on_stored = stored_conflicts(works, stored_gangs_near(engine, works), zone)
    merged = dict(notes)
    for gid, extra in found.items():
        merged[gid] = tuple(dict.fromkeys(merged.get(gid, ()) + extra))
    return LedgerChecks(works, merged, on_stored)


def stored_gangs_near(engine: Engine, works: Sequence[GangWork]) -> list[StoredGang]:
    """The gangs in the ledger from the day before the earliest work date to the day after the
    latest (periods cross midnight), with the registrations who boarded them; none when the ledger
    has no production tables. Raises ``StoreError`` (one line) if the database cannot be read."""
    if not works:
        return []
    days = [w.date for w in works]
    wanted = {mb.registration for w in works for mb in w.members if mb.boarded}
    try:
        with engine.connect() as conn:
            return stored_gangs(conn, min(days) - dt.timedelta(days=1), max(days) + dt.timedelta(days=1),
                                wanted)
    except SQLAlchemyError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise StoreError(f"reading the ledger's production gangs failed: {first}") from exc


def stored_gangs(conn: Connection, first: dt.date, last: dt.date, wanted: set[str]) -> list[StoredGang]:
    """The gangs in the ledger of work dates [first, last] with those of ``wanted`` registrations
    who boarded them (gangs with none are left out); none without production tables. Raises
    ``SQLAlchemyError``: the caller words it."""
    if not wanted or not sa_inspect(conn).has_table("production_gangs"):
        return []
    g, m = production_gangs, production_members
    rows = conn.execute(
        select(g.c.id, g.c.gang_id, g.c.work_date, g.c.ship, g.c.period, m.c.registration)
        .join(m, m.c.gang_row == g.c.id)
        .where(g.c.work_date >= first, g.c.work_date <= last, m.c.boarded == "yes")).all()
    heads: dict[int, tuple] = {}
    regs: dict[int, set[str]] = {}
    for row_id, gang_id, day, ship, period, reg in rows:
        heads[row_id] = (gang_id, day, ship, period)
        if reg in wanted:
            regs.setdefault(row_id, set()).add(reg)
    return [StoredGang(row_id, *heads[row_id], frozenset(found)) for row_id, found in regs.items()]


def ledger_shifts(engine: Engine, works: Sequence[GangWork], zone: ZoneInfo) -> list[Shift]:
    """The shifts rebuilt from the gate events of the gangs' dates (and the day before: periods
    cross midnight). A ledger with no events table gives none. Raises ``StoreError`` (one line) if
    the database cannot be read."""
    if not works:
        return []
    days = [w.date for w in works]
    try:
        with engine.connect() as conn:
            if not sa_inspect(conn).has_table("events"):
                return []
            return reconstruct(load_events(conn, min(days) - dt.timedelta(days=1), max(days), zone), zone)
    except SQLAlchemyError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise StoreError(f"reading the ledger's gate events failed: {first}") from exc


def gate_applied(engine: Engine, works: Sequence[GangWork],
                 zone: ZoneInfo) -> tuple[list[GangWork], dict[str, tuple[str, ...]]]:
    """``from_gate`` on the ledger's shifts: works with gate minutes and the notes per gang id."""
    return from_gate(works, ledger_shifts(engine, works, zone), zone)


def noted(result: GangResult, notes: tuple[str, ...]) -> GangResult:
    """``result`` with the gate notes (MINUTES_FROM_GATE, DOUBLE_ASSIGNMENT) on its summary flags."""
    if not notes:
        return result
    summary = msgspec.structs.replace(result.summary, flags=result.summary.flags + notes)
    return msgspec.structs.replace(result, summary=summary)


def shifts_against_gangs(conn: Connection, found: list[Shift], zone: ZoneInfo) -> list[Shift]:
    """R10 for the watchmen's pay run: ``found`` (the ledger's stored shifts) with DOUBLE_ASSIGNMENT
    (a hold flag) added to each gangway shift whose worker boarded a gang already imported on
    another ship in an overlapping period (``gangway_against_gangs``). Raises ``SQLAlchemyError``
    (the caller words it), ``BadInput`` for a stored period that cannot be read."""
    if not found:
        return found
    days = [s.work_date for s in found]
    gangs = stored_gangs(conn, min(days) - dt.timedelta(days=1), max(days) + dt.timedelta(days=1),
                         {s.registration for s in found})
    conflicts = gangway_against_gangs(found, gangs, zone) if gangs else {}
    if not conflicts:
        return found
    return [dataclasses.replace(s, flags=s.flags + tuple(Flag(ShiftFlag.DOUBLE_ASSIGNMENT.value, d)
                                                         for d in conflicts[s.shift_id]))
            if s.shift_id in conflicts else s for s in found]
