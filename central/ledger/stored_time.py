"""Times stored in the ledger's bookkeeping tables read the same on SQLite and PostgreSQL
(``office_processes``, ``ledger_home``): ``raw`` selects a column as it is stored, ``stored_time``
reads it as aware UTC or says which row holds what is not a time. Used by
``central.ledger.liveness`` (which re-exports both), ``instance_claim`` and ``home_port``."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import String, type_coerce

from portgate.errors import StoreError
from portgate.timeutil import as_utc


def stored_time(table: str, column: str, value: object) -> dt.datetime | None:
    """A time read as text-or-datetime (``raw``) as aware UTC; ``None`` stays ``None``. SQLite keeps
    ``DateTime`` as text (``2026-12-07 06:00:00.000000``), PostgreSQL gives a ``datetime``. Raises
    ``StoreError`` (exit 2) naming ``table.column`` and the value for text that is not a time."""
    if value is None or isinstance(value, dt.datetime):
        return as_utc(value)
    try:
        return as_utc(dt.datetime.fromisoformat(str(value)))
    except ValueError:
        raise StoreError(f"{table}.{column} holds {str(value)[:80]!r}, not a time: the office cannot read "
                         "this row (fix or delete it)") from None


def raw(column):
    """``column`` selected without its type's result processing (``stored_time`` reads it)."""
    return type_coerce(column, String).label(column.name)
