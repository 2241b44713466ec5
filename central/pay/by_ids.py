"""The statements' queries by a list of ids (``central.pay.versions_save``: the history of a pay
run's shifts, the lines and adjustments of the statements it supersedes), one compiled statement
per query whatever the number of ids.
"""

from __future__ import annotations

from sqlalchemy import String, bindparam, func, select
from sqlalchemy.dialects.postgresql import ARRAY

# One compiled statement each: the id list bound as one expanding parameter, and on PostgreSQL as
# one text parameter split by the server (``IN (SELECT unnest(string_to_array(:ids, :sep)))``:
# the statement text stays the same whatever the number of ids, where an expanding IN of 2,000
# ids is rendered and parsed again on each call; and one string costs the client nothing to
# send, where psycopg dumps an array of 25,000 ids element by element in Python), or as one array
# parameter when an id is empty or holds the separator.
SEP = "\x1f"  # the unit separator


def id_queries(column, *columns, where=None, order_by=()):
    """``(expanding IN query, PostgreSQL array query, PostgreSQL joined-text query)`` selecting
    ``columns`` where ``column`` is one of ``:ids`` (and ``where``)."""
    out = []
    split = func.string_to_array(bindparam("ids", type_=String), bindparam("sep", type_=String))
    for test in (column.in_(bindparam("ids", expanding=True)),
                 column.in_(select(func.unnest(bindparam("ids", type_=ARRAY(String))))),
                 column.in_(select(func.unnest(split)))):
        query = select(*columns).where(test)
        if where is not None:
            query = query.where(where)
        out.append(query.order_by(*order_by))
    return tuple(out)


def by_ids(conn, queries: tuple, ids: list[str]):
    """The result of ``queries`` (``id_queries``) for ``ids``, in the connection's dialect."""
    expanding, pg_array, pg_text = queries
    if conn.dialect.name != "postgresql":
        return conn.execute(expanding, {"ids": list(ids)})
    joined = SEP.join(ids)
    if ids and "" not in ids and joined.count(SEP) == len(ids) - 1:
        return conn.execute(pg_text, {"ids": joined, "sep": SEP})
    return conn.execute(pg_array, {"ids": list(ids)})
