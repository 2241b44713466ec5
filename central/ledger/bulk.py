"""Set-based inserts for the month's bulk writes (shifts, flags, statements, lines).

``insert_rows(conn, table, rows)`` inserts a list of same-keyed dicts; ``insert_tuples(conn, table,
names, tuples)`` the same as tuples in the order of ``names``. Both send ONE statement for the whole
batch: on PostgreSQL (psycopg) a ``COPY ... FROM STDIN`` (binary format where the columns' types
allow, ``_copy``), elsewhere one compiled INSERT through the
driver's ``executemany`` (on SQLite into a table whose writes are counted, with the counter
bumped once for the batch: ``central.ledger.changes.counted_in_bulk``). Each value is converted by its column type's own bind processor (the
conversion SQLAlchemy applies itself, so what is stored is identical to ``conn.execute(insert(
table), rows)``) but without SQLAlchemy's per-row parameter assembly, which is most of the cost of
a 125,000-row insert; SQLite's ``DATETIME`` and ``DATE`` processors are replaced by
``datetime.isoformat`` forms that give the same text (``YYYY-MM-DD HH:MM:SS.ffffff`` of the wall
time, ``YYYY-MM-DD``). ``bind_tuples`` gives the converted tuples without inserting them (what the
driver stores and hands back, for comparing a batch with stored rows).

``first_column(conn, query)`` reads the other way: the first column of every row of a query (the
month's raw events), on PostgreSQL (psycopg) in binary format, where a ``bytea`` comes as its
bytes instead of hex text the server encodes and the client decodes (half the time of 50,000 raw
events read as text).

Tables whose statement needs Python-side column defaults for keys the rows do not carry fall back
to ``conn.execute(insert(table), rows)``. Runs inside the caller's transaction; raises what
SQLAlchemy raises (``SQLAlchemyError`` subclasses: ``IntegrityError`` for a duplicate key, the whole
batch failing). An interrupt (``KeyboardInterrupt``, SIGTERM's ``Terminated``, ``SystemExit``: not an
``Exception``) raised while the driver's connection is used directly invalidates the connection
(``_driver``: closed, its server session ended) as SQLAlchemy does for one raised inside its own
``execute``: psycopg can leave it mid-protocol (a COPY the server had started, ``another command
is already in progress``), where a rollback would fail and hide the interrupt.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Callable, Iterable, Iterator, Sequence
from operator import itemgetter

from sqlalchemy import Boolean, Table, insert
from sqlalchemy.dialects.sqlite import DATE as SQLITE_DATE
from sqlalchemy.dialects.sqlite import DATETIME as SQLITE_DATETIME
from sqlalchemy.engine import Connection, Dialect
from sqlalchemy.exc import DBAPIError

from central.ledger.changes import counted_in_bulk
from portgate.interrupts import interrupt_in

Processor = Callable[[object], object] | None

_SQLITE_DATETIME_FORMAT = SQLITE_DATETIME._storage_format
_SQLITE_DATE_FORMAT = SQLITE_DATE._storage_format


def _sqlite_datetime(default: Callable[[object], object]) -> Callable[[object], object]:
    memo: dict[dt.datetime, str] = {}  # a batch's times repeat (period bounds, the run's now)
    utc = dt.UTC

    def process(value):
        if type(value) is dt.datetime:  # the wall time (26 characters), as SQLAlchemy writes it
            zone = value.tzinfo
            if zone is utc or zone is None:  # equal values: equal wall times
                text = memo.get(value)
                if text is None:
                    text = memo[value] = value.isoformat(" ", "microseconds")[:26]
                return text
            return value.isoformat(" ", "microseconds")[:26]
        return default(value)
    return process


def _sqlite_date(default: Callable[[object], object]) -> Callable[[object], object]:
    memo: dict[dt.date, str] = {}  # a month has a few dozen dates

    def process(value):
        if type(value) is dt.date:
            text = memo.get(value)
            if text is None:
                text = memo[value] = value.isoformat()
            return text
        return default(value)
    return process


def _boolean(default: Callable[[object], object], native: bool) -> Callable[[object], object]:
    """``Boolean``'s processor with ``True``/``False`` done first: themselves (native booleans) or
    1/0; anything else as SQLAlchemy does it (``None``, 0/1, an error for other values)."""
    true, false = (True, False) if native else (1, 0)

    def process(value):
        if value is True:
            return true
        if value is False:
            return false
        return default(value)
    process.keeps = bool if native else None  # values of this exact type come back as they are
    return process


def processors(dialect: Dialect, table: Table, names: Sequence[str]) -> list[Processor]:
    """The bind processor of each column of ``names`` (``None`` where the value goes as it is)."""
    out: list[Processor] = []
    for name in names:
        impl = table.c[name].type.dialect_impl(dialect)
        proc = impl.bind_processor(dialect)
        if proc is not None and type(impl) is SQLITE_DATETIME and impl._storage_format == _SQLITE_DATETIME_FORMAT:
            proc = _sqlite_datetime(proc)
        elif proc is not None and isinstance(impl, SQLITE_DATE) and impl._storage_format == _SQLITE_DATE_FORMAT:
            proc = _sqlite_date(proc)  # (pysqlite's DATE subclass: DATE's processor when not native)
        elif proc is not None and type(impl) is Boolean:
            proc = _boolean(proc, dialect.supports_native_boolean)
        out.append(proc)
    return out


def bind_tuples(dialect: Dialect, table: Table, names: Sequence[str],
                tuples: Iterable[Sequence]) -> list[tuple]:
    """``tuples`` (values in the order of ``names``, each of ``len(names)``) converted as the
    driver receives them (column by column)."""
    procs = processors(dialect, table, names)
    rows = tuples if isinstance(tuples, list) else list(tuples)
    procs = [None if p is not None and _keeps_all(p, rows, i) else p for i, p in enumerate(procs)]
    if all(p is None for p in procs):
        return [t if type(t) is tuple else tuple(t) for t in rows]
    if not rows:
        return []
    columns: list = list(zip(*rows))
    for i, p in enumerate(procs):
        if p is not None:
            columns[i] = map(p, columns[i])
    return list(zip(*columns))


def _keeps_all(proc: Callable[[object], object], rows: list, i: int) -> bool:
    """Whether ``proc`` gives back every value of column ``i`` of ``rows`` as it is (its ``keeps``:
    the one type whose values it keeps, native booleans; checked by exact type, so 1 is not
    taken for True)."""
    keeps = getattr(proc, "keeps", None)
    return keeps is not None and set(map(type, map(itemgetter(i), rows))) <= {keeps}


def insert_tuples(conn: Connection, table: Table, names: Sequence[str], tuples: Sequence[Sequence],
                  *, bound: bool = False) -> None:
    """Insert ``tuples`` (values in the order of ``names``, column names of ``table``); ``bound``:
    already converted by ``bind_tuples``. No Python-side defaults are applied: every column without
    a value in ``names`` must be nullable, autoincrement or have a server default."""
    if not tuples:
        return
    dialect = conn.dialect
    params = list(tuples) if bound else bind_tuples(dialect, table, names, tuples)
    if dialect.name == "postgresql" and dialect.driver == "psycopg":
        _copy(conn, table, names, params)
        return
    compiled = insert(table).compile(dialect=dialect, column_keys=list(names))
    order = list(compiled.positiontup) if compiled.positional else list(compiled.binds)
    if compiled.positional and order != list(names):
        at = [list(names).index(k) for k in order]
        params = [tuple(p[i] for i in at) for p in params]
    elif not compiled.positional:
        params = [dict(zip(names, p)) for p in params]
    with counted_in_bulk(conn, table.name, len(params)):
        conn.exec_driver_sql(compiled.string, params)


#: PostgreSQL types a binary COPY takes from their Python values as the text COPY does (the
#: same stored value): bool, bytea, int8, int2, int4, text, varchar, date, timestamptz (an aware
#: time as its instant; a naive one is refused with ``TypeError``, where text would take it in
#: the session's zone: no caller binds one).
_BINARY_OIDS = frozenset((16, 17, 20, 21, 23, 25, 1043, 1082, 1184))
_COLUMN_OIDS = ("SELECT attname, atttypid::int FROM pg_attribute "
                "WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped")


def _copy(conn: Connection, table: Table, names: Sequence[str], params: list[tuple]) -> None:
    """``COPY table (names) FROM STDIN`` on the connection's open transaction (psycopg), in binary
    format when every column's type is one of ``_BINARY_OIDS`` (asked of the catalog: a third of
    the client's CPU of formatting the rows as text), else as text."""
    preparer = conn.dialect.identifier_preparer
    target = preparer.format_table(table)
    sql = f"COPY {target} ({', '.join(preparer.quote(n) for n in names)}) FROM STDIN"
    try:
        with _driver(conn) as dbapi_conn, dbapi_conn.cursor() as cur:
            found = dict(cur.execute(_COLUMN_OIDS, (target,)).fetchall())
            oids = [found.get(n) for n in names]
            binary = all(oid in _BINARY_OIDS for oid in oids)
            with cur.copy(sql + " (FORMAT BINARY)" if binary else sql) as copy:
                if binary:
                    copy.set_types(oids)
                for row in params:
                    copy.write_row(row)
    except conn.dialect.loaded_dbapi.Error as exc:
        raise DBAPIError.instance(sql, None, exc, conn.dialect.loaded_dbapi.Error,
                                  dialect=conn.dialect) from exc


