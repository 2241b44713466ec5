"""The one CSV table reader every import uses (workers, cards, shifts, requisitions, periods, crew,
tally, taps...): a UTF-8 file with a header row, read row by row with the place of each row.

``iter_rows(path, required, known=...)`` yields ``(where, row)``: ``where`` is ``"file.csv:LINE"``, LINE the
file line the record starts on (blank lines and newlines inside quoted values counted, from the csv
reader's ``line_num``); ``row`` maps each header column to its cell, ``None`` for a cell a short row
lacks, and the extra cells of a long row under the key ``None`` (as ``csv.DictReader``). Blank lines
are skipped. A byte-order mark (spreadsheets) is not part of the first column; header names are
stripped of surrounding blanks.

Every fault is one ``BadInput`` whose message is one line naming the file and line: file missing or
unreadable, not UTF-8, a header lacking ``required`` columns (``file.csv:1``), a header naming a
column twice (``file.csv:1: column(s) quantity named twice in the header``), a header naming a
column outside ``known`` when the reader gives ``known`` (the columns the file takes, required and
optional: a misspelt ``rotation_numbr`` is refused, not read as an absent optional column;
``file.csv:1: unknown column(s) rotation_numbr (the file takes registration, name, ...)``), a field longer than
``FIELD_LIMIT`` characters, a NUL character, a quote never closed (named at the line it opens on, not read
as a value running to the end of the file), any other CSV syntax error such as a character after a
closing quote (``file.csv:LINE``; the csv module's strict mode). ``one_line``
makes any text safe to print on one line (control characters escaped).

``iter_cells(path, columns, required)`` reads the same way with the same faults but yields
``(where, cells, extra)``: ``cells`` a sequence (list or tuple) of the row's values for
``columns`` in that order (``None`` for a column the header lacks or a short row lacks), ``extra``
the number of cells past the
header's width. It builds no dict: for large files whose reader knows its columns.
"""

from __future__ import annotations

import csv
import operator
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

from portgate.errors import BadInput

FIELD_LIMIT = 131_072  # characters in one cell (the csv module's default limit)

