"""Bad input in the office's CSV files and in rulebooks: a clear error naming the row or key."""

import shutil
from pathlib import Path

import pytest

from central.production.csvio import read_gang_work, read_tariffs
from central.production.engine import pay_gangs
from central.production.rulebook import find_rulebook
from portgate.errors import BadInput, ConfigError
from tests.central.production.conftest import EXAMPLES

GANG = "gang_id,registration,role,holds_worked,boarded,minutes_worked\n"
TALLY = "gang_id,ship,date,period,cargo_class,quantity\n"


def write(tmp_path: Path, gang=GANG + "T1,E1,stevedore,1,yes,300\n",
          tally=TALLY + "T1,9123456,2026-03-10,07-13,bagged,10\n", stops=None):
    (tmp_path / "gang.csv").write_text(gang, encoding="utf-8")
    (tmp_path / "tally.csv").write_text(tally, encoding="utf-8")
    shutil.copy(EXAMPLES / "tariffs.csv", tmp_path / "tariffs.csv")
    if stops is not None:
        (tmp_path / "interruptions.csv").write_text(stops, encoding="utf-8")
    return tmp_path


def pay(tmp_path, rulebook="dl-2032-1940"):
    works = read_gang_work(tmp_path / "gang.csv", tmp_path / "tally.csv",
                           tmp_path / "interruptions.csv" if (tmp_path / "interruptions.csv").exists() else None)
    return pay_gangs(works, find_rulebook(rulebook), read_tariffs(tmp_path / "tariffs.csv"))


def test_good_files_pay(tmp_path):
    # 10 t × 3.20 = 32.00 ; 300 min but only 10 t → half-day minimum 90.00 → top-up 58.00
    results = pay(write(tmp_path))
    assert [str(x.amount) for x in results[0].members[0].lines] == ["32.00", "58.00"]
    assert str(results[0].members[0].total) == "90.00"


def test_tally_for_a_gang_nobody_boarded_names_the_tally_row(tmp_path):
    write(tmp_path, gang=GANG + "T1,E1,stevedore,1,no,\nT1,E2,stevedore,1,no,\n")
    with pytest.raises(BadInput, match=r"tally.csv:2: tally for gang T1, but nobody of that gang boarded"):
        pay(tmp_path)


def test_tally_for_a_gang_with_no_members_names_the_tally_row(tmp_path):
    write(tmp_path, tally=TALLY + "T1,9123456,2026-03-10,07-13,bagged,10\nT9,9123456,2026-03-10,07-13,bagged,5\n")
    with pytest.raises(BadInput, match=r"tally.csv:3: tally for gang T9, but gang.csv lists nobody"):
        pay(tmp_path)


@pytest.mark.parametrize(("quantity", "message"), [
    ("-1", "tally.csv:2: quantity '-1' must not be negative"),
    ("abc", "tally.csv:2: quantity 'abc' is not a number"),
    ("1,5", "tally.csv:2: quantity '1,5' is not a number"),
    ("NaN", "tally.csv:2: quantity 'NaN' is not a number"),
    ("1e3", "tally.csv:2: quantity '1e3' is not a number"),
    ("", "tally.csv:2: quantity is required"),
    ("1.0001", "tally.csv:2: quantity '1.0001' has more than 3 decimal places"),
])
def test_bad_quantity_names_the_row(tmp_path, quantity, message):
    write(tmp_path, tally=TALLY + f'T1,9123456,2026-03-10,07-13,bagged,"{quantity}"\n')
    with pytest.raises(BadInput, match=message):
        pay(tmp_path)


def test_unknown_cargo_class_names_the_row(tmp_path):
    write(tmp_path, tally=TALLY + "T1,9123456,2026-03-10,07-13,bagged,10\nT1,9123456,2026-03-10,07-13,bananas,3\n")
    with pytest.raises(BadInput, match=r"tally.csv:3: cargo class 'bananas' has no tariff in force on 2026-03-10"):
        pay(tmp_path)


