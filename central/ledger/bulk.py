"""Set-based inserts for the month's bulk writes (shifts, flags, statements, lines).

``insert_rows(conn, table, rows)`` inserts a list of same-keyed dicts with ONE compiled statement
and the driver's ``executemany``, converting each value with the column type's own bind processor
(the conversion SQLAlchemy applies itself, so what is stored is identical to ``conn.execute(insert(
table), rows)``) but without SQLAlchemy's per-row parameter assembly, which is most of the cost of
a 125,000-row insert. Tables whose statement needs Python-side column defaults for keys the rows
do not carry fall back to ``conn.execute(insert(table), rows)``. Runs inside the caller's
transaction; raises what the driver raises (``SQLAlchemyError`` subclasses).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Table, insert
from sqlalchemy.engine import Connection


def insert_rows(conn: Connection, table: Table, rows: Sequence[dict]) -> None:
    """Insert ``rows`` (dicts with the same keys, column names of ``table``) into ``table``."""
    if not rows:
        return
    keys = list(rows[0])
    dialect = conn.dialect
    compiled = insert(table).compile(dialect=dialect, column_keys=keys)
    names = list(compiled.positiontup) if compiled.positional else list(compiled.binds)
    if set(names) != set(keys):  # Python-side defaults or renamed binds: let SQLAlchemy do it
        conn.execute(insert(table), list(rows))
        return
    procs = {k: table.c[k].type.dialect_impl(dialect).bind_processor(dialect) for k in keys}
    if compiled.positional:
        order = [(k, procs[k]) for k in names]
        params = [tuple(p(r[k]) if p is not None else r[k] for k, p in order) for r in rows]
    else:
        conv = [(k, p) for k, p in procs.items() if p is not None]
        params = []
        for r in rows:
            d = dict(r)
            for k, p in conv:
                d[k] = p(d[k])
            params.append(d)
    conn.exec_driver_sql(compiled.string, params)
