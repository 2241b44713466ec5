"""The office's check of each gate's signed chain on ingest (wire/chain.py, docs/evidence.md).

``central.ingest.check.signature_problem`` (in ``event_store.check``, per message): for a gate with
registered public keys (``<keys_dir>/<gate>.pub``) the event must carry a signature by one of them
(its verdict chain-covered: ``central.ingest.runs``, one signature per run of linked events),
else it becomes a dead letter (raw bytes kept) whose reason starts ``CHAIN_BREAK <kind> gate <g>
seq <n>``. A valid ``SIGNING_KEY`` rollover adds the key it names to the gate's file.

``record`` (in the batch's transaction; the decisions are the pure ``check.link_breaks``): every
newly inserted signed event gets an ``event_links`` row (its hash and ``prev``, 32 bytes each); each link between seq n-1 and n is checked once, when the second of the
two arrives (arrival order is free: priority events overtake), and a mismatch or a second event with
the same seq is a ``chain_breaks`` row (PREV_MISMATCH, FORKED); the chain dead letters of the batch
are ``chain_breaks`` rows too (BAD_SIGNATURE, UNSIGNED, UNKNOWN_KEY). Nothing is dropped: the event
stays in ``events`` or in ``dead_letters`` and the break names the gate and the seq range.
"""

from __future__ import annotations

import datetime as dt
import itertools

import structlog
from sqlalchemy import select
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError

from central.ingest.check import PREFIX, BreakRow, forked, link_breaks, link_row, rejected_breaks  # noqa: F401 - PREFIX re-exported
from central.ledger.schema import chain_breaks, event_links, events
from wire.events import Event

log = structlog.get_logger("central.ingest")


def record(conn: Connection, inserted: list[tuple[int, Event]], rejected, now: dt.datetime,
           accepted=()) -> list[BreakRow]:
    """Inside the batch's transaction: link rows for the new signed events, and the breaks found
    (also logged as ``CHAIN_BREAK`` warnings). Returns the breaks recorded. ``accepted``: the
    batch's ``Accepted`` verdicts, whose ``digest`` (computed with the signature verdicts) saves
    hashing an inserted event again."""
    found = rejected_breaks(rejected)
    signed = [e for _row, e in inserted if e.sig]
    if signed:
        digests = {id(a.event): a.digest for a in accepted if a.digest}
        rows: dict[tuple[str, int], dict] = {}
        twins = []  # a second new event claiming a seq of the same batch: FORKED against the first
        for e in signed:
            key = (e.gate_id, e.seq)
            if key in rows:
                twins.append(forked(e.gate_id, e.seq, rows[key]["event_id"], e.event_id))
            else:
                rows[key] = link_row(e, digests.get(id(e)))
        found += _links(conn, rows) + twins
    if found:
        conn.execute(chain_breaks.insert(), [{
            "gate_id": b.gate_id, "seq_from": b.seq_from, "seq_to": b.seq_to, "kind": b.kind,
            "detail": b.detail, "event_id": b.event_id, "recorded_at": now} for b in found])
        for b in found:
            log.warning("CHAIN_BREAK", kind=b.kind, gate_id=b.gate_id, seq_from=b.seq_from,
                        seq_to=b.seq_to, detail=b.detail)
    return found


def _links(conn: Connection, rows: dict[tuple[str, int], dict]) -> list[BreakRow]:
    """The ledger's links around ``rows`` read (one plain statement per gate of the batch: its seq
    range and one either side), the pure ``link_breaks`` applied, the fresh rows inserted
    (``_insert_links``). A held seq (a fork, rare) has its first stored event's id looked up in ``events``
    for the break's detail."""
    gates: dict[str, list[int]] = {}
    for gate, seq in rows:
        span = gates.get(gate)
        if span is None:
            gates[gate] = [seq, seq]
        elif seq < span[0]:
            span[0] = seq
        elif seq > span[1]:
            span[1] = seq
    pg = conn.dialect.name == "postgresql"
    have = {}
    for gate, (low, high) in gates.items():
        for s, h, p, seg in conn.exec_driver_sql(_PG_NEAR if pg else _SQLITE_NEAR, (gate, low - 1, high + 1)):
            have[(gate, s)] = {"hash": bytes(h), "prev": bytes(p), "segment": bool(seg)}
    for key in rows.keys() & have.keys():
        have[key]["event_id"] = conn.execute(
            select(events.c.event_id).where(events.c.gate_id == key[0], events.c.seq == key[1])
            .order_by(events.c.id).limit(1)).scalar()
    fresh, out = link_breaks(rows, have)
    if fresh:
        _insert_links(conn, fresh)
    return out


