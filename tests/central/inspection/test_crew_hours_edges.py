"""``portgate crew hours`` at the calendar's edges, with very long periods and with times in its
messages: one clear line per bad row, exit 2, no traceback (docs/inspection.md, "Limits")."""

from __future__ import annotations

import pytest

from app.cli import main
from tests.central.inspection.conftest import period_row

GOOD = period_row("A", "2024-06-10T08:00:00-03:00", "2024-06-10T12:00:00-03:00")


def hours(capsys, path, *, lang="en", date_from="2024-06-10", date_to="2024-06-16", out):
    code = main(["--lang", lang, "crew", "hours", "--periods", str(path), "--ship", "9300001",
                 "--from", date_from, "--to", date_to, "--out", str(out)])
    _, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, err


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [
        ("0001-01-01T12:00:00+00:00", "0001-01-01T13:00:00+00:00",
         "periods.csv:3: start '0001-01-01T12:00:00+00:00' is outside the years 1900-2199 (UTC)"),
        ("9999-12-30T12:00:00+00:00", "9999-12-30T13:00:00+00:00",
         "periods.csv:3: start '9999-12-30T12:00:00+00:00' is outside the years 1900-2199 (UTC)"),
        ("2199-12-31T22:00:00+00:00", "2200-01-01T00:00:00+00:00",
         "periods.csv:3: end '2200-01-01T00:00:00+00:00' is outside the years 1900-2199 (UTC)"),
        ("0001-01-02T12:00:00-03:00", "9999-12-29T11:00:00-03:00",
         "periods.csv:3: start '0001-01-02T12:00:00-03:00' is outside the years 1900-2199 (UTC)"),
        ("2024-06-10T08:00:00-03:00", "2024-07-11T08:00:01-03:00",
         "periods.csv:3: period '2024-06-10T08:00:00-03:00'..'2024-07-11T08:00:01-03:00' is "
         "longer than 31 days"),
    ],
)
def test_a_row_beyond_the_limits_is_one_line_exit_2(periods_csv, tmp_path, capsys, start, end,
                                                    message):
    path = periods_csv([GOOD, period_row("A", start, end)])
    code, err = hours(capsys, path, out=tmp_path / "o")
    assert code == 2
    assert err.strip() == f"portgate: {message}"
    assert not (tmp_path / "o").exists()


def test_a_period_of_31_days_is_kept_and_booked(periods_csv, tmp_path, capsys):
    path = periods_csv([period_row("A", "2024-06-01T00:00:00-03:00", "2024-07-02T00:00:00-03:00")])
    code, _ = hours(capsys, path, out=tmp_path / "o")
    assert code == 0
    assert (tmp_path / "o" / "overtime_book.csv").read_text().count("\n") == 8  # header + 7 days


@pytest.mark.parametrize(("option", "dates"), [("--from", ("0001-01-01", "2024-06-10")),
                                              ("--to", ("2024-06-10", "9999-12-31"))])
def test_from_and_to_beyond_the_years_are_refused(periods_csv, tmp_path, capsys, option, dates):
    code, err = hours(capsys, periods_csv([GOOD]), date_from=dates[0], date_to=dates[1],
                      out=tmp_path / "o")
    assert code == 2
    assert err.strip() == f"portgate: {option} is outside the years 1900-2199"


@pytest.mark.parametrize("lang", ["pt", "en"])
def test_an_end_before_its_start_is_shown_as_written(periods_csv, tmp_path, capsys, lang):
    path = periods_csv([GOOD, period_row("A", "2024-06-10T08:00:00-03:00",
                                         "2024-06-10T07:00:00-03:00")])
    code, err = hours(capsys, path, lang=lang, out=tmp_path / "o")
    assert code == 2
    said = {"en": "end '2024-06-10T07:00:00-03:00' is not after start '2024-06-10T08:00:00-03:00'",
            "pt": "o fim (end) '2024-06-10T07:00:00-03:00' não é depois do início (start) "
                  "'2024-06-10T08:00:00-03:00'"}
    assert f"periods.csv:3: {said[lang]}" in err


@pytest.mark.parametrize("lang", ["pt", "en"])
def test_an_overlap_names_its_times_in_the_books_zone(periods_csv, tmp_path, capsys, lang):
    path = periods_csv([GOOD, period_row("A", "2024-06-10T14:00:00+00:00",
                                         "2024-06-10T16:00:00+00:00")])
    code, err = hours(capsys, path, lang=lang, out=tmp_path / "o")
    assert code == 2
    said = {"en": "period of crew_id A", "pt": "o período de crew_id A"}[lang]
    tail = {"en": "overlaps", "pt": "se sobrepõe a"}[lang]
    assert (f"periods.csv:3: {said} '2024-06-10T11:00:00-03:00'..'2024-06-10T13:00:00-03:00' "
            f"(America/Sao_Paulo) {tail} periods.csv:2") in err


