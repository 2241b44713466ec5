"""Writing a checked batch to the ledger, inside the caller's transaction (re-exported by
``central.ingest.event_store``): ``write_batch`` inserts the accepted events with one multi-row
``INSERT ... ON CONFLICT (event_id) DO NOTHING`` per 1000 events (SQLite) or one binary ``COPY``
and ``INSERT ... SELECT ... RETURNING`` per batch (PostgreSQL), so a redelivered or replayed event
is a no-op, and inserts the dead letters (``dead_letter_row``: texts fitted to their columns, a long
message cut to ``DEAD_RAW_KEPT`` bytes and named by its SHA-256). It returns the rows actually
inserted (id, event) so the caller can relay presence for new admits/exits.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import itertools

import msgspec
from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError

from central.ingest.check import Accepted, DeadLetter
from central.ledger.schema import dead_letters, events
from wire.events import Event

DEAD_RAW_KEPT = 4096  # bytes of a dead letter's message stored; the rest is named by size and SHA-256


def _insert(conn: Connection, table):
    return (postgresql if conn.dialect.name == "postgresql" else sqlite).insert(table)


_COLUMNS = (
    "event_id", "port", "gate_id", "boot_id", "seq", "occurred_at", "clock_trusted", "mono_ns", "type",
    "registration", "decision", "payload", "mac", "raw", "received_at",
)
_ROWS_PER_STATEMENT = 1000  # SQLite: 15 parameters a row, well under its 32766
_json = msgspec.json.Encoder()


# SQLite: a multi-row ``VALUES`` insert that bypasses SQLAlchemy's per-row bind processing (the
# hot path of the ingest): values are converted here as the column types would store them. No
# RETURNING: SQLite would step (and release the GIL) once per returned row; the ids come from
# lastrowid/rowcount instead (``_sqlite_ids``).
_SQLITE_ROW = "(" + ", ".join(["?"] * len(_COLUMNS)) + ")"


def _sqlite_sql(n_rows: int) -> str:
    return (f"INSERT INTO {events.name} ({', '.join(_COLUMNS)}) VALUES "
            + ", ".join([_SQLITE_ROW] * n_rows) + " ON CONFLICT (event_id) DO NOTHING")


# PostgreSQL: the batch goes by one binary ``COPY`` into a temporary table of the connection
# (psycopg writes each row in C, where column array parameters are dumped element by element in
# Python: about half of the writer's CPU per event), then one
# ``INSERT ... SELECT ... ON CONFLICT (event_id) DO NOTHING RETURNING id, event_id`` moves it into
# ``events``. The table is the connection's own (``ON COMMIT DELETE ROWS``) and emptied after each
# use, so a second batch in the same transaction starts from nothing.
_PG_STAGE = "ingest_batch"
_PG_TYPES = (
    "text", "text", "text", "text", "bigint", "timestamptz", "boolean", "bigint", "text", "text", "text",
    "text", "text", "bytea",
)
_PG_CREATE = (f"CREATE TEMPORARY TABLE IF NOT EXISTS {_PG_STAGE} ("
              + ", ".join(f"{c} {t}" for c, t in zip(_COLUMNS, _PG_TYPES)) + ") ON COMMIT DELETE ROWS")
_PG_COPY = f"COPY {_PG_STAGE} ({', '.join(_COLUMNS[:14])}) FROM STDIN (FORMAT BINARY)"
_PG_INSERT = (
    f"INSERT INTO {events.name} ({', '.join(_COLUMNS)}) "
    f"SELECT {', '.join(_COLUMNS[:11])}, payload::json, mac, raw, %s::timestamptz FROM {_PG_STAGE} "
    "ON CONFLICT (event_id) DO NOTHING RETURNING id, event_id"
)


def _pg_insert(conn: Connection, chunk: list[Accepted], received_at: dt.datetime) -> list[tuple[int, str]]:
    """PostgreSQL: insert ``chunk`` (COPY into the staging table, then one INSERT ... SELECT);
    (id, event_id) of the rows really inserted. A value the driver or the server refuses raises
    the SQLAlchemy error of the driver's (``DataError`` for a NUL character, a too long text ...),
    or the driver's ``ValueError``/``OverflowError`` as it is."""
    dbapi = conn.dialect.loaded_dbapi
    driver = conn.connection.driver_connection
    try:
        with driver.cursor() as cur:
            cur.execute(_PG_CREATE)  # (each time: a rolled back transaction takes a new table with it)
            with cur.copy(_PG_COPY) as copy:
                copy.set_types(_PG_TYPES)
                write = copy.write_row
                for a in chunk:
                    write(_event_values(a, a.event.occurred_at))
            cur.execute(_PG_INSERT, (received_at,))
            rows = cur.fetchall()
            cur.execute(f"DELETE FROM {_PG_STAGE}")
    except dbapi.Error as exc:
        raise DBAPIError.instance(_PG_INSERT, None, exc, dbapi.Error, dialect=conn.dialect) from exc
    return rows


def _event_values(a: Accepted, occurred_at) -> tuple:
    """The 14 event columns of ``_COLUMNS`` (all but ``received_at``), ``occurred_at`` as given."""
    e = a.event
    payload = e.payload
    return (
        e.event_id, e.port, e.gate_id, e.boot_id, e.seq, occurred_at, e.clock_trusted, e.mono_ns,
        type(payload).__struct_config__.tag, getattr(payload, "registration", None),
        getattr(payload, "decision", None), _json.encode(payload).decode(), e.mac, a.raw,
    )


