"""The one CSV table reader every import uses (workers, cards, shifts, requisitions, periods, crew,
tally, taps...): a UTF-8 file with a header row, read row by row with the place of each row.

``iter_rows(path, required)`` yields ``(where, row)``: ``where`` is ``"file.csv:LINE"``, LINE the
file line the record starts on (blank lines and newlines inside quoted values counted, from the csv
reader's ``line_num``); ``row`` maps each header column to its cell, ``None`` for a cell a short row
lacks, and the extra cells of a long row under the key ``None`` (as ``csv.DictReader``). Blank lines
are skipped. A byte-order mark (spreadsheets) is not part of the first column; header names are
stripped of surrounding blanks.

Every fault is one ``BadInput`` whose message is one line naming the file and line: file missing or
unreadable, not UTF-8, a header lacking ``required`` columns (``file.csv:1``), a field longer than
``FIELD_LIMIT`` characters, a NUL character, any other CSV syntax error (``file.csv:LINE``). ``one_line``
makes any text safe to print on one line (control characters escaped).
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator
from pathlib import Path

from portgate.errors import BadInput

FIELD_LIMIT = 131_072  # characters in one cell (the csv module's default limit)

_ESCAPES = {c: f"\\x{c:02x}" for c in (*range(0x00, 0x20), 0x7F)} | {
    ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t", 0x85: "\\x85", 0x2028: "\\u2028", 0x2029: "\\u2029"}


def one_line(text: str) -> str:
    """``text`` with control characters and line separators escaped (``\\n``, ``\\x00``...)."""
    return text.translate(_ESCAPES)


Row = dict[str | None, str | list[str] | None]


def iter_rows(path: str | Path, required: Iterable[str] = ()) -> Iterator[tuple[str, Row]]:
    """Yield ``(where, row)`` for each data row of the CSV file at ``path`` (see the module).

    Raises ``BadInput`` (one line, naming the file and line) for the faults listed in the module
    docstring; rows yielded before a syntax error stay yielded.
    """
    path = Path(path)
    name = one_line(path.name)
    try:
        fh = path.open(newline="", encoding="utf-8-sig")
    except FileNotFoundError as exc:
        raise BadInput("file not found", where=one_line(str(path))) from exc
    except (OSError, ValueError) as exc:  # a directory, no permission, a NUL or an over-long name
        raise BadInput(f"cannot read: {getattr(exc, 'strerror', None) or exc}", where=one_line(str(path))) from exc
    with fh:
        reader = csv.reader(fh)
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
            absent = [c for c in required if c not in header]
            if absent:
                raise BadInput(f"header lacks column(s) {', '.join(absent)}", where=f"{name}:{line}")
            width = len(header)
            while True:
                line = reader.line_num + 1
                cells = next(reader, None)
                if cells is None:
                    return
                if not cells:
                    continue
                if "\x00" in "".join(cells):
                    raise BadInput("contains a NUL character", where=f"{name}:{line}")
                row: Row = dict(zip(header, cells))
                if len(cells) > width:
                    row[None] = cells[width:]
                elif len(cells) < width:
                    for column in header[len(cells):]:
                        row.setdefault(column, None)
                yield f"{name}:{line}", row
        except UnicodeDecodeError as exc:
            raise BadInput("file is not UTF-8", where=f"{name}:{_undecodable_line(path)}") from exc
        except csv.Error as exc:
            text = str(exc)
            if "field larger than field limit" in text:
                text = f"a field is longer than {FIELD_LIMIT} characters"
            raise BadInput(f"not a valid CSV file: {one_line(text)}", where=f"{name}:{reader.line_num or line}") from exc


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


def read_rows(path: str | Path, required: Iterable[str] = ()) -> list[tuple[str, Row]]:
    """Every ``(where, row)`` of ``iter_rows`` as a list; raises ``BadInput`` as it does."""
    return list(iter_rows(path, required))
