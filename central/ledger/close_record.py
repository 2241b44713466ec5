"""What a month close records of itself, per scope (work dates and zone), in ``close_digests``: the
input and output digests of each worker and of the whole scope, and the change counters
(``central.ledger.changes``) its writes left; and the checks that tell whether a close may digest
the rows it wrote itself instead of reading them back (``counted_as``: nobody else wrote;
``sorts_as_python``: the database orders ids as Python does). Both halves of a close use it: the
shifts' (``central.ledger.reclose``) and the statements' (``central.pay.close``).

Runs inside the caller's transaction; raises what SQLAlchemy raises.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
from collections.abc import Iterator
from zoneinfo import ZoneInfo

from sqlalchemy import String, bindparam, delete, func, inspect, select
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.engine import Connection

from central.ledger.bulk import insert_tuples
from central.ledger.changes import read_counters
from central.ledger.tables import close_digests

#: The digest of a worker with nothing (no events, no stored rows).
EMPTY = hashlib.sha256(b"").hexdigest()
#: The ``close_digests`` kind and registration of the digest of all the stored shifts of a scope.
WHOLE_SHIFTS, WHOLE = "shiftall", "*"
#: The ``close_digests`` kind of the change counters a close left (registration: the table name,
#: input digest: the counter in decimal).
CHANGES = "changes"


def scope_key(date_from: dt.date, date_to: dt.date, zone: ZoneInfo) -> str:
    """``YYYY-MM-DD..YYYY-MM-DD@<zone>``: the grain of a close's digests."""
    return f"{date_from.isoformat()}..{date_to.isoformat()}@{zone.key}"


def stored_digests(conn: Connection, scope: str, kind: str) -> dict[str, tuple[str, str]]:
    """``{registration: (input digest, output digest)}`` of the last close of ``scope``."""
    c = close_digests.c
    return {reg: (i, o) for reg, i, o in conn.execute(
        select(c.registration, c.input_digest, c.output_digest).where(c.scope == scope, c.kind == kind))}


def write_digests(conn: Connection, scope: str, kind: str, digests: dict[str, tuple[str, str]],
                  now: dt.datetime) -> None:
    """Replace the stored digests of these workers (``{registration: (input, output)}``); on
    PostgreSQL the old ones are deleted by one statement with the registrations as one array."""
    c = close_digests.c
    regs = list(digests)
    if conn.dialect.name == "postgresql":  # one array parameter: one statement text for any number
        conn.execute(_DELETE_DIGESTS_PG, {"scope": scope, "kind": kind, "regs": regs})
    else:
        for chunk in range(0, len(regs), 2000):
            conn.execute(_DELETE_DIGESTS, {"scope": scope, "kind": kind, "regs": regs[chunk:chunk + 2000]})
    insert_tuples(conn, close_digests, [c.scope.name, c.kind.name, c.registration.name,
                                        c.input_digest.name, c.output_digest.name, c.recorded_at.name],
                  [(scope, kind, reg, i, o, now) for reg, (i, o) in digests.items()])


def counters_state(conn: Connection, scope: str, names: tuple[str, ...]) -> tuple[bool, dict[str, int]]:
    """``(unchanged, counters)``: the change counters (``central.ledger.changes``) of tables
    ``names`` now, and whether they are all the ones the last close of ``scope`` recorded. No
    counter table (a ledger not migrated to 0014), a missing counter or none recorded: not
    unchanged (and ``{}`` when there is no table)."""
    if not inspect(conn).has_table("ledger_changes"):
        return False, {}
    now_c = read_counters(conn)
    counters = {n: now_c[n] for n in names if n in now_c}
    recorded = stored_digests(conn, scope, CHANGES)
    unchanged = len(counters) == len(names) and all(
        recorded.get(n, ("",))[0] == str(v) for n, v in counters.items())
    return unchanged, counters