def test_cargo_class_before_its_tariff_starts_is_an_error(tmp_path):
    write(tmp_path, tally=TALLY + "T1,9123456,2025-12-31,07-13,bagged,10\n")
    with pytest.raises(BadInput, match=r"tally.csv:2: cargo class 'bagged' has no tariff in force on 2025-12-31"):
        pay(tmp_path)


def test_role_not_in_the_quota_table_names_the_gang_row(tmp_path):
    write(tmp_path, gang=GANG + "T1,E1,stevedore,1,yes,300\nT1,E2,crane_boss,1,yes,300\n")
    with pytest.raises(BadInput, match=r"gang.csv:3: role 'crane_boss' is not in the quota table"):
        pay(tmp_path)


def test_every_bad_row_of_every_file_is_named_at_once(tmp_path):
    write(tmp_path, gang=GANG + "T1,E1,stevedore,x,yes,300\nT1,E2,stevedore,1,maybe,300\n",
          tally=TALLY + "T1,9123456,2026-13-10,07-13,bagged,10\n")
    with pytest.raises(BadInput) as err:
        pay(tmp_path)
    text = str(err.value)
    assert "gang.csv:2: holds_worked 'x'" in text and "gang.csv:3: boarded 'maybe'" in text
    assert "tally.csv:2: date '2026-13-10'" in text


def test_one_gang_on_two_ships_is_refused(tmp_path):
    write(tmp_path, tally=TALLY + "T1,9123456,2026-03-10,07-13,bagged,10\nT1,9999999,2026-03-10,07-13,bagged,1\n")
    with pytest.raises(BadInput, match=r"tally.csv:3: gang T1 is on 9123456"):
        pay(tmp_path)


def test_members_with_no_tally_are_refused(tmp_path):
    write(tmp_path, gang=GANG + "T1,E1,stevedore,1,yes,300\nT2,E2,stevedore,1,yes,300\n")
    with pytest.raises(BadInput, match=r"gang.csv:3: gang T2 has no row in the tally"):
        pay(tmp_path)


def test_boarded_member_needs_minutes_worked(tmp_path):
    write(tmp_path, gang=GANG + "T1,E1,stevedore,1,yes,\n")
    with pytest.raises(BadInput, match=r"gang.csv:2: minutes_worked is required"):
        pay(tmp_path)


def test_missing_header_column_and_missing_file(tmp_path):
    write(tmp_path, tally="gang_id,ship,date,period,cargo_class\nT1,9123456,2026-03-10,07-13,bagged\n")
    with pytest.raises(BadInput, match=r"tally.csv:1: header lacks column\(s\) quantity"):
        pay(tmp_path)
    with pytest.raises(BadInput, match="file not found"):
        read_tariffs(tmp_path / "nope.csv")


@pytest.mark.parametrize(("row", "message"), [
    ("T1,tide,,2026-03-10T08:00:00-03:00,", "interruptions.csv:2: start and end go together"),
    ("T1,tide,,2026-03-10T08:00:00,2026-03-10T10:00:00", "interruptions.csv:2: start .* has no UTC offset"),
    ("T1,tide,,2026-03-10T10:00:00-03:00,2026-03-10T08:00:00-03:00", "interruptions.csv:2: end must be after start"),
    ("T1,tide,60,2026-03-10T08:00:00-03:00,2026-03-10T10:00:00-03:00", "interruptions.csv:2: minutes 60 disagrees"),
    ("T1,rain,,,", "interruptions.csv:2: give minutes, or start and end"),
    ("T1,rain,0,,", "interruptions.csv:2: minutes must be > 0"),
    ("T1,hail,10,,", "interruptions.csv:2: kind 'hail' is not paid under this rulebook"),
    ("T7,rain,10,,", "interruptions.csv:2: gang T7 has no row in the tally"),
])
def test_bad_interruption_rows_name_the_row(tmp_path, row, message):
    write(tmp_path, stops="gang_id,kind,minutes,start,end\n" + row + "\n")
    with pytest.raises(BadInput, match=message):
        pay(tmp_path)


