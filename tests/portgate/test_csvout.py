"""portgate.csvout: formula cells neutralised, plain numbers kept, and a CR inside a cell quoted
whatever the line terminator (Python 3.11's csv leaves a bare CR unquoted under ``"\\n"``, which
a reader takes for the end of the row)."""

from __future__ import annotations

import csv
import io
from decimal import Decimal

import pytest
from hypothesis import given, settings, strategies as st

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


_CELLS = st.one_of(
    st.text(alphabet="=+-@\t\r\n\",;a1. ", max_size=6), st.integers(-50, 50), st.none(),
    st.decimals(allow_nan=False, allow_infinity=False, places=2, min_value=-99, max_value=99),
    st.floats(allow_nan=False, allow_infinity=False, width=16))


@settings(max_examples=400, deadline=None)
@given(rows=st.lists(st.lists(_CELLS, max_size=5).map(tuple) | st.lists(_CELLS, max_size=5), max_size=6),
       end=st.sampled_from(["\n", "\r\n"]), kwargs=st.sampled_from(
           [{}, {"delimiter": ";"}, {"delimiter": "\t"}, {"quoting": csv.QUOTE_ALL}, {"quoting": csv.QUOTE_NONNUMERIC},
            {"quotechar": "'"}]))
def test_writerows_writes_what_writerow_writes_row_by_row(rows, end, kwargs):
    """``writerows`` formats the rows in one piece when it can (docs/performance.md, issue 32 item
    6): the text is the one ``writerow`` gives row by row, formula cells, CRs and quotes included."""
    one, each = io.StringIO(), io.StringIO()
    csvout.writer(one, lineterminator=end, **kwargs).writerows(rows)
    w = csvout.writer(each, lineterminator=end, **kwargs)
    for row in rows:
        w.writerow(row)
    assert one.getvalue() == each.getvalue()


def test_writerows_in_one_piece_only_when_no_cell_needs_care(mocker):
    out = io.StringIO()
    w = csvout.writer(out, lineterminator="\n")
    each = mocker.spy(w, "writerow")
    w.writerows([("a", 1, "2024-01-01"), ["b", 2, "x y"]])
    assert each.call_count == 0 and out.getvalue() == "a,1,2024-01-01\nb,2,x y\n"
    w.writerows([("a", "=1"), ("b", "ok")])  # a formula cell: row by row, neutralised
    assert each.call_count == 2 and out.getvalue().endswith("a,'=1\nb,ok\n")
    w.writerows(iter([("c", "x\ry")]))  # a CR under "\n": row by row, quoted
    assert each.call_count == 3 and out.getvalue().endswith('c,"x\ry"\n')


def test_writerows_writes_the_rows_given_before_its_iterator_fails():
    def rows():
        yield ("a", "=1")
        yield ("b", "2")
        raise OSError("disk")

    out = io.StringIO()
    with pytest.raises(OSError):
        csvout.writer(out, lineterminator="\n").writerows(rows())
    assert out.getvalue() == "a,'=1\nb,2\n"


def test_writerows_of_a_bad_row_writes_the_rows_before_it_then_raises():
    out = io.StringIO()
    with pytest.raises(TypeError):  # as writerow's
        csvout.writer(out, lineterminator="\n").writerows([("a", "1"), 5, ("c", "3")])
    assert out.getvalue() == "a,1\n"
