"""The shared CSV table reader (portgate/tables.py) every import uses: places are file and line
(blank lines and quoted newlines counted), a BOM is not a column, every fault is one line naming
file and line; and the imports built on it (``pay --shifts``, ``workers.csv``) say the same."""

from __future__ import annotations

import pytest

from portgate.errors import BadInput
from portgate.records import Worker, build_cells, load_csv
from portgate.tables import FIELD_LIMIT, iter_cells, iter_rows, one_line, read_rows


def _write(tmp_path, text: str, name="t.csv", encoding="utf-8"):
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return path


def test_places_are_file_lines_after_blank_lines_and_quoted_newlines(tmp_path):
    path = _write(tmp_path, 'a,b\n1,2\n\n3,"x\ny"\n\n\n5,6\n')
    assert [(w, r["a"]) for w, r in read_rows(path, ["a"])] == [("t.csv:2", "1"), ("t.csv:4", "3"), ("t.csv:8", "5")]


def test_a_byte_order_mark_is_not_part_of_the_first_column(tmp_path):
    path = _write(tmp_path, "\ufeffa, b \n1,2\n")
    assert read_rows(path, ["a", "b"]) == [("t.csv:2", {"a": "1", "b": "2"})]


def test_short_and_long_rows_are_marked_as_dictreader_does(tmp_path):
    path = _write(tmp_path, "a,b\n1\n1,2,3,4\n")
    assert read_rows(path) == [("t.csv:2", {"a": "1", "b": None}), ("t.csv:3", {"a": "1", "b": "2", None: ["3", "4"]})]


@pytest.mark.parametrize("text, where, says", [
    ("a,b\n1,2\n3," + "x" * (FIELD_LIMIT + 1) + "\n", "t.csv:3", f"longer than {FIELD_LIMIT}"),
    ("a,b\n1,2\n3,x\x00y\n", "t.csv:3", "NUL"),
    ("a,c\n1,2\n", "t.csv:1", "header lacks column(s) b"),
    ("\n\na,c\n1,2\n", "t.csv:3", "header lacks column(s) b"),
])
def test_every_fault_is_one_line_naming_file_and_line(tmp_path, text, where, says):
    with pytest.raises(BadInput) as info:
        list(iter_rows(_write(tmp_path, text), ["a", "b"]))
    message = str(info.value)
    assert message.startswith(f"{where}: ") and says in message and "\n" not in message, message


@pytest.mark.parametrize("text, where, says", [
    ('a,b\n1,2\n\n3,"x\n4,5\n6,7\n', "t.csv:4", 'a quoted value opened on this line is never closed (a " is missing)'),
    ('a,b\n"1,2\n', "t.csv:2", 'a quoted value opened on this line is never closed (a " is missing)'),
    ('a,b\n1,2\n3,"x"y\n', "t.csv:3",
     "a character follows a closing quote (a value in quotes ends at its comma or at the line end)"),
    ('a,b\n1,2\n3,"x" \n', "t.csv:3",
     "a character follows a closing quote (a value in quotes ends at its comma or at the line end)"),
])
def test_a_quote_never_closed_or_followed_by_a_character_is_a_syntax_error_at_its_line(tmp_path, text, where, says):
    """Not a value running to the end of the file (the rows after it swallowed, the next cell
    missing): one line naming where the quote opens."""
    with pytest.raises(BadInput) as info:
        list(iter_cells(_write(tmp_path, text), ["a", "b"], ["a", "b"]))
    assert str(info.value) == f"{where}: {'' if says.startswith('not') else 'not a valid CSV file: '}{says}"


def test_not_utf8_a_missing_file_and_an_unopenable_name_are_one_line(tmp_path):
    with pytest.raises(BadInput, match=r"^t.csv:2: file is not UTF-8"):
        read_rows(_write(tmp_path, "a\n\xe9\n", encoding="latin-1"))
    with pytest.raises(BadInput, match="file not found"):
        read_rows(tmp_path / "none.csv")
    for bad in (tmp_path / "nul\x00.csv", tmp_path / ("x" * 5000), tmp_path):
        with pytest.raises(BadInput) as info:
            read_rows(bad)
        assert "\n" not in str(info.value) and "\x00" not in str(info.value)


def test_one_line_escapes_control_characters_and_keeps_accents():
    assert one_line("São\nPaulo\r\t\x00\u2028") == "São\\nPaulo\\r\\t\\x00\\u2028"


def test_a_quoted_newline_in_a_bad_value_is_printed_escaped(tmp_path):
    path = _write(tmp_path, 'registration,name,category,status\n1001,"Ana\nSilva",vigia,"ativo\nx"\n',
                  name="workers.csv")
    with pytest.raises(BadInput) as info:
        load_csv(path, Worker)
    message = str(info.value)
    assert message.startswith("workers.csv:2: ") and "\n" not in message, message


