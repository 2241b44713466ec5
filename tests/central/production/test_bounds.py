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
