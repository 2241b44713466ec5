"""How the ingest reads a database error: ``unstorable`` (the data's own fault, which a retry would
meet again: the writer stores those events as dead letters) or not (the batch is retried), and
``db_error``, its one-line form for the logs. Re-exported by ``central.ingest.writer``.
"""

from __future__ import annotations

from sqlalchemy.exc import DataError, DBAPIError, IntegrityError, SQLAlchemyError, StatementError


def unstorable(exc: BaseException) -> bool:
    """True for an error caused by the data itself, which a retry would meet again: the database's
    ``DataError``/``IntegrityError`` (e.g. PostgreSQL refusing a NUL character in text), or the
    driver refusing a value (``OverflowError``/``ValueError``/``TypeError``, raised directly or
    wrapped in a ``StatementError``). Connection, lock and disk errors are not: they pass."""
    if isinstance(exc, (DataError, IntegrityError)):
        return True
    if isinstance(exc, StatementError) and not isinstance(exc, DBAPIError):
        exc = exc.orig
    return isinstance(exc, (OverflowError, ValueError, TypeError, UnicodeError))


def db_error(exc: BaseException) -> str:
    """One short line for a database error: the driver's message without SQLAlchemy's statement and
    parameters (a batch's statement carries every payload, hundreds of kilobytes)."""
    orig = getattr(exc, "orig", None) if isinstance(exc, SQLAlchemyError) else None
    text = f"{type(orig).__name__}: {orig}" if orig is not None else f"{type(exc).__name__}: {exc}"
    return text.splitlines()[0][:300] if text else type(exc).__name__