def test_tide_wait_from_start_and_end_times(tmp_path):
    # 08:00 → 10:00 is exactly 2 h (not paid); 10:59 → 13:00 (the period's end) is 121 min (22.69)
    write(tmp_path, stops="gang_id,kind,minutes,start,end\n"
          "T1,tide,,2026-03-10T08:00:00-03:00,2026-03-10T10:00:00-03:00\n"
          "T1,tide,,2026-03-10T10:59:00-03:00,2026-03-10T13:00:00-03:00\n")
    lines = pay(tmp_path)[0].members[0].lines
    assert [str(x.amount) for x in lines if x.rule == "E4"] == ["22.69"]


def test_duplicate_tariff_row_is_refused(tmp_path):
    path = tmp_path / "tariffs.csv"
    path.write_text("cargo_class,unit,labour_tariff,effective_from\nbagged,t,3.20,2026-01-01\n"
                    "bagged,t,3.30,2026-01-01\nsteel,kg,1,2026-01-01\n", encoding="utf-8")
    with pytest.raises(BadInput) as err:
        read_tariffs(path)
    assert "tariffs.csv:4: unit 'kg' is not t|unit" in str(err.value)


def test_duplicate_tariff_same_date_names_both_rows(tmp_path):
    path = tmp_path / "tariffs.csv"
    path.write_text("cargo_class,unit,labour_tariff,effective_from\nbagged,t,3.20,2026-01-01\n"
                    "bagged,t,3.30,2026-01-01\n", encoding="utf-8")
    with pytest.raises(BadInput, match="tariffs.csv:3: bagged from 2026-01-01 already given at tariffs.csv:2"):
        read_tariffs(path)


def test_rulebook_versions_are_chosen_by_work_date(tmp_path):
    text = (Path(__file__).resolve().parents[3] / "config/rulebooks/dl-2032-1940.toml").read_text(encoding="utf-8")
    later = text.split("[[versions]]", 1)[1].replace('effective_from = "1940-02-23"', 'effective_from = "2026-03-01"')
    later = later.replace('day_wage = "180.00"', 'day_wage = "200.00"')
    path = tmp_path / "book.toml"
    path.write_text(text + "\n[[versions]]" + later, encoding="utf-8")
    book = find_rulebook(str(path))
    import datetime as dt
    assert book.version_for(dt.date(2026, 2, 28)).day_wage == 180
    assert book.version_for(dt.date(2026, 3, 1)).day_wage == 200
    with pytest.raises(BadInput, match="no version in force on 1900-01-01"):
        book.version_for(dt.date(1900, 1, 1))


@pytest.mark.parametrize(("edit", "key"), [
    (('stevedore = { quota = "1" }', 'stevedore = { quota = "0" }'), "shares.quotas.stevedore"),
    (("[versions.interruptions.tide]", "[versions.interruptions.hail]"), "interruptions.hail"),
    (('day_wage = "180.00"', 'day_wage = "abc"'), "day_wage"),
    (("wage_fraction = \"2\"", "wage_fraction = \"2\"\nbonus = 1"), "bonus"),
    (("[versions.payment]", "[versions.paymnt]"), "paymnt"),
])
def test_bad_rulebook_names_the_key(tmp_path, edit, key):
    text = (Path(__file__).resolve().parents[3] / "config/rulebooks/dl-2032-1940.toml").read_text(encoding="utf-8")
    path = tmp_path / "bad.toml"
    path.write_text(text.replace(*edit), encoding="utf-8")
    with pytest.raises(ConfigError, match=key):
        find_rulebook(str(path))


def test_unknown_rulebook_name_is_a_config_error():
    with pytest.raises(ConfigError, match="file not found"):
        find_rulebook("dl-0000-1900")


def test_a_member_listed_twice_is_named_with_the_other_bad_rows_in_one_pass(tmp_path):
    write(tmp_path, gang=GANG + "T1,E1,stevedore,1,yes,300\nT1,E2,stevedore,1,maybe,300\nT1,E1,stevedore,1,yes,300\n")
    with pytest.raises(BadInput) as caught:
        pay(tmp_path)
    lines = str(caught.value).splitlines()
    assert [line.split(": ", 1)[0].rsplit("/", 1)[-1] for line in lines] == ["gang.csv:3", "gang.csv:4"], lines
    assert lines[1].endswith("gang.csv:4: E1 is listed twice in gang T1")