def test_pay_reads_a_shifts_csv_with_a_bom_and_names_the_line_after_a_blank_one(tmp_path, capsys):
    from app.cli import main
    from tests.central.pay.test_pay_cli import write_csv

    good = write_csv(tmp_path / "shifts.csv")
    text = good.read_text(encoding="utf-8")
    bom = tmp_path / "bom.csv"
    bom.write_text("\ufeff" + text, encoding="utf-8")
    assert main(["pay", "--shifts", str(bom)]) == 0
    capsys.readouterr()
    lines = text.splitlines()
    bad = tmp_path / "blank.csv"
    bad.write_text("\n".join([lines[0], lines[1], "", lines[2].replace("vigia_chefe", "pilot")]) + "\n")
    assert main(["pay", "--shifts", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "blank.csv:4: " in err and len(err.strip().splitlines()) == 1, err


def test_iter_cells_gives_the_asked_columns_in_order_with_short_long_and_absent_cells(tmp_path):
    path = _write(tmp_path, "z,a,b\n1,2,3\n5\n6,7,8,10\n")
    assert list(iter_cells(path, ["a", "b", "c"], ["a"])) == [
        ("t.csv:2", ("2", "3", None), 0),
        ("t.csv:3", (None, None, None), 0),
        ("t.csv:4", ("7", "8", None), 1),
    ]
    path = _write(tmp_path, "\ufeff a ,b\n1,2\n\n3\n", name="u.csv")
    assert list(iter_cells(path, ["b", "a"])) == [("u.csv:2", ("2", "1"), 0), ("u.csv:4", (None, "3"), 0)]
    assert list(iter_cells(path, ["a"])) == [("u.csv:2", ("1",), 0), ("u.csv:4", ("3",), 0)]
    path = _write(tmp_path, "a,b\n1\n1,2,3\n1,2\n", name="v.csv")  # the header is the columns asked
    assert list(iter_cells(path, ["a", "b"])) == [
        ("v.csv:2", ["1", None], 0), ("v.csv:3", ["1", "2"], 1), ("v.csv:4", ["1", "2"], 0)]


@pytest.mark.parametrize("text, where, says", [
    ("a,b\n1,2\n3," + "x" * (FIELD_LIMIT + 1) + "\n", "t.csv:3", f"longer than {FIELD_LIMIT}"),
    ("a,b\n1,2\n3,x\x00y\n", "t.csv:3", "NUL"),
    ("a,c\n1,2\n", "t.csv:1", "header lacks column(s) b"),
    ("a,b\n1,2\n\xe9,3\n", "t.csv:3", "file is not UTF-8"),
])
def test_iter_cells_faults_are_those_of_iter_rows(tmp_path, text, where, says):
    path = _write(tmp_path, text, encoding="latin-1" if "\xe9" in text else "utf-8")
    with pytest.raises(BadInput) as cells:
        list(iter_cells(path, ["a", "b"], ["a", "b"]))
    with pytest.raises(BadInput) as rows:
        list(iter_rows(path, ["a", "b"]))
    assert str(cells.value) == str(rows.value)
    message = str(cells.value)
    assert message.startswith(f"{where}: ") and says in message and "\n" not in message, message


def test_build_cells_names_every_bad_row_and_a_long_one(tmp_path):
    def build(cells, where):
        if cells[0] == "x":
            raise BadInput("a is x\nreally")
        return cells[0]

    path = _write(tmp_path, "a\n1\nx\n2,3\n4\n")
    with pytest.raises(BadInput) as info:
        build_cells(iter_cells(path, ["a"]), build)
    assert str(info.value) == "t.csv:3: a is x\\nreally\nt.csv:4: 1 cell(s) more than the header has"
    assert build_cells(iter_cells(_write(tmp_path, "a\n1\n4\n"), ["a"]), build) == ["1", "4"]


def test_a_column_outside_known_is_refused_naming_it_and_the_columns_the_file_takes(tmp_path):
    path = _write(tmp_path, "a,b,directon\n1,2,in\n")
    with pytest.raises(BadInput) as info:
        read_rows(path, ["a"], known=("a", "b", "direction"))
    assert str(info.value) == "t.csv:1: unknown column(s) directon (the file takes a, b, direction)"
    with pytest.raises(BadInput, match=r"^t.csv:1: unknown column\(s\) directon "):
        list(iter_cells(path, ("a", "b"), ["a"], known=("a", "b", "direction")))
    with pytest.raises(BadInput, match=r"^t.csv:1: unknown column\(s\) '' "):
        read_rows(_write(tmp_path, "a,,b\n1,2,3\n"), known=("a", "b"))


def test_known_columns_may_be_left_out_and_without_known_any_column_is_read(tmp_path):
    path = _write(tmp_path, "a,c\n1,2\n")
    assert read_rows(path, ["a"], known=("a", "b", "c")) == [("t.csv:2", {"a": "1", "c": "2"})]
    assert read_rows(path, ["a"]) == [("t.csv:2", {"a": "1", "c": "2"})]


def test_a_column_named_twice_in_the_header_is_refused_naming_it(tmp_path, capsys):
    """Which cell would be ``quantity``? A header naming a column twice is refused, by every reader
    (iter_rows, iter_cells) and so by every import: 10.2 t and 500 t are never silently the last
    one (fresh tester: a tally paid 500 t)."""
    from app.cli import main

    path = _write(tmp_path, "b,a,b,,\n1,2,3,,\n")
    for read in (lambda: list(iter_cells(path, ["a", "b"])), lambda: list(iter_rows(path))):
        with pytest.raises(BadInput) as caught:
            read()
        assert str(caught.value) == "t.csv:1: column(s) b named twice in the header"
    ok = _write(tmp_path, "a,b,,\n1,2,,\n", name="blank.csv")  # blank names (trailing commas) are no column
    assert list(iter_cells(ok, ["a", "b"])) == [("blank.csv:2", ("1", "2"), 0)]
    tally = _write(tmp_path, "gang_id,ship,date,period,cargo_class,quantity,quantity\n"
                             "D1,9123456,2026-03-10,07-13,general,10.2,500\n", name="tally.csv")
    assert main(["production", "pay", "--rulebook", "dl-3844-1941", "--gang", str(tally), "--tally", str(tally),
                 "--tariffs", str(tally)]) == 2
    err = capsys.readouterr().err
    assert "tally.csv:1: column(s) quantity named twice in the header" in err  # once per file given it
    assert all(line.endswith("tally.csv:1: column(s) quantity named twice in the header") for line in err.strip().splitlines())
