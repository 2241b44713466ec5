"""Change counters of the derived ledger tables, kept by the database itself (RULES.md G8: a derived
row edited behind the ledger's back is put right by the next close).

``ledger_changes(name, n)`` holds one counter per table of ``WATCHED`` (shifts, shift_flags,
statements, statement_lines). Triggers bump it after every INSERT, UPDATE and DELETE on the table:
on SQLite once per row (``FOR EACH ROW``: SQLite has no statement triggers), on PostgreSQL after
each statement (``FOR EACH STATEMENT``, one plpgsql function ``ledger_changes_bump``; TRUNCATE
too), once per table and transaction (a transaction-local setting ``portgate.changed_<table>``
remembers it: updating one row 10^5 times in a transaction walks an ever longer chain of row
versions). The counter row stays locked by the writing transaction until it commits, so a close
that reads the counter before the rows never records a write it did not see. A month close
records the counters it left; an equal counter on the next close means no row of that table was
written since, whoever wrote it. The counters only ever grow; their value means nothing across
databases.

``create_triggers(conn)`` makes the table's rows and the triggers (idempotent); ``read_counters``
reads them. ``counted_in_bulk(conn, table, n)`` wraps a bulk INSERT of ``n`` rows on SQLite: the
counter is bumped by ``n`` in one statement and the table's per-row INSERT trigger is dropped for
the batch and created again from its stored text, all inside the writer's transaction (SQLite DDL
is transactional and SQLite has one writer: no other connection sees the table without its
trigger), so the counter ends where the trigger would have left it, at about half the cost of the
insert. The same DDL is hooked to ``metadata``'s ``after_create`` (``create_all`` in tests
and in ``central.ledger.migrate``'s adoption), migration 0014 holds its own frozen copy.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from sqlalchemy import BigInteger, Column, String, Table, event, inspect, select
from sqlalchemy.engine import Connection

from central.db import metadata

#: The derived tables whose writes are counted.
WATCHED = ("shifts", "shift_flags", "statements", "statement_lines")

ledger_changes = Table(
    "ledger_changes",
    metadata,
    Column("name", String(64), primary_key=True),  # a table of WATCHED
    Column("n", BigInteger, nullable=False),  # writes (SQLite: rows, PostgreSQL: statements) so far
)

_PG_FUNCTION = """
CREATE OR REPLACE FUNCTION ledger_changes_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('portgate.changed_' || TG_TABLE_NAME, true) IS DISTINCT FROM 'y' THEN
        INSERT INTO ledger_changes (name, n) VALUES (TG_TABLE_NAME, 1)
        ON CONFLICT (name) DO UPDATE SET n = ledger_changes.n + 1;
        PERFORM set_config('portgate.changed_' || TG_TABLE_NAME, 'y', true);
    END IF;
    RETURN NULL;
END $$"""


def trigger_ddl(dialect: str, table: str) -> list[str]:
    """The statements that create the counting trigger(s) of ``table`` (idempotent)."""
    if dialect == "postgresql":
        return [f"DROP TRIGGER IF EXISTS {table}_changes ON {table}",
                f"CREATE TRIGGER {table}_changes AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {table} "
                "FOR EACH STATEMENT EXECUTE FUNCTION ledger_changes_bump()"]
    bump = (f"INSERT INTO ledger_changes (name, n) VALUES ('{table}', 1) "
            "ON CONFLICT (name) DO UPDATE SET n = n + 1")
    return [f"CREATE TRIGGER IF NOT EXISTS {table}_changes_{op.lower()} AFTER {op} ON {table} "
            f"FOR EACH ROW BEGIN {bump}; END" for op in ("INSERT", "UPDATE", "DELETE")]


def create_triggers(conn: Connection) -> None:
    """Seed a zero counter per watched table and create the triggers (PostgreSQL: and the
    function). Raises what SQLAlchemy raises; the caller owns the transaction."""
    dialect = conn.dialect.name
    for name in WATCHED:
        conn.exec_driver_sql(f"INSERT INTO ledger_changes (name, n) VALUES ('{name}', 0) "
                             "ON CONFLICT (name) DO NOTHING")
    if dialect == "postgresql":
        conn.exec_driver_sql(_PG_FUNCTION)
    for name in WATCHED:
        for ddl in trigger_ddl(dialect, name):
            conn.exec_driver_sql(ddl)


#: Fewer rows than this keep SQLite's per-row trigger (the DDL is not worth it).
BULK_MIN = 256

_BULK_BUMP = ("INSERT INTO ledger_changes (name, n) VALUES (?, ?) "
              "ON CONFLICT (name) DO UPDATE SET n = n + excluded.n")


@contextlib.contextmanager
def counted_in_bulk(conn: Connection, table: str, n_rows: int) -> Iterator[None]:
    """Around one bulk INSERT of ``n_rows`` rows into ``table`` on SQLite: bump its counter by
    ``n_rows`` first (what the trigger does per row; the DML opens the driver's transaction when
    it is not open yet), drop the table's INSERT trigger, and on the way out create it again
    with its stored ``sqlite_master.sql`` text. A batch that fails part-way leaves the counter
    bumped by all ``n_rows`` (over-counting only sends the next close through the verifying
    path); a transaction SQLite rolled back by itself restores the trigger with it, and so does
    one whose connection SQLAlchemy closed (``KeyboardInterrupt`` inside the driver: nothing is
    done on the closed connection, the interrupt goes on as it was). Anything else
    (PostgreSQL, a table not in ``WATCHED``, fewer than ``BULK_MIN`` rows, no trigger): nothing
    is changed, the trigger counts; with no transaction open after the bump (autocommit) the
    trigger counts the rows too. Raises what SQLAlchemy raises."""
    if conn.dialect.name != "sqlite" or table not in WATCHED or n_rows < BULK_MIN:
        yield
        return
    name = f"{table}_changes_insert"
    if _trigger_sql(conn, table, name) is None:
        yield
        return
    dbapi = conn.connection.driver_connection
    conn.exec_driver_sql(_BULK_BUMP, (table, n_rows))
    sql = _trigger_sql(conn, table, name)  # read again inside the transaction the bump opened
    if sql is None or not dbapi.in_transaction:  # autocommit: the trigger cannot be taken off
        yield  # unseen; it counts the rows again (over-counting is safe)
        return
    conn.exec_driver_sql(f'DROP TRIGGER "{name}"')
    try:
        yield
    finally:
        # else SQLite rolled it all back, the DROP with it; or the connection was closed (an
        # interrupt inside the driver: SQLAlchemy invalidates it, the transaction is gone)
        if not conn.invalidated and dbapi.in_transaction:
            conn.exec_driver_sql(sql)


def _trigger_sql(conn: Connection, table: str, name: str) -> str | None:
    """The stored ``CREATE TRIGGER`` text of trigger ``name`` on ``table`` (SQLite), or ``None``."""
    return conn.exec_driver_sql("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ? "
                                "AND tbl_name = ?", (name, table)).scalar()


def read_counters(conn: Connection) -> dict[str, int]:
    """``{table: counter}`` of the watched tables that have one (a missing one: unknown)."""
    c = ledger_changes.c
    return {name: int(n) for name, n in conn.execute(select(c.name, c.n).where(c.name.in_(WATCHED)))}


@event.listens_for(metadata, "after_create")
def _after_create(target, connection: Connection, **_kw) -> None:
    """``create_all``: the triggers too, once the counter table and the watched tables exist."""
    names = set(inspect(connection).get_table_names())
    if "ledger_changes" in names and names.issuperset(WATCHED):
        create_triggers(connection)
