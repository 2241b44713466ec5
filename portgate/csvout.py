"""The one CSV writer of every export (escala, payroll, pay statements, production, inspection
books): cells a spreadsheet would run as a formula are neutralised (CWE-1236, OWASP "CSV injection").

A cell whose text begins with ``=``, ``+``, ``-``, ``@``, a TAB or a CR gets a leading apostrophe
(``=HYPERLINK(...)`` -> ``'=HYPERLINK(...)``, ``-2+3`` -> ``'-2+3``), so LibreOffice and Excel show
it as text. The one exception is a cell that is wholly a plain decimal number (``-12.50``,
``+3``): a spreadsheet reads it as that number, never as a formula, and the pay exports' negative
amounts (deductions) must stay numbers for the office's sums and for the importers that read the
exports back. Everything else (text, dates, ids) that starts with one of those characters is
neutralised, whatever its column.

``writer(fh)`` and ``dict_writer(fh, fieldnames)`` take ``csv.writer``'s keyword arguments and
write as they do; only the cells' text changes, and a cell holding a CR or LF is always quoted:
Python 3.11's ``csv`` leaves a bare CR unquoted under ``lineterminator="\\n"``, and a reader (or a
spreadsheet) would start a new row there, splitting the record.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

#: The first characters that make a spreadsheet treat a cell as a formula (or split it).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
#: A cell that is only a decimal number: a spreadsheet reads it as the number.
PLAIN_NUMBER = re.compile(r"[+-]?[0-9]+(\.[0-9]+)?")


def safe_cell(value: Any) -> Any:
    """``value`` as it may go into an exported CSV cell: a string (or any non-number) whose text
    begins with a ``FORMULA_START`` character, unless it is a plain decimal number, gets a leading
    ``'``; ``None``, ints, floats and Decimals pass unchanged (``csv`` writes their digits)."""
    if value is None or isinstance(value, (int, float, Decimal)):
        return value
    text = value if isinstance(value, str) else str(value)
    if text.startswith(FORMULA_START) and not PLAIN_NUMBER.fullmatch(text):
        return "'" + text
    return value


class SafeWriter:
    """``csv.writer`` whose rows pass through ``safe_cell``; each row is formatted with a CRLF
    terminator (so CR and LF inside a cell are both quoted), then written with the caller's."""

    def __init__(self, fh, **kwargs) -> None:
        self._fh = fh
        dialect = kwargs.get("dialect", "excel")
        self._end = kwargs.pop("lineterminator", (csv.get_dialect(dialect) if isinstance(dialect, str)
                                                  else dialect).lineterminator)
        self._buf = io.StringIO()
        self._w = csv.writer(self._buf, lineterminator="\r\n", **kwargs)

    def writerow(self, row: Iterable[Any]):
        self._buf.seek(0)
        self._buf.truncate()
        self._w.writerow([safe_cell(v) for v in row])
        return self._fh.write(self._buf.getvalue()[:-2] + self._end)

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        """As ``writerow`` for each row, written in one piece when that gives the same text: the
        rows are formatted by one ``csv`` call, and kept only if no cell of that text can begin
        with a ``FORMULA_START`` character (``_may_need_care``) and the terminator does not change
        a cell's quoting (a CR in the text under a terminator without one); else row by row. An
        error: row by row as well, so the rows before the faulty one are written as before."""
        taken: list = []
        try:
            taken.extend(rows)
        except BaseException:  # the rows' iterator failed: the rows it gave are written first
            for row in taken:
                self.writerow(row)
            raise
        text = self._in_one_piece(taken)
        if text is None:
            for row in taken:
                self.writerow(row)
        else:
            self._fh.write(text)

    def _in_one_piece(self, rows: list) -> str | None:
        """The text of ``rows`` formatted at once under the caller's terminator, or None when it
        might differ from ``writerow``'s row by row (see ``writerows``)."""
        dialect = self._w.dialect
        if not all(isinstance(row, (list, tuple)) for row in rows):  # an iterator is read once
            return None
        if self._end not in ("\r\n", "\n") or dialect.escapechar is not None or \
                dialect.quoting == csv.QUOTE_NONE:
            return None
        buf = io.StringIO()
        try:
            csv.writer(buf, dialect, lineterminator=self._end).writerows(rows)
        except (csv.Error, TypeError, ValueError):
            return None
        text = buf.getvalue()
        if (self._end == "\n" and "\r" in text) or _may_need_care(text, dialect):
            return None
        return text


def _may_need_care(text: str, dialect) -> bool:
    """True when a cell of ``text`` (rows formatted by ``csv`` under ``dialect``, terminated by
    ``\\n`` or ``\\r\\n``) may begin with a ``FORMULA_START`` character: one at the text's
    start, or after a delimiter, a line feed or a quote character (a CR, which ``csv`` quotes
    here, after a quote character). Never False for a text holding such a cell: a cell begins at
    the text's start or after a delimiter or a row's LF, quoted or not, and no escape character
    is written. True also for some that hold none (an empty cell before a TAB delimiter, ``"=``
    inside a quoted cell): those are written row by row. One scan per character present."""
    quote = dialect.quotechar
    for c in FORMULA_START:
        if c not in text:
            continue
        if c == "\r":
            if quote + c in text:
                return True
        elif text.startswith(c) or any(lead + c in text for lead in (dialect.delimiter, "\n", quote)):
            return True
    return False


class SafeDictWriter(csv.DictWriter):
    """``csv.DictWriter`` whose values (and header) pass through a ``SafeWriter``."""

    def __init__(self, fh, fieldnames, restval="", extrasaction="raise", dialect="excel", **kwargs) -> None:
        super().__init__(fh, fieldnames, restval, extrasaction, dialect, **kwargs)
        self.writer = SafeWriter(fh, dialect=dialect, **kwargs)

    def writerow(self, rowdict: Mapping[str, Any]):
        return super().writerow({k: safe_cell(v) for k, v in rowdict.items()})

    def writerows(self, rowdicts: Iterable[Mapping[str, Any]]) -> None:
        for row in rowdicts:
            self.writerow(row)


def writer(fh, **kwargs) -> SafeWriter:
    """A CSV writer for an export (see the module doc); ``kwargs`` as ``csv.writer``."""
    return SafeWriter(fh, **kwargs)


def dict_writer(fh, fieldnames, **kwargs) -> SafeDictWriter:
    """A CSV dict writer for an export (see the module doc); ``kwargs`` as ``csv.DictWriter``."""
    return SafeDictWriter(fh, fieldnames, **kwargs)