@contextlib.contextmanager
def _driver(conn: Connection) -> Iterator:
    """``conn``'s driver connection, used directly; an interrupt raised meanwhile (a
    ``BaseException`` that is not an ``Exception``, or a driver error raised while one unwound:
    ``interrupt_in``) invalidates ``conn`` before it goes on: the driver's connection is closed
    (the server ends its session and rolls its transaction back), and the caller's rollback and
    the pool's reset do not touch it (issue 32: a Ctrl-C inside psycopg's COPY start left it in
    COPY mode; the rollback's ``another command is already in progress`` was reported instead of
    the interrupt, exit 2)."""
    try:
        yield conn.connection.driver_connection
    except BaseException as exc:
        if not isinstance(exc, Exception) or interrupt_in(exc) is not None:  # (psycopg's clean-up failed)
            conn.invalidate(exc)
        raise


def first_column(conn: Connection, query) -> list:
    """The first column of each row of ``query`` (a Core select whose parameters are bound in it),
    as the driver hands it back, in the database's order. On PostgreSQL through psycopg the rows
    are asked for in binary format (the same values: a ``bytea`` as its bytes); elsewhere the
    driver's rows as they come. Runs in the caller's transaction; raises what SQLAlchemy raises
    (a psycopg error mapped to SQLAlchemy's ``DBAPIError`` subclass)."""
    dialect = conn.dialect
    if dialect.name != "postgresql" or dialect.driver != "psycopg":
        result = conn.execute(query)
        try:  # the driver's rows as they come, without building a result row each
            return [r[0] for r in result.cursor.fetchall()]
        finally:
            result.close()
    compiled = query.compile(dialect=dialect, compile_kwargs={"render_postcompile": True})
    if not conn.in_transaction():  # as an execute would: the caller's commit or rollback ends it
        conn.begin()
    try:
        with _driver(conn) as dbapi_conn, dbapi_conn.cursor(binary=True) as cur:
            cur.execute(compiled.string, compiled.params)
            return [r[0] for r in cur.fetchall()]
    except dialect.loaded_dbapi.Error as exc:
        raise DBAPIError.instance(compiled.string, compiled.params, exc, dialect.loaded_dbapi.Error,
                                  dialect=dialect) from exc


def insert_rows(conn: Connection, table: Table, rows: Sequence[dict]) -> None:
    """Insert ``rows`` (dicts with the same keys, column names of ``table``) into ``table``."""
    if not rows:
        return
    keys = list(rows[0])
    compiled = insert(table).compile(dialect=conn.dialect, column_keys=keys)
    names = list(compiled.positiontup) if compiled.positional else list(compiled.binds)
    if set(names) != set(keys):  # Python-side defaults or renamed binds: let SQLAlchemy do it
        conn.execute(insert(table), list(rows))
        return
    insert_tuples(conn, table, keys, [tuple(r[k] for k in keys) for r in rows])