@pytest.mark.parametrize("lang", ["pt", "en"])
def test_the_whole_overlap_message_speaks_the_language_first_line_included(periods_csv, tmp_path,
                                                                         capsys, lang):
    path = periods_csv([GOOD, period_row("A", "2024-06-10T11:00:00-03:00",
                                         "2024-06-10T13:00:00-03:00")])
    code, err = hours(capsys, path, lang=lang, out=tmp_path / "o")
    assert code == 2
    said = {"en": ["portgate: overlapping work periods:",
                   "periods.csv:3: period of crew_id A '2024-06-10T11:00:00-03:00'.."
                   "'2024-06-10T13:00:00-03:00' (America/Sao_Paulo) overlaps periods.csv:2"],
            "pt": ["portgate: períodos de trabalho sobrepostos:",
                   "periods.csv:3: o período de crew_id A '2024-06-10T11:00:00-03:00'.."
                   "'2024-06-10T13:00:00-03:00' (America/Sao_Paulo) se sobrepõe a periods.csv:2"]}
    assert err.splitlines() == said[lang]
    assert not (tmp_path / "o").exists()


def test_rows_at_both_ends_of_the_years_leave_the_book_as_without_them(periods_csv, tmp_path,
                                                                      capsys):
    near = period_row("A", "2024-06-10T08:00:00-03:00", "2024-06-10T19:00:00-03:00")
    far = [period_row("A", "1900-01-01T00:00:00+00:00", "1900-01-31T00:00:00+00:00"), near,
           period_row("A", "2199-12-01T00:00:00+00:00", "2199-12-31T23:59:59+00:00")]
    books = []
    for name, rows in (("near.csv", [near]), ("far.csv", far)):
        code, _ = hours(capsys, periods_csv(rows, name=name), out=tmp_path / name[:-4])
        assert code == 0
        books.append({p.name: p.read_bytes() for p in (tmp_path / name[:-4]).iterdir()})
    assert books[0] == books[1]
    assert b"2024-06-10" in books[1]["overtime_book.csv"]


@pytest.mark.parametrize("lang", ["pt", "en"])
def test_an_output_that_cannot_be_written_is_named_as_the_user_gave_it(periods_csv, tmp_path,
                                                                       capsys, monkeypatch, lang):
    # a real fault of the file system: the output's name is taken by a directory
    monkeypatch.chdir(tmp_path)
    (tmp_path / "books" / "overtime_book.csv").mkdir(parents=True)
    code, err = hours(capsys, periods_csv([GOOD]), lang=lang, out="books")
    assert code == 2
    said = {"en": "cannot write the output 'books/overtime_book.csv': Is a directory",
            "pt": "não foi possível gravar a saída 'books/overtime_book.csv': é um diretório"}
    assert err.splitlines() == [f"portgate: {said[lang]}"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["books", "periods.csv"]  # no temporary left
    assert [p.name for p in (tmp_path / "books").iterdir()] == ["overtime_book.csv"]


@pytest.mark.parametrize("lang", ["pt", "en"])
def test_an_output_directory_that_is_a_file_is_named_as_given(periods_csv, tmp_path, capsys,
                                                              monkeypatch, lang):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "books").write_text("not a directory\n")
    code, err = hours(capsys, periods_csv([GOOD]), lang=lang, out="books")
    assert code == 2
    said = {"en": "cannot write the output 'books/overtime_book.csv': Not a directory",
            "pt": "não foi possível gravar a saída 'books/overtime_book.csv': não é um diretório"}
    assert err.splitlines() == [f"portgate: {said[lang]}"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["books", "periods.csv"]


def test_the_written_files_are_listed_under_the_path_the_user_gave(periods_csv, tmp_path, capsys,
                                                                   monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = periods_csv([GOOD])
    for _ in range(2):  # a new output directory, then the same one replaced
        assert main(["--lang", "en", "crew", "hours", "--periods", str(path), "--ship", "9300001",
                     "--from", "2024-06-10", "--to", "2024-06-16", "--out", "books"]) == 0
        out, _ = capsys.readouterr()
        assert [line.strip() for line in out.splitlines()[1:]] == [
            "books/overtime_book.csv", "books/transgressions.csv", "books/book.html"]


@pytest.mark.parametrize("lang", ["pt", "en"])
def test_a_quote_never_closed_is_a_csv_syntax_error_at_its_line(periods_csv, tmp_path, capsys,
                                                                 lang):
    path = periods_csv([GOOD, period_row("A", "2024-06-11T08:00:00-03:00",
                                         "2024-06-11T12:00:00-03:00"), GOOD])
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[2] = lines[2].replace(",A,", ',"A,', 1)  # row 3's crew_id opens a quote, none closes it
    path.write_text("".join(lines), encoding="utf-8")
    code, err = hours(capsys, path, lang=lang, out=tmp_path / "o")
    assert code == 2
    said = {"en": 'not a valid CSV file: a quoted value opened on this line is never closed '
                  '(a " is missing)',
            "pt": 'não é um arquivo CSV válido: um valor entre aspas aberto nesta linha nunca é '
                  'fechado (falta uma ")'}
    assert err.splitlines() == [f"portgate: periods.csv:3: {said[lang]}"]
    assert not (tmp_path / "o").exists()
