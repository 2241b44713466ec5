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
        for row in rows:
            self.writerow(row)


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
