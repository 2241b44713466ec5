"""Read the gangway gate's admit/exit taps from the ledger ``events`` table (SQLAlchemy) for the
pure ``aboard.who_is_aboard``. SQLAlchemy errors are translated to ``StoreError`` here."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from central.inspection.aboard import GateTap, Passage
from central.ledger.schema import events
from portgate.errors import StoreError
from portgate.timeutil import as_utc, require_aware


def gate_taps(engine: Engine, gate_id: str, *, until: dt.datetime) -> list[GateTap]:
    """Admit/exit taps of ``gate_id`` that occurred at or before ``until`` (aware), in seq order.

    The registration comes from the ``registration`` column, or the payload's when the column is
    empty; taps with no registration (unknown card) are skipped: they moved nobody. Raises
    ``StoreError`` if the database cannot be read (missing table, unreachable server).
    """
    until = require_aware(until, "until")
    query = (
        select(
            events.c.registration,
            events.c.occurred_at,
            events.c.seq,
            events.c.decision,
            events.c.clock_trusted,
            events.c.payload,
        )
        .where(
            events.c.gate_id == gate_id,
            events.c.type == "tap",
            events.c.decision.in_([p.value for p in Passage]),
        )
        .order_by(events.c.seq)
    )
    try:
        with engine.connect() as conn:
            rows = conn.execute(query).all()
    except SQLAlchemyError as exc:
        raise StoreError(f"cannot read ledger events: {exc.__class__.__name__}: {exc}") from exc
    out = []
    for reg, occurred_at, seq, decision, trusted, payload in rows:
        reg = reg or (payload or {}).get("registration")
        at = as_utc(occurred_at)
        if not reg or at > until:
            continue
        out.append(GateTap(reg, at, seq, Passage(decision), bool(trusted)))
    return out
