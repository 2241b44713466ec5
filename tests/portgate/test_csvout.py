"""portgate.csvout: formula cells neutralised, plain numbers kept, and a CR inside a cell quoted
whatever the line terminator (Python 3.11's csv leaves a bare CR unquoted under ``"\\n"``, which
a reader takes for the end of the row)."""

from __future__ import annotations

import csv
import io
from decimal import Decimal

import pytest

from portgate import csvout


@pytest.mark.parametrize("value, out", [
    ("=1+2", "'=1+2"), ("+SUM(1)", "'+SUM(1)"), ("-2+3", "'-2+3"), ("@A1", "'@A1"), ("\t=1", "'\t=1"),
    ("\r=1", "'\r=1"), ("-12.50", "-12.50"), ("+3", "+3"), ("plain", "plain"), (Decimal("-1.5"), Decimal("-1.5")),
    (None, None), (-7, -7),
])
def test_safe_cell(value, out):
    assert csvout.safe_cell(value) == out


@pytest.mark.parametrize("end", ["\n", "\r\n"])
def test_a_cr_or_lf_inside_a_cell_stays_inside_its_row(end):
    out = io.StringIO()
    w = csvout.writer(out, lineterminator=end)
    w.writerows([["a", "\r=1+2", "x\ny", "-3.25"], ["b", "ok", "", "=2"]])
    assert out.getvalue() == f"a,\"'\r=1+2\",\"x\ny\",-3.25{end}b,ok,,'=2{end}"
    rows = list(csv.reader(io.StringIO(out.getvalue(), newline="")))
    assert rows == [["a", "'\r=1+2", "x\ny", "-3.25"], ["b", "ok", "", "'=2"]]


def test_the_dict_writer_quotes_a_cr_and_neutralises_values():
    out = io.StringIO()
    w = csvout.dict_writer(out, ["name", "amount"], lineterminator="\n")
    w.writeheader()
    w.writerow({"name": "\r@x", "amount": "-1.00"})
    assert out.getvalue() == "name,amount\n\"'\r@x\",-1.00\n"
    assert list(csv.DictReader(io.StringIO(out.getvalue(), newline=""))) == [{"name": "'\r@x", "amount": "-1.00"}]
