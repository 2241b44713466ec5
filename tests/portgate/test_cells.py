"""The typed cell parsers every CSV import uses (portgate/cells.py): each value, each refusal."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from portgate import cells
from portgate.errors import BadInput
from portgate.records import CardKind


@pytest.mark.parametrize("parse,value,expected", [
    (lambda v: cells.required(v, "f"), "  x ", "x"),
    (lambda v: cells.text(v, "f"), " Ana Souza ", "Ana Souza"),
    (lambda v: cells.date(v, "f"), "2026-03-10", dt.date(2026, 3, 10)),
    (lambda v: cells.date(v, "f", optional=True), " ", None),
    (lambda v: cells.whole(v, "f"), " -3 ", -3),
    (lambda v: cells.whole(v, "f", optional=True, default=1), "", 1),
    (lambda v: cells.decimal(v, "f", places=3), "1.250", Decimal("1.250")),
    (lambda v: cells.decimal(v, "f", optional=True), None, None),
    (lambda v: cells.yes_no(v, "f", default=True), "", True),
    (lambda v: cells.yes_no(v, "f", default=True), "Não", False),
    (lambda v: cells.yes_no(v, "f", default=False), "SIM", True),
    (lambda v: cells.choice(CardKind, v, "f"), " badge ", CardKind.BADGE),
    (lambda v: cells.text(v, "name"), " João D'Ávila da Conceição ", "João D'Ávila da Conceição"),
    (lambda v: cells.text(v, "name"), "Ana\u00a0Lima", "Ana\u00a0Lima"),  # a no-break space: a space, not Cf
    (lambda v: cells.parse_aware(v, "f"), "2026-03-10T07:00:00-03:00", dt.datetime(2026, 3, 10, 10, tzinfo=dt.UTC)),
])
def test_a_good_cell_is_parsed_to_its_type(parse, value, expected):
    assert parse(value) == expected


@pytest.mark.parametrize("parse,value,message", [
    (lambda v: cells.required(v, "f"), None, "f is required"),
    (lambda v: cells.text(v, "f"), "a\nb",
     "f 'a<U+000A>b' contains a control character or line break (U+000A at character 2)"),
    (lambda v: cells.text(v, "name"), "Ana\u2028Lima",
     "name 'Ana<U+2028>Lima' contains a control character or line break (U+2028 at character 4)"),
    (lambda v: cells.text(v, "name"), "Ana\u202eLima",
     "name 'Ana<U+202E>Lima' contains an invisible format character (U+202E at character 4): a direction mark or "
     "zero-width character"),
    (lambda v: cells.text(v, "name"), "Ana Li\u200bma", "name 'Ana Li<U+200B>ma' contains an invisible format character "
                                                        "(U+200B at character 7)"),
    (lambda v: cells.text(v, "name"), "\u2066Ana\u2069", "name '<U+2066>Ana<U+2069>' contains an invisible format "
                                                          "character (U+2066 at character 1)"),
    (lambda v: cells.text(v, "name"), "A\u00adna", "(U+00AD at character 2)"),  # a soft hyphen: Cf too
    (lambda v: cells.text(v, "name"), "Ana\x00", "name 'Ana<U+0000>' contains a control character"),
    (lambda v: cells.date(v, "f"), "", "f is required"),
    (lambda v: cells.date(v, "f"), "2026-13-01", "f '2026-13-01' is not an ISO date (YYYY-MM-DD)"),
    (lambda v: cells.whole(v, "f"), "1.5", "f '1.5' is not a whole number"),
    (lambda v: cells.decimal(v, "f"), "1e3", "f '1e3' is not a number (digits with an optional . decimal point)"),
    (lambda v: cells.decimal(v, "f"), "-1", "f '-1' must not be negative"),
    (lambda v: cells.decimal(v, "f", places=2), "1.001", "f '1.001' has more than 2 decimal places"),
    (lambda v: cells.yes_no(v, "f", default=False), "maybe", "f 'maybe' is not yes|no"),
    (lambda v: cells.choice(CardKind, v, "f"), "chapa", "f 'chapa' is not one of control|badge|inspector"),
    (lambda v: cells.parse_aware(v, "f"), "2026-03-10T07:00:00", "f '2026-03-10T07:00:00' has no UTC offset"),
    (lambda v: cells.parse_aware(v, "f"), "0001-01-01T00:00:00+03:00", "is out of the representable date range"),
])
def test_a_bad_cell_is_one_bad_input_naming_the_column_and_value(parse, value, message):
    with pytest.raises(BadInput) as caught:
        parse(value)
    assert message in caught.value.reason
    assert caught.value.where is None  # the caller names the file and line


@pytest.mark.parametrize("typed", ["٣", "1_000", "３", "+", "2.0"])
def test_whole_takes_ascii_digits_only(typed):
    """``int`` takes any Unicode digit ("٣" Arabic-Indic, "３" full-width) and "1_000": a person's
    form or CSV number is ASCII 0-9 (the escala form's "Trabalhadores" took "٣")."""
    with pytest.raises(BadInput, match="is not a whole number"):
        cells.whole(typed, "workers")
    assert cells.whole(" -12 ", "n") == -12 and cells.whole("+3", "n") == 3