_ESCAPES = {c: f"\\x{c:02x}" for c in (*range(0x00, 0x20), 0x7F)} | {
    ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t", 0x85: "\\x85", 0x2028: "\\u2028", 0x2029: "\\u2029"}


def one_line(text: str) -> str:
    """``text`` with control characters and line separators escaped (``\\n``, ``\\x00``...)."""
    return text.translate(_ESCAPES)


Row = dict[str | None, str | list[str] | None]


def iter_rows(path: str | Path, required: Iterable[str] = (), *,
              known: Iterable[str] | None = None) -> Iterator[tuple[str, Row]]:
    """Yield ``(where, row)`` for each data row of the CSV file at ``path`` (see the module).

    Raises ``BadInput`` (one line, naming the file and line) for the faults listed in the module
    docstring; rows yielded before a syntax error stay yielded.
    """

    def rows(header: list[str]) -> Callable[[str, list[str]], tuple[str, Row]]:
        width = len(header)

        def row_of(where: str, cells: list[str]) -> tuple[str, Row]:
            row: Row = dict(zip(header, cells))
            if len(cells) > width:
                row[None] = cells[width:]
            elif len(cells) < width:
                for column in header[len(cells):]:
                    row.setdefault(column, None)
            return where, row

        return row_of

    return _read(path, required, rows, known)


def iter_cells(
    path: str | Path, columns: Iterable[str], required: Iterable[str] = (), *,
    known: Iterable[str] | None = None,
) -> Iterator[tuple[str, Sequence[str | None], int]]:
    """Yield ``(where, cells, extra)`` for each data row of the CSV file at ``path``: the cells of
    ``columns`` in that order and the count of cells past the header (see the module). Raises
    ``BadInput`` as ``iter_rows`` does."""
    columns = tuple(columns)

    def rows(header: list[str]) -> Callable[[str, list[str]], tuple[str, tuple, int]]:
        width = len(header)
        last = {h: i for i, h in enumerate(header)}  # each name once (a repeated one is refused)
        index = [last.get(c) for c in columns]
        if index == list(range(width)):  # the header is the asked columns, in order

            def same(where: str, cells: list[str]) -> tuple[str, list, int]:
                n = len(cells)
                if n == width:
                    return where, cells, 0
                if n < width:
                    return where, cells + [None] * (width - n), 0
                return where, cells[:width], n - width

            return same
        if None in index or not index:
            def pick(cells: list[str]) -> tuple:
                n = len(cells)
                return tuple(cells[i] if i is not None and i < n else None for i in index)
        else:
            take = operator.itemgetter(*index)
            pick = take if len(index) > 1 else (lambda cells: (take(cells),))

        def row_of(where: str, cells: list[str]) -> tuple[str, tuple, int]:
            n = len(cells)
            if n < width:
                cells = cells + [None] * (width - n)
            return where, pick(cells), (n - width if n > width else 0)

        return row_of

    return _read(path, required, rows, known)


def unknown_columns(header: Iterable[str], known: Iterable[str]) -> str | None:
    """The refusal of a header naming columns outside ``known``, or None:
    ``unknown column(s) directon (the file takes at, gate_id, reader, uid, uid_form, direction)``."""
    known = tuple(known)
    unknown = [h for h in dict.fromkeys(header) if h not in known]
    if not unknown:
        return None
    names = ", ".join(repr(h) if not h else one_line(h) for h in unknown)
    return f"unknown column(s) {names} (the file takes {', '.join(known)})"


def _read(path: str | Path, required: Iterable[str], rows: Callable,
          known: Iterable[str] | None = None) -> Iterator:
    """The reading loop of ``iter_rows`` and ``iter_cells``: ``rows(header)`` returns the function
    making each yielded item from ``(where, cells)``."""
    path = Path(path)
    name = one_line(path.name)
    try:
        fh = path.open(newline="", encoding="utf-8-sig")
    except FileNotFoundError as exc:
        raise BadInput("file not found", where=one_line(str(path))) from exc
    except (OSError, ValueError) as exc:  # a directory, no permission, a NUL or an over-long name
        raise BadInput(f"cannot read: {getattr(exc, 'strerror', None) or exc}", where=one_line(str(path))) from exc
    with fh:
        reader = csv.reader(fh, strict=True)  # a quote never closed is an error, not a value to the end
        line = 0
        try:
            header = None
            while header is None:
                line = reader.line_num + 1
                cells = next(reader, None)
                if cells is None:
                    header = []
                elif cells:
                    header = [h.strip() for h in cells]
            _check_header(header, required, known, where=f"{name}:{line}")
            row_of = rows(header)
            prefix = f"{name}:"
            while True:
                line = reader.line_num + 1
                cells = next(reader, None)
                if cells is None:
                    return
                if not cells:
                    continue
                if "\x00" in "".join(cells):
                    raise BadInput("contains a NUL character", where=f"{name}:{line}")
                yield row_of(prefix + str(line), cells)
        except UnicodeDecodeError as exc:
            raise BadInput("file is not UTF-8", where=f"{name}:{_undecodable_line(path)}") from exc
        except csv.Error as exc:
            raise _syntax_error(exc, name, reader.line_num or line, line) from exc


def _syntax_error(exc: csv.Error, name: str, at: int, record: int) -> BadInput:
    """The one-line ``BadInput`` of a CSV syntax error met at file line ``at`` while reading the
    record that starts on line ``record``. A quote never closed (strict mode's "unexpected end
    of data") is named at the line it opens on; the field limit and a character after a closing
    quote (``"a"b``) in our words; any other fault as the csv module says it, at its line."""
    text = str(exc)
    if "field larger than field limit" in text:
        text = f"a field is longer than {FIELD_LIMIT} characters"
    elif "unexpected end of data" in text:
        text, at = 'a quoted value opened on this line is never closed (a " is missing)', record
    elif "expected after" in text:
        text = 'a character follows a closing quote (a value in quotes ends at its comma or at the line end)'
    return BadInput(f"not a valid CSV file: {one_line(text)}", where=f"{name}:{at}")


def _check_header(header: list[str], required: Iterable[str], known: Iterable[str] | None, *, where: str) -> None:
    """``BadInput`` (at ``where``) for a column named twice (which cell would be the column? refused
    rather than the last one read silently), a required column absent, or an unknown one when
    ``known`` lists the columns the file takes."""
    named = [h for h in header if h]
    twice = sorted({h for h in named if named.count(h) > 1})
    if twice:
        raise BadInput(f"column(s) {', '.join(twice)} named twice in the header", where=where)
    absent = [c for c in required if c not in header]
    if absent:
        raise BadInput(f"header lacks column(s) {', '.join(absent)}", where=where)
    unknown = unknown_columns(header, known) if known is not None else None
    if unknown:
        raise BadInput(unknown, where=where)


def _undecodable_line(path: Path) -> int | str:
    """The line of the first byte of ``path`` that is not UTF-8 (``?`` if it cannot be re-read)."""
    try:
        data = path.read_bytes()
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return data.count(b"\n", 0, exc.start) + 1
    except OSError:
        pass
    return "?"


def read_rows(path: str | Path, required: Iterable[str] = (), *,
              known: Iterable[str] | None = None) -> list[tuple[str, Row]]:
    """Every ``(where, row)`` of ``iter_rows`` as a list; raises ``BadInput`` as it does."""
    return list(iter_rows(path, required, known=known))
