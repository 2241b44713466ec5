"""The sizes and ranges of the office database's columns, checked where a value enters (a CSV row,
a form, a command-line option), so SQLite and PostgreSQL refuse the same values the same way.

The sizes are read from the tables themselves (``central.registry.schema``,
``central.rotation.schema``, ...: ``String(64)`` holds 64 characters), never repeated as numbers.
A whole number must fit the column's SQL type on every database: ``Integer`` is 32-bit
(-2147483648..2147483647: PostgreSQL's ``integer``), ``BigInteger`` 64-bit. Text holds no NUL
character (PostgreSQL refuses it). SQLite checks none of this itself: without these checks it
stores a 100-character registration in a ``VARCHAR(64)`` while PostgreSQL raises.

Each problem is one English reason naming the column, as the CSV readers word theirs
(``registration is longer than 64 characters (100)``); ``central.web.service_texts`` puts them in
pt-BR.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from sqlalchemy import BigInteger, Integer, SmallInteger, Table

from portgate.errors import BadInput

#: (lowest, highest) whole number of each SQL integer type, the narrowest first that matches.
INT_RANGES: tuple[tuple[type, int, int], ...] = (
    (SmallInteger, -2**15, 2**15 - 1),
    (BigInteger, -2**63, 2**63 - 1),
    (Integer, -2**31, 2**31 - 1),
)


def int_range(table: Table, column: str) -> tuple[int, int]:
    """(lowest, highest) whole number ``table.column`` holds on every database."""
    col_type = table.c[column].type
    for kind, low, high in INT_RANGES:
        if isinstance(col_type, kind):
            return low, high
    raise TypeError(f"{table.name}.{column} is not a whole-number column")


def text_limit(table: Table, column: str) -> int | None:
    """The most characters ``table.column`` holds (``String(64)`` -> 64); ``None`` for ``Text``."""
    return getattr(table.c[column].type, "length", None)


def problem(table: Table, column: str, value: object) -> str | None:
    """Why ``value`` does not fit ``table.column`` (one English reason naming the column), or
    ``None`` when it fits. ``None`` values, dates and other types are the caller's to check."""
    if isinstance(value, str):
        if "\x00" in value:
            return f"{column} contains a NUL character"
        limit = text_limit(table, column)
        if limit is not None and len(value) > limit:
            return f"{column} is longer than {limit} characters ({len(value)})"
    elif isinstance(value, int) and not isinstance(value, bool) and isinstance(
            table.c[column].type, Integer):
        low, high = int_range(table, column)
        if not low <= value <= high:
            return f"{column} {value} is outside {low}..{high}"
    return None


def problems(table: Table, values: Mapping[str, object], columns: Iterable[str] | None = None) -> list[str]:
    """Every ``problem`` of ``values`` against the columns of ``table`` they name (keys that are
    not columns of ``table`` are skipped), in ``columns`` order when given."""
    names = list(columns) if columns is not None else list(values)
    found = (problem(table, name, values[name]) for name in names
             if name in values and name in table.c)
    return [p for p in found if p is not None]


def check(table: Table, values: Mapping[str, object], *, where: str | None = None,
          columns: Iterable[str] | None = None) -> None:
    """Raise one ``BadInput`` (``where`` as its place, the reasons joined by ``; ``) when a value
    of ``values`` does not fit its column of ``table``; nothing is written by the caller then."""
    found = problems(table, values, columns)
    if found:
        raise BadInput("; ".join(found), where=where)
