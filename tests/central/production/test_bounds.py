"""Bounds of the production pay inputs: an interruption cannot last longer than the gang's period
(RULES.md E4, E5, E7, E8 pay time within it), and a tariff or a quantity too large to be money is
refused naming the row; from the command line, one line ``portgate: FILE:LINE: ...`` and exit 2."""

from __future__ import annotations

import shutil

import pytest

from app.cli import main
from central.production.csvio import period_minutes
from portgate.errors import BadInput
from tests.central.production.conftest import EXAMPLES
from tests.central.production.test_input import pay, write

STOPS = "gang_id,kind,minutes,start,end\n"


def test_a_period_lasts_its_hours_and_one_across_midnight_too():
    from zoneinfo import ZoneInfo
    import datetime as dt

    zone = ZoneInfo("America/Sao_Paulo")
    assert period_minutes(dt.date(2026, 3, 10), "07-13", zone) == 360
    assert period_minutes(dt.date(2026, 3, 10), "19-01", zone) == 360


def test_an_interruption_as_long_as_the_period_is_paid(tmp_path):
    write(tmp_path, stops=STOPS + "T1,rain,360,,\n")
    [line] = [x for x in pay(tmp_path)[0].members[0].lines if x.rule == "E4"]
    assert "360 min" in line.description


@pytest.mark.parametrize(("rows", "message"), [
    (["T1,rain,99999999,,"], "interruptions.csv:2: minutes 99999999 is longer than gang T1's period 07-13 (360 min)"),
    (["T1,rain,361,,"], "interruptions.csv:2: minutes 361 is longer than gang T1's period 07-13 (360 min)"),
    (["T1,tide,,2026-03-10T07:00:00-03:00,2026-03-11T07:00:00-03:00"],
     "interruptions.csv:2: end 2026-03-11 07:00 is outside gang T1's period 07-13 of 2026-03-10 "
     "(2026-03-10 07:00..2026-03-10 13:00, port time)\n"
     "interruptions.csv:2: minutes 1440 is longer than gang T1's period 07-13 (360 min)"),
    (["T1,rain,200,,", "T1,meal_worked,200,,"],
     "interruptions.csv:3: gang T1's interruptions add up to 400 min, longer than its period 07-13 (360 min)"),
    (["T1,rain,-5,,"], "interruptions.csv:2: minutes '-5' must not be negative"),
])
def test_an_interruption_longer_than_the_gang_s_period_is_refused(tmp_path, rows, message):
    write(tmp_path, stops=STOPS + "\n".join(rows) + "\n")
    with pytest.raises(BadInput) as caught:
        pay(tmp_path)
    assert str(caught.value) == message


NIGHT = "gang_id,ship,date,period,cargo_class,quantity\nT1,9123456,2026-03-10,19-01,bagged,10\n"


@pytest.mark.parametrize("row", [
    "T1,rain,,2026-03-10T19:00:00-03:00,2026-03-10T19:30:00-03:00",  # the period's first minutes
    "T1,rain,,2026-03-10T23:40:00-03:00,2026-03-11T00:20:00-03:00",  # across midnight
    "T1,rain,,2026-03-11T00:30:00-03:00,2026-03-11T01:00:00-03:00",  # up to the period's end
    "T1,rain,,2026-03-11T03:30:00Z,2026-03-11T04:00:00Z",  # the same, in UTC
])
def test_an_interruption_within_a_night_period_is_paid(tmp_path, row):
    write(tmp_path, tally=NIGHT, stops=STOPS + row + "\n")
    assert [x for x in pay(tmp_path)[0].members[0].lines if x.rule == "E4"]


@pytest.mark.parametrize(("row", "message"), [
    ("T1,tide,,2026-03-10T00:10:00-03:00,2026-03-10T00:50:00-03:00",  # the night before: the wrong day
     "interruptions.csv:2: start 2026-03-10 00:10 is outside gang T1's period 19-01 of 2026-03-10 "
     "(2026-03-10 19:00..2026-03-11 01:00, port time)"),
    ("T1,rain,,2026-03-10T18:50:00-03:00,2026-03-10T19:20:00-03:00",  # begins before the period
     "interruptions.csv:2: start 2026-03-10 18:50 is outside gang T1's period 19-01 of 2026-03-10 "
     "(2026-03-10 19:00..2026-03-11 01:00, port time)"),
    ("T1,rain,,2026-03-11T00:45:00-03:00,2026-03-11T01:01:00-03:00",  # ends a minute after it
     "interruptions.csv:2: end 2026-03-11 01:01 is outside gang T1's period 19-01 of 2026-03-10 "
     "(2026-03-10 19:00..2026-03-11 01:00, port time)"),
])
def test_an_interruption_outside_the_gang_s_period_is_refused_naming_row_and_field(tmp_path, row, message):
    write(tmp_path, tally=NIGHT, stops=STOPS + row + "\n")
    with pytest.raises(BadInput) as caught:
        pay(tmp_path)
    assert str(caught.value) == message


def test_every_interruption_outside_the_period_is_named_in_one_pass(tmp_path, capsys):
    write(tmp_path, tally=NIGHT, stops=STOPS + "T1,tide,,2026-03-10T08:00:00-03:00,2026-03-10T09:00:00-03:00\n"
          "T1,rain,30,,\nT1,rain,,2026-03-12T00:00:00-03:00,2026-03-12T00:30:00-03:00\n")
    argv = ["production", "pay", "--rulebook", "dl-2032-1940", "--gang", str(tmp_path / "gang.csv"),
            "--tally", str(tmp_path / "tally.csv"), "--tariffs", str(tmp_path / "tariffs.csv"),
            "--interruptions", str(tmp_path / "interruptions.csv")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "interruptions.csv:2: start 2026-03-10 08:00 is outside gang T1's period 19-01" in err
    assert "interruptions.csv:4: start 2026-03-12 00:00 is outside gang T1's period 19-01" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(("file", "edit", "message"), [
    ("tariffs.csv", ("bagged,t,3.20,", "bagged,t,99999999999999999999999999999,"),
     "tariffs.csv:2: labour_tariff 99999999999999999999999999999 is more than 1000000"),
    ("tally.csv", ("bagged,120.5", "bagged,99999999999999999999"),
     "tally.csv:2: quantity 99999999999999999999 is more than 1000000"),
    ("interruptions.csv", ("T1,rain,40,,", "T1,rain,99999999,,"),
     "interruptions.csv:2: minutes 99999999 is longer than gang T1's period 07-13 (360 min)"),
])
def test_production_pay_refuses_a_value_out_of_bounds_in_one_line(tmp_path, capsys, file, edit, message):
    for name in ("gang.csv", "tally.csv", "tariffs.csv", "interruptions.csv"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    path = tmp_path / file
    text = path.read_text(encoding="utf-8")
    assert edit[0] in text
    path.write_text(text.replace(edit[0], edit[1], 1), encoding="utf-8")
    code = main(["production", "pay", "--rulebook", "dl-2032-1940", "--gang", str(tmp_path / "gang.csv"),
                 "--tally", str(tmp_path / "tally.csv"), "--tariffs", str(tmp_path / "tariffs.csv"),
                 "--interruptions", str(tmp_path / "interruptions.csv")])
    err = capsys.readouterr().err
    assert code == 2 and err.strip() == f"portgate: {message}", err
