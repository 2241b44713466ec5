"""Typed parsers for one cell of a data file (``portgate.tables`` reads the rows).

Each takes the cell's text as read (``None`` for a cell a short row lacks) and the column name,
strips surrounding blanks, and returns the typed value or raises ``BadInput`` naming the column and
the value (``date '2026-13-01' is not an ISO date (YYYY-MM-DD)``); the caller adds the file and
line (``portgate.records.build_rows``). An empty cell is "required" unless ``optional`` says what
it means. Every CSV import of the kernel, the ledger, pay and production parses through these.
"""

from __future__ import annotations

import datetime as dt
import enum
import re
import unicodedata
from decimal import Decimal
from typing import TypeVar

from portgate.errors import BadInput

E = TypeVar("E", bound=enum.StrEnum)

#: A plain decimal number: "1,000", "1e3", "NaN", "1_0" are refused.
NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?")
#: a whole number as a person types it: ASCII digits only (``int()`` also takes "٣", "1_000", " 3")
WHOLE = re.compile(r"[+-]?[0-9]+")
#: The words of a yes/no cell (pt-BR and English); an empty cell takes the caller's default.
YES = frozenset({"yes", "true", "1", "sim", "s", "y"})
NO = frozenset({"no", "false", "0", "nao", "não", "n"})
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def required(value: str | None, field: str) -> str:
    """The cell stripped; ``BadInput`` ``<field> is required`` if it is empty or absent."""
    text = (value or "").strip()
    if not text:
        raise BadInput(f"{field} is required")
    return text


def term(value: str | None, field: str) -> str:
    """A required term of an enumerated list the office keeps as text (a worker's ``category``, a
    requisition's ``function``: ``vigia``, ``estivador``, ``vigia_chefe``): ``text`` with its inner
    blanks collapsed to one space and lower-cased, so ``' Vigia '`` and ``'vigia'`` are the same
    rotation list, never two. Raises ``BadInput`` as ``text``."""
    return " ".join(text(value, field).split()).lower()


def shown(value: str) -> str:
    """``value`` in single quotes as a message shows it: each control character, line break and
    invisible format character (Unicode Cf) as ``<U+202E>``, every other character as it is (no
    ``repr``: a refusal read on a page or a terminal shows no doubled backslashes)."""
    return "'" + "".join(f"<U+{ord(c):04X}>" if _hidden(c) else c for c in value) + "'"


def _hidden(c: str) -> bool:
    return bool(_CONTROL.match(c)) or unicodedata.category(c) == "Cf"


def text(value: str | None, field: str) -> str:
    """A required name or id, stripped. Raises ``BadInput`` if it is empty or holds a control
    character, a NUL or a line break (no name or id can: they end up on the gate's screen, in
    one-line logs and in PostgreSQL, which refuses NUL), or an invisible format character (Unicode
    category Cf: a right-to-left override U+202E shows "Ana" as "anA", a zero-width space U+200B
    makes two names that look alike differ; no Portuguese name needs one). The refusal names the
    first such character by its code point and its position (1: the first character)."""
    stripped = required(value, field)
    if stripped.isprintable():  # no Cc, Cf, Zl, Zp (nor Zs but the space): the common case, fast
        return stripped
    for at, c in enumerate(stripped, 1):
        if _CONTROL.match(c):
            raise BadInput(f"{field} {shown(stripped)} contains a control character or line break "
                           f"(U+{ord(c):04X} at character {at})")
        if unicodedata.category(c) == "Cf":
            raise BadInput(f"{field} {shown(stripped)} contains an invisible format character "
                           f"(U+{ord(c):04X} at character {at}): a direction mark or zero-width "
                           f"character is part of no name")
    return stripped


def date(value: str | None, field: str, *, optional: bool = False) -> dt.date | None:
    """An ISO date ``YYYY-MM-DD``; an empty cell is ``None`` if ``optional``, else required."""
    raw = (value or "").strip()
    if not raw:
        if optional:
            return None
        raise BadInput(f"{field} is required")
    try:
        return dt.date.fromisoformat(raw)
    except ValueError as exc:
        raise BadInput(f"{field} {raw!r} is not an ISO date (YYYY-MM-DD)") from exc


def whole(value: str | None, field: str, *, optional: bool = False, default: int | None = None) -> int | None:
    """A whole number (any sign, ASCII digits 0-9: ``int`` alone would take the Arabic-Indic "٣" or
    "1_000"); an empty cell is ``default`` if ``optional``, else required. ``BadInput`` otherwise."""
    raw = (value or "").strip()
    if not raw:
        if optional:
            return default
        raise BadInput(f"{field} is required")
    if not WHOLE.fullmatch(raw):
        raise BadInput(f"{field} {raw!r} is not a whole number")
    return int(raw)


def decimal(value: str | None, field: str, *, places: int | None = None,
            optional: bool = False) -> Decimal | None:
    """A plain non-negative decimal (``NUMBER``) with at most ``places`` decimal places; an empty
    cell is ``None`` if ``optional``, else required."""
    raw = (value or "").strip()
    if not raw:
        if optional:
            return None
        raise BadInput(f"{field} is required")
    if not NUMBER.fullmatch(raw):
        raise BadInput(f"{field} {raw!r} is not a number (digits with an optional . decimal point)")
    number = Decimal(raw)
    if number < 0:
        raise BadInput(f"{field} {raw!r} must not be negative")
    if places is not None and number.as_tuple().exponent < -places:
        raise BadInput(f"{field} {raw!r} has more than {places} decimal places")
    return number


def yes_no(value: str | None, field: str, *, default: bool) -> bool:
    """``YES`` or ``NO`` (any case); an empty cell is ``default``."""
    raw = (value or "").strip().lower()
    if not raw:
        return default
    if raw in YES:
        return True
    if raw in NO:
        return False
    raise BadInput(f"{field} {raw!r} is not yes|no")


def choice(cls: type[E], value: str | None, field: str) -> E:
    """A member of the string enum ``cls`` by its value; ``BadInput`` listing the allowed values."""
    try:
        return cls((value or "").strip())
    except ValueError as exc:
        allowed = "|".join(m.value for m in cls)
        raise BadInput(f"{field} {value!r} is not one of {allowed}") from exc


def parse_aware(value: str | None, field: str = "at") -> dt.datetime:
    """An ISO 8601 timestamp that carries an offset, returned in UTC.

    Raises ``BadInput`` for a naive or malformed timestamp (DESIGN.md: times carry their offset), or
    one whose UTC time falls outside year 1..9999.
    """
    try:
        stamp = dt.datetime.fromisoformat((value or "").strip())
    except ValueError as exc:
        raise BadInput(f"{field} {value!r} is not an ISO 8601 timestamp") from exc
    if stamp.tzinfo is None:
        raise BadInput(f"{field} {value!r} has no UTC offset")
    try:
        return stamp.astimezone(dt.UTC)
    except OverflowError as exc:  # 0001-01-01T00:00+03:00, 9999-12-31T23:00-03:00
        raise BadInput(f"{field} {value!r} is out of the representable date range") from exc