def event_columns(event: Event, raw: bytes) -> dict[str, object]:
    """The ``events`` columns ``write_batch`` stores for ``event`` decoded from ``raw``, by name (the
    14 of ``_COLUMNS`` but ``received_at``; ``occurred_at`` the event's aware UTC datetime, ``payload``
    its JSON text): what ``portgate evidence audit`` compares the stored columns with."""
    return dict(zip(_COLUMNS, _event_values(Accepted("", event, raw), event.occurred_at)))


def _sqlite_datetime(value: dt.datetime) -> str:
    """What SQLAlchemy's SQLite ``DateTime`` stores (``YYYY-MM-DD HH:MM:SS.ffffff``, no offset), at a
    tenth of the cost of its bind processor; in UTC, which is how the ledger reads it back (a gate
    sending another offset must not shift the time). Raises ``OverflowError`` for an instant
    outside years 1-9999 in UTC (the event becomes an ``unstorable`` dead letter)."""
    if value.utcoffset():
        value = value.astimezone(dt.UTC)
    return value.isoformat(" ", "microseconds")[:26]


def write_batch(
    conn: Connection, accepted: list[Accepted], rejected: list[DeadLetter], received_at: dt.datetime
) -> list[tuple[int, Event]]:
    """Insert a batch inside the caller's transaction; return (ledger id, event) of new rows only,
    in ledger id order.

    Duplicates inside the batch (first copy wins) and against the ledger are skipped: one
    ``INSERT ... ON CONFLICT (event_id) DO NOTHING`` (SQLite >= 3.35: a multi-row ``VALUES`` per
    1000 events; PostgreSQL: the batch copied into a staging table, then ``INSERT ... SELECT ...
    RETURNING id, event_id``), so a redelivered,
    replayed or concurrently inserted event is a no-op and only the rows really inserted come back.
    """
    inserted: list[tuple[int, Event]] = []
    unique: dict[str, Accepted] = {}
    for a in accepted:
        unique.setdefault(a.event.event_id, a)
    if unique:
        pg = conn.dialect.name == "postgresql"
        at = _sqlite_datetime(received_at)
        fresh = list(unique.values())
        step = len(fresh) if pg else _ROWS_PER_STATEMENT  # (COPY has no parameter limit)
        for i in range(0, len(fresh), step):
            chunk = fresh[i : i + step]
            if pg:
                rows = _pg_insert(conn, chunk, received_at)
            else:
                params = tuple(itertools.chain.from_iterable(
                    (*_event_values(a, _sqlite_datetime(a.event.occurred_at)), at) for a in chunk))
                rows = _sqlite_ids(conn, conn.exec_driver_sql(_sqlite_sql(len(chunk)), params), chunk, received_at)
            inserted += [(row_id, unique[event_id].event) for row_id, event_id in rows]
    if rejected:
        conn.execute(dead_letters.insert(), [dead_letter_row(d, received_at) for d in rejected])
    inserted.sort(key=lambda r: r[0])
    return inserted


def dead_letter_row(d: DeadLetter, received_at: dt.datetime) -> dict:
    """The ``dead_letters`` row of ``d``: texts fitted to their columns; a message longer than
    ``DEAD_RAW_KEPT`` bytes keeps only its first ``DEAD_RAW_KEPT`` and the reason ends with
    ``[raw: first K of N bytes, sha256 HEX]`` (the hash of the whole message)."""
    raw, reason = d.raw, _fit(d.reason, 4000)
    if len(raw) > DEAD_RAW_KEPT:
        reason += f" [raw: first {DEAD_RAW_KEPT} of {len(raw)} bytes, sha256 {hashlib.sha256(raw).hexdigest()}]"
        raw = raw[:DEAD_RAW_KEPT]
    return {"received_at": received_at, "topic": _fit(d.topic, 255), "reason": reason,
            "gate_id": _fit(d.gate_id, 64), "event_id": _fit(d.event_id, 36), "raw": raw}


def _fit(text: str | None, size: int) -> str | None:
    """A dead letter's text as every database stores it: NUL characters (refused by PostgreSQL)
    shown as U+FFFD and cut to the column's size. The raw bytes keep the exact message; a dead
    letter the database refused would be retried forever and stall the ingest."""
    if text is None:
        return None
    return text.replace("\x00", "\ufffd")[:size]


def _sqlite_ids(conn: Connection, result, chunk: list[Accepted], at: dt.datetime) -> list[tuple[int, str]]:
    """(id, event_id) of the rows one SQLite multi-row insert really inserted.

    When every row was inserted (the usual case) SQLite gave them consecutive rowids in VALUES
    order under the write lock (new rowid = largest + 1), ending at ``lastrowid``; one single-row
    query confirms the first one. Otherwise (duplicates, or the check fails) the rows are looked up
    by event id and this batch's ``received_at``.
    """
    n, last = result.rowcount, result.lastrowid
    if n == len(chunk) and last:
        first = conn.exec_driver_sql(
            "SELECT id FROM events WHERE event_id = ?", (chunk[0].event.event_id,)
        ).scalar()
        if first == last - n + 1:
            return [(first + i, a.event.event_id) for i, a in enumerate(chunk)]
    if n == 0:
        return []
    return list(
        conn.execute(
            select(events.c.id, events.c.event_id).where(
                events.c.event_id.in_([a.event.event_id for a in chunk]), events.c.received_at == at
            )
        )
    )

