"""Building records from rows, every bad row named (STYLE.md 3: nothing is half-read).

``build_rows`` (``(where, row)`` pairs), ``build_cells`` (``portgate.tables.iter_cells``) and
``parse_rows`` (rows with a file name) build one record per row with the caller's ``build`` and
either return every record or raise one ``BadInput`` naming every bad row by its place
(``workers.csv:7: status 'x' is not one of ...``), one line each; ``build_each`` returns the good
records and the bad rows' errors for a caller that adds its own checks to the same refusal. The
data files' records and their CSV loading are in ``portgate.records`` (which exports these too).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TypeVar

from portgate.errors import BadInput
from portgate.tables import one_line

R = TypeVar("R")


def build_rows(
    rows: Iterable[tuple[str, Mapping[str, str]]],
    build: Callable[[Mapping[str, str], str], R],
) -> list[R]:
    """Build one record per ``(where, row)`` pair with ``build(row, where)``; raise one
    ``BadInput`` naming every bad row by its ``where`` (``tally.csv:4``, ``message m1 tally[0]``),
    one line each (control characters in a reason escaped, ``portgate.tables.one_line``).
    A row with more cells than the header is bad. Nothing is returned unless every row is good."""
    out, errors = build_each(rows, build)
    raise_bad_rows(errors)
    return out


def build_each(rows: Iterable[tuple[str, Mapping[str, str]]],
                build: Callable[[Mapping[str, str], str], R]) -> tuple[list[R], list[str]]:
    """``build_rows`` without the raise: the good rows' records and the bad rows' errors (for a
    reader that adds its own checks of the good rows, e.g. repeated keys, to the same refusal)."""
    out: list[R] = []
    errors: list[str] = []
    for where, row in rows:
        if None in row:  # more cells than header columns
            errors.append(f"{where}: {len(row[None])} cell(s) more than the header has")
            continue
        try:
            out.append(build(row, where))
        except BadInput as exc:
            errors.append(f"{where}: {one_line(exc.reason)}")
    return out, errors


def line_of(error: str) -> int:
    """The line number of a ``file.csv:LINE: reason`` error (0 when it names none)."""
    head = error.split(": ", 1)[0]
    tail = head.rsplit(":", 1)[-1]
    return int(tail) if tail.isdigit() else 0


def build_cells(
    rows: Iterable[tuple[str, Sequence[str | None], int]],
    build: Callable[[Sequence[str | None], str], R],
) -> list[R]:
    """``build_rows`` for ``portgate.tables.iter_cells``: one record per ``(where, cells, extra)``
    with ``build(cells, where)``, the same one ``BadInput`` naming every bad row (a row with
    ``extra`` cells past the header is bad). Nothing is returned unless every row is good."""
    out: list[R] = []
    errors: list[str] = []
    append = out.append
    for where, cells, extra in rows:
        if extra:
            errors.append(f"{where}: {extra} cell(s) more than the header has")
            continue
        try:
            append(build(cells, where))
        except BadInput as exc:
            errors.append(f"{where}: {one_line(exc.reason)}")
    raise_bad_rows(errors)
    return out


def raise_bad_rows(errors: list[str]) -> None:
    """One ``BadInput`` naming the bad rows, one line each (the first 50 and how many more);
    nothing when there are none."""
    if errors:
        shown = errors[:50] + ([f"... and {len(errors) - 50} more"] if len(errors) > 50 else [])
        raise BadInput("\n".join(shown))


def parse_rows(
    rows: Iterable[Mapping[str, str]],
    build: Callable[[Mapping[str, str]], R],
    *,
    source: str,
    required: Iterable[str] = (),
    first_line: int = 2,
) -> list[R]:
    """Build one record per row with ``build``; raise one ``BadInput`` naming every bad row.

    ``source`` names the file in messages (``workers.csv:7: status 'x' is not one of ...``); a row
    lacking a ``required`` column (a short row) is bad.
    """
    required = tuple(required)

    def checked(row: Mapping[str, str], _where: str) -> R:
        missing = [c for c in required if row.get(c) is None]
        if missing:
            raise BadInput(f"missing column(s) {', '.join(missing)}")
        return build(row)

    return build_rows(((f"{source}:{line}", row) for line, row in enumerate(rows, start=first_line)), checked)