def _insert_links(conn: Connection, fresh: list[dict]) -> None:
    """Insert the ``link_row`` rows ``fresh`` (a (gate, seq) already held is left as it is: ``ON
    CONFLICT DO NOTHING``), by plain driver calls: no per-row bind processing."""
    values = [(r["gate_id"], r["seq"], r["hash"], r["prev"], r["segment"]) for r in fresh]
    if conn.dialect.name == "postgresql":
        _pg_links(conn, values)
    else:  # SQLite: one multi-row VALUES per 1000 rows (a third less than executemany's row steps)
        for i in range(0, len(values), _LINKS_PER_STATEMENT):
            chunk = values[i:i + _LINKS_PER_STATEMENT]
            conn.exec_driver_sql(_sqlite_links(len(chunk)), tuple(itertools.chain.from_iterable(chunk)))


_SQLITE_NEAR = f"SELECT seq, hash, prev, segment FROM {event_links.name} WHERE gate_id = ? AND seq BETWEEN ? AND ?"
_PG_NEAR = _SQLITE_NEAR.replace("?", "%s")
_LINK_COLUMNS = "gate_id, seq, hash, prev, segment"
_LINKS_PER_STATEMENT = 1000  # 5 parameters a row, well under SQLite's 32766


def _sqlite_links(n_rows: int) -> str:
    return (f"INSERT INTO {event_links.name} ({_LINK_COLUMNS}) VALUES " + ", ".join(["(?, ?, ?, ?, ?)"] * n_rows)
            + " ON CONFLICT (gate_id, seq) DO NOTHING")


# PostgreSQL: the rows are fresh (``link_breaks`` leaves out every seq the ledger held when the batch
# read its neighbours), so they go by one binary ``COPY`` straight into ``event_links`` (psycopg
# writes each row in C), inside a savepoint. Another writer may have inserted one of the same
# (gate, seq) since that read (two workers, a forked seq): the COPY then fails on the primary key,
# the savepoint is rolled back and the rows go by ``COPY`` into a temporary table of the connection
# and ``INSERT ... SELECT ... ON CONFLICT DO NOTHING`` (the held link is kept, the others go in).
# The staging table is emptied after each use (as ``event_insert._pg_insert`` does).
_PG_LINK_DIRECT = f"COPY {event_links.name} ({_LINK_COLUMNS}) FROM STDIN (FORMAT BINARY)"
_PG_LINK_STAGE = "ingest_links"
_PG_LINK_TYPES = ("text", "bigint", "bytea", "bytea", "boolean")
_PG_LINK_CREATE = (f"CREATE TEMPORARY TABLE IF NOT EXISTS {_PG_LINK_STAGE} (gate_id text, seq bigint, "
                   "hash bytea, prev bytea, segment boolean) ON COMMIT DELETE ROWS")
_PG_LINK_COPY = f"COPY {_PG_LINK_STAGE} ({_LINK_COLUMNS}) FROM STDIN (FORMAT BINARY)"
_PG_LINKS = (f"INSERT INTO {event_links.name} ({_LINK_COLUMNS}) SELECT {_LINK_COLUMNS} FROM {_PG_LINK_STAGE} "
             "ON CONFLICT (gate_id, seq) DO NOTHING")


def _pg_links(conn: Connection, values: list[tuple]) -> None:
    """PostgreSQL: insert the link rows ``values`` ((gate, seq, hash, prev, segment) each) inside
    the caller's transaction; a (gate, seq) already held is left as it is. A driver error is raised
    as SQLAlchemy's ``DBAPIError`` of it (the writer retries or splits the batch as for any
    statement)."""
    dbapi = conn.dialect.loaded_dbapi
    try:
        with conn.connection.driver_connection.cursor() as cur:
            cur.execute("SAVEPOINT ingest_links")
            try:
                _pg_copy(cur, _PG_LINK_DIRECT, values)
            except dbapi.errors.UniqueViolation:  # held meanwhile: keep it, insert the others
                cur.execute("ROLLBACK TO SAVEPOINT ingest_links")
                cur.execute(_PG_LINK_CREATE)  # (each time: a rolled back transaction takes the table with it)
                _pg_copy(cur, _PG_LINK_COPY, values)
                cur.execute(_PG_LINKS)
                cur.execute(f"DELETE FROM {_PG_LINK_STAGE}")
            cur.execute("RELEASE SAVEPOINT ingest_links")
    except dbapi.Error as exc:
        raise DBAPIError.instance(_PG_LINKS, None, exc, dbapi.Error, dialect=conn.dialect) from exc


def _pg_copy(cur, sql: str, values: list[tuple]) -> None:
    with cur.copy(sql) as copy:
        copy.set_types(_PG_LINK_TYPES)
        write = copy.write_row
        for row in values:
            write(row)
