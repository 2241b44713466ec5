"""Office corrections on shifts, kept apart from the events (which stay append-only) and applied
on every rebuild: today the P6 meal interval worked (83.611 art. 26 d), which the gate taps cannot
show. A correction names the shift, the value, who recorded it and why; each one also writes an
``audit_log`` row. The latest correction of a shift wins; a rebuilt shift it changed carries the
flag MEAL_CORRECTED (paid, not held) naming the actor.

    record_meal(engine, shift_id, worked=True, actor="chefe.silva", reason="...", now=...)
    apply_corrections(conn, shifts) -> shifts with meal_worked set and MEAL_CORRECTED flags
"""

from __future__ import annotations

import dataclasses
import datetime as dt

from sqlalchemy import (Boolean, Column, DateTime, Index, Integer, String, Table, Text, bindparam, insert,
                        select)
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from central.audit import ALL, audit_log
from central.ledger.object_ports import shift_port
from central.db import metadata
from central.ledger.shifts import Flag, Shift
from central.ledger.tables import shifts
from portgate.errors import BadInput, StoreError
from wire.flags import ShiftFlag

MEAL_CORRECTED = ShiftFlag.MEAL_CORRECTED

shift_corrections = Table(
    "shift_corrections",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("shift_id", String(160), nullable=False),  # no FK: shifts are rebuilt, corrections kept
    Column("field", String(32), nullable=False),  # meal_worked
    Column("value", Boolean, nullable=False),
    Column("reason", Text, nullable=False),
    Column("actor", String(128), nullable=False),
    Column("recorded_at", DateTime(timezone=True), nullable=False),
)
Index("ix_shift_corrections_shift", shift_corrections.c.shift_id, shift_corrections.c.id)


def record_meal(engine: Engine, shift_id: str, *, worked: bool, actor: str, reason: str,
                now: dt.datetime) -> None:
    """Record that the meal interval of ``shift_id`` was (or was not) worked (P6) with an audit row.

    The shift must exist in the ledger (rebuilt from the gate events). Raises ``BadInput`` for an
    unknown shift, an empty actor or reason; ``StoreError`` if the database fails."""
    if not actor or not actor.strip():
        raise BadInput("actor is required (who records the correction)", where="--actor")
    if not reason or not reason.strip():
        raise BadInput("reason is required (why the meal interval was worked)", where="--reason")
    try:
        with engine.begin() as conn:
            found = conn.execute(select(shifts.c.shift_id).where(shifts.c.shift_id == shift_id)).first()
            if found is None:
                raise BadInput(f"no shift {shift_id!r} in the ledger (rebuild it first: "
                               f"portgate ledger shifts)", where="--shift")
            conn.execute(insert(shift_corrections).values(
                shift_id=shift_id, field="meal_worked", value=worked, reason=reason.strip(),
                actor=actor.strip(), recorded_at=now))
            conn.execute(insert(audit_log).values(
                at=now, actor=actor.strip(), action="ledger.correct-meal", subject=shift_id,
                port=shift_port(conn, shift_id) or ALL,  # the shift's gate's port (audit_log.port, 0031)
                detail={"meal_worked": worked, "reason": reason.strip(), "rule": "P6",
                        "article": "83.611 art. 26 d"}))
    except SQLAlchemyError as exc:
        raise StoreError(f"recording the correction failed: {exc}") from exc


_MEALS_QUERY = (
    select(shift_corrections.c.shift_id, shift_corrections.c.value, shift_corrections.c.actor,
           shift_corrections.c.recorded_at)
    .where(shift_corrections.c.field == "meal_worked",
           shift_corrections.c.shift_id.in_(bindparam("ids", expanding=True)))
    .order_by(shift_corrections.c.id))


def apply_corrections(conn: Connection, found: list[Shift]) -> list[Shift]:
    """``found`` with the latest meal correction of each shift applied (``meal_worked`` set and a
    MEAL_CORRECTED flag naming actor and time). Shifts with no correction are returned unchanged."""
    if not found:
        return found
    ids = [s.shift_id for s in found]
    latest: dict[str, tuple[bool, str, str]] = {}
    for sid, value, actor, at in read_meal_corrections(conn, ids):
        latest[sid] = (value, actor, at)  # rows in id order: the latest wins
    return corrected(found, latest)


def read_meal_corrections(conn: Connection, shift_ids: list[str]) -> list[tuple[str, bool, str, str]]:
    """Every meal correction of these shifts, oldest first: ``(shift_id, worked, actor, recorded
    at)``, the time as ``isoformat()`` of what the database hands back (as the flag prints it; the
    evidence bundle's ``corrections.json``)."""
    out = []
    for chunk in range(0, len(shift_ids), 2000):
        for sid, value, actor, at in conn.execute(_MEALS_QUERY, {"ids": shift_ids[chunk:chunk + 2000]}):
            out.append((sid, bool(value), actor, at.isoformat()))
    return out


def corrected(found: list[Shift], latest: dict[str, tuple[bool, str, str]]) -> list[Shift]:
    """``found`` with ``latest`` applied (pure): ``{shift_id: (worked, actor, recorded at as
    text)}`` sets ``meal_worked`` (P6, 83.611 art. 26 d) and adds a MEAL_CORRECTED flag naming the
    actor and time. Shifts with no correction are returned unchanged. ``portgate evidence verify``
    applies the bundle's corrections with it."""
    if not latest:
        return found
    out = []
    for s in found:
        hit = latest.get(s.shift_id)
        if hit is None:
            out.append(s)
            continue
        value, actor, at = hit
        flag = Flag(MEAL_CORRECTED, f"P6 meal interval {'worked' if value else 'not worked'}: "
                                    f"recorded by {actor} at {at}")
        out.append(dataclasses.replace(s, meal_worked=value, flags=s.flags + (flag,)))
    return out