def record_counters(conn: Connection, scope: str, counters: dict[str, int], now: dt.datetime) -> None:
    """Store ``counters`` as the ones the close of ``scope`` left (nothing when ``{}``)."""
    if counters:
        write_digests(conn, scope, CHANGES, {n: (str(v), EMPTY) for n, v in counters.items()}, now)


_DELETE_DIGESTS = delete(close_digests).where(
    close_digests.c.scope == bindparam("scope"), close_digests.c.kind == bindparam("kind"),
    close_digests.c.registration.in_(bindparam("regs", expanding=True)))
# PostgreSQL: the registrations as one array (an expanding IN of 2,000 is rendered and parsed anew
# on each call; ``= ANY``'s text stays the same)
_DELETE_DIGESTS_PG = delete(close_digests).where(
    close_digests.c.scope == bindparam("scope"), close_digests.c.kind == bindparam("kind"),
    close_digests.c.registration == func.any(bindparam("regs", type_=ARRAY(String))))


@contextlib.contextmanager
def utc_times(conn: Connection) -> Iterator[None]:
    """PostgreSQL: the session time zone set to UTC for the reads inside (``set_config(...,
    true)``: this transaction only), then set back to what it was: stored times come back as the
    same instants with ``datetime.timezone.utc``, which psycopg loads several times faster than a
    named zone (even ``Etc/UTC``). Only for reads whose times are compared or digested as
    instants (msgpack timestamps), never printed: a time printed into a flag or a reason keeps
    the session's zone. A failing read leaves the transaction to its rollback, which undoes the
    setting. Nothing on SQLite."""
    if conn.dialect.name != "postgresql":
        yield
        return
    was = conn.exec_driver_sql("SELECT current_setting('TimeZone')").scalar()
    conn.exec_driver_sql("SELECT set_config('TimeZone', 'UTC', true)")
    yield
    conn.exec_driver_sql("SELECT set_config('TimeZone', %(was)s, true)", {"was": was})


def sorts_as_python(conn: Connection, table: str, column: str) -> bool:
    """Whether ``ORDER BY table.column`` puts strings in Python's ``str`` order (code points):
    always on SQLite (BINARY: UTF-8 bytes); on PostgreSQL when the column's collation is libc's
    ``C`` or ``POSIX`` (byte order) in a UTF8 database (the test clusters' ``initdb --locale=C``);
    not for any other collation or provider (a language's order: ``en_US``, ICU) nor another
    database. A close computes the digests of the rows it wrote itself only when this holds (the
    whole digests are of the rows in the database's order)."""
    if conn.dialect.name == "sqlite":
        return True
    if conn.dialect.name != "postgresql":
        return False
    provider = ("d.datlocprovider = 'c'" if (conn.dialect.server_version_info or (0,)) >= (15,)
                else "TRUE")  # before 15 every database collation is libc's
    return bool(conn.exec_driver_sql(
        "SELECT CASE WHEN co.collname = 'default' THEN " + provider + " AND d.datcollate IN ('C', 'POSIX') "
        "ELSE co.collprovider = 'c' AND co.collcollate IN ('C', 'POSIX') END "
        "AND pg_encoding_to_char(d.encoding) = 'UTF8' "
        "FROM pg_attribute a JOIN pg_collation co ON co.oid = a.attcollation "
        "JOIN pg_database d ON d.datname = current_database() "
        "WHERE a.attrelid = to_regclass(%(t)s) AND a.attname = %(c)s",
        {"t": table, "c": column}).scalar())


def counted_as(conn: Connection, was: dict[str, int], now: dict[str, int], wrote: dict[str, int]) -> bool:
    """Whether the change counters ``now`` are ``was`` (read before) plus exactly this session's
    own writes ``wrote`` (``{table: rows written}``; ``central.ledger.changes``: SQLite counts rows,
    PostgreSQL each writing transaction once per table), so that nobody else wrote those tables
    in between. False when a counter is missing (no counter table, an old ledger)."""
    per_row = conn.dialect.name == "sqlite"
    return all(n in was and n in now and now[n] == was[n] + (k if per_row else int(k > 0))
               for n, k in wrote.items())
