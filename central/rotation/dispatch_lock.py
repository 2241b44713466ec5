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
    """Wait until any other transaction dispatching ``day`` ends, so the duplicate check that follows
    sees its requisitions. PostgreSQL: a transaction-scoped advisory lock of ``day``, released at the
    caller's commit or rollback (read committed). SQLite: the ledger's write lock now (``BEGIN
    IMMEDIATE``, waiting up to the driver's busy timeout, 5 s), unless the caller's transaction has
    already written (it holds the lock then): Python's sqlite3 reads outside a transaction until the
    first write, so two dispatches both saw no requisition and both wrote (the second a duplicate or
    a crash on a key). Raises ``sqlalchemy.exc.SQLAlchemyError`` if the ledger cannot be reached or
    stays locked ("database is locked": the caller's error path)."""
    dialect = session.get_bind().dialect.name
    if dialect == "postgresql":
        lock = int.from_bytes(hashlib.sha256(f"rotation.dispatch\0{day}".encode()).digest()[:8], "big", signed=True)
        session.execute(select(func.pg_advisory_xact_lock(lock)))
    elif dialect == "sqlite":
        conn = session.connection()
        if not conn.connection.dbapi_connection.in_transaction:
            conn.exec_driver_sql("BEGIN IMMEDIATE")
