"""One dispatch of a day at a time (``central.rotation.service.dispatch_day``): the same requisition
posted twice at once (two clerks, a double click, four parallel posts of one form) is dispatched
once and refused once as registered ("requisition already registered"), never a crash on a key
nor the same requisition dispatched twice."""

from __future__ import annotations

import datetime as dt
import hashlib

from sqlalchemy import func, select
from sqlalchemy.orm import Session


def one_dispatch_at_a_time(session: Session, day: dt.date) -> None:
    """On PostgreSQL, wait until any other transaction dispatching ``day`` ends (a transaction-scoped
    advisory lock, released at the caller's commit or rollback), so the duplicate check that follows
    sees its requisitions (read committed). SQLite: nothing (one writer at a time). Raises
    ``sqlalchemy.exc.SQLAlchemyError`` if the ledger cannot be reached (the caller's error path)."""
    if session.get_bind().dialect.name == "postgresql":
        lock = int.from_bytes(hashlib.sha256(f"rotation.dispatch\0{day}".encode()).digest()[:8], "big", signed=True)
        session.execute(select(func.pg_advisory_xact_lock(lock)))
