"""The ledger side of production from the gate: read the shifts rebuilt from the ledger's gate
events around the gangs' dates (read only, nothing stored) and apply them (``central.production.gate``).

    works, notes = gate_applied(engine, works, zone)
    result = noted(result, notes.get(result.summary.gang_id, ()))
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from zoneinfo import ZoneInfo

import msgspec
from sqlalchemy import inspect as sa_inspect
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from central.ledger.shifts import Shift, reconstruct
from central.ledger.store import load_events
from central.production.gate import from_gate
from central.production.model import GangResult, GangWork
from portgate.errors import StoreError


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
