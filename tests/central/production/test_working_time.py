"""Work time of a gang (issue 31 items 3 and 4), through ``portgate production pay``.

E7 (DL 2.032 art. 16): the travel to an anchored ship and back is work time, and counts toward the
duration test of E3 ("more than half a day", arts. 25, 27); E9 (art. 27, with arts. 12 §5, §6): a
stoppage for want of equipment paid under E8 counts too. Hand figures: SD = R$ 180.00, hourly
22.50; general cargo 4.50 per t.
"""

from __future__ import annotations

from tests.central.production.cli_files import lines, member, pay, write

GANG = "gang_id,registration,role,minutes_worked\nT1,E1,stevedore,220\nT1,E2,stevedore,220\n"
TALLY = "gang_id,ship,date,period,cargo_class,quantity\nT1,9123456,2026-03-10,07-13,general,40\n"


def test_e7_travel_counts_toward_the_e3_duration_test(tmp_path, capsys):
    # E1: 40 t × 4.50 = 180.00; E2: 2 quotas, 90.00 each.
    # E7 travel 40 min: 180 × 40 ÷ 480 = 15.00 each (work time).
    # E3: 220 min worked + 40 min travel = 260 min > 240 min, and 40 t > 30 t: a full day 180.00,
    #   top-up 180.00 − 90.00 = 90.00. Total 90.00 + 90.00 + 15.00 = 195.00
    #   (today's code counts the 220 min only: half day 90.00 = the share, total 105.00).
    argv = write(tmp_path, gang=GANG, tally=TALLY,
                 interruptions="gang_id,kind,minutes\nT1,anchorage_travel,40\n")
    doc = pay(capsys, argv)
    for reg in ("E1", "E2"):
        m = member(doc, reg)
        assert lines(m) == [("E2", "90.00"), ("E3", "90.00"), ("E7", "15.00")]
        assert m["total"] == "195.00"


def test_e9_an_e8_stoppage_counts_toward_the_e3_duration_test_a_workers_fault_does_not(tmp_path, capsys):
    # E8 no equipment 30 min: 180 × 30 ÷ 480 = 11.25 each; 220 + 30 = 250 min > 240: full day,
    #   top-up 90.00. Total 90.00 + 90.00 + 11.25 = 191.25.
    argv = write(tmp_path, gang=GANG, tally=TALLY,
                 interruptions="gang_id,kind,minutes\nT1,no_equipment,30\n")
    m = member(pay(capsys, argv), "E1")
    assert lines(m) == [("E2", "90.00"), ("E3", "90.00"), ("E8", "11.25")]
    assert m["total"] == "191.25"
    # E8 art. 26: a stoppage proven caused by the workers is not paid and is no work time:
    # 220 + 0 = 220 min ≤ 240: half day 90.00 = the share, no top-up. Total 90.00 + 0.00 = 90.00.
    argv = write(tmp_path, gang=GANG, tally=TALLY,
                 interruptions="gang_id,kind,minutes\nT1,workers_fault,30\n")
    m = member(pay(capsys, argv), "E1")
    assert lines(m) == [("E2", "90.00"), ("E8", "0.00")]
    assert m["total"] == "90.00"


def test_the_duration_test_stays_strict_with_travel(tmp_path, capsys):
    # 200 min + 40 min travel = 240 min: not more than half a day (strict): half day 90.00 = share.
    # Total 90.00 + 15.00 = 105.00.
    argv = write(tmp_path, gang=GANG.replace("220", "200"), tally=TALLY,
                 interruptions="gang_id,kind,minutes\nT1,anchorage_travel,40\n")
    m = member(pay(capsys, argv), "E2")
    assert lines(m) == [("E2", "90.00"), ("E7", "15.00")]
    assert m["total"] == "105.00"


def test_a_rulebook_counting_a_kind_it_does_not_pay_as_work_is_refused_naming_the_key(tmp_path):
    import pytest

    from central.production.rulebook import find_rulebook
    from portgate.errors import ConfigError
    from tests.central.production.conftest import ROOT

    text = (ROOT / "config" / "rulebooks" / "dl-3844-1941.toml").read_text(encoding="utf-8")
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace('over_tonnes = "30"', 'over_tonnes = "30"\ncounts_as_work = ["no_equipment"]'),
                   encoding="utf-8")
    with pytest.raises(ConfigError, match=r"versions\[0\]\.guarantee\.counts_as_work.*'no_equipment' is "
                                          r"not paid by this version|'no_equipment' is not paid.*counts_as_work"):
        find_rulebook(str(bad))


CAP_G1 = ("EXTENSION_OVER_CAP: E1 worked 481 min, 121 min beyond the ordinary 360 min of period 07-13 "
          "(cap 120 min; E9, DL 2.032 art. 27, §1)")


def test_e9_work_more_than_two_hours_beyond_the_period_is_paid_by_the_tables_and_flagged(tmp_path, capsys):
    # E9 (DL 2.032 art. 27, §1): period 07-13 is 360 min ordinary; up to 360 + 120 = 480 min is an
    # extension paid by the tables. E1 481 min: 121 min beyond, flagged; E2 480 min: not flagged.
    # Pay by the tables, unchanged: 40 t × 4.50 = 180.00, 90.00 each; > 240 min and > 30 t: full
    # day 180.00, top-up 90.00; total 180.00 each (no premium for the extension).
    gang = "gang_id,registration,role,minutes_worked\nT1,E1,stevedore,481\nT1,E2,stevedore,480\n"
    argv = write(tmp_path, gang=gang, tally=TALLY)
    doc = pay(capsys, argv)
    assert doc["gangs"][0]["summary"]["flags"] == [CAP_G1]
    e1, e2 = member(doc, "E1"), member(doc, "E2")
    assert e1["flags"] == [CAP_G1] and e2["flags"] == []
    assert lines(e1) == lines(e2) == [("E2", "90.00"), ("E3", "90.00")]
    assert e1["total"] == e2["total"] == "180.00"
    from app.cli import main
    assert main(["production", "pay", *argv, "--format", "csv"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert f'T1,flag,,,,"{CAP_G1}",' in rows and f'T1,flag,E1,,,"{CAP_G1}",' in rows


def test_e9_travel_and_an_e8_stoppage_are_work_time_for_the_cap_too(tmp_path, capsys):
    # 420 min worked + 40 min travel (E7) + 30 min no equipment (E8) = 490 min > 480: flagged,
    # 130 min beyond 360. E7 15.00 and E8 11.25 each; pay otherwise by the tables.
    gang = "gang_id,registration,role,minutes_worked\nT1,E1,stevedore,420\nT1,E2,stevedore,410\n"
    argv = write(tmp_path, gang=gang, tally=TALLY,
                 interruptions="gang_id,kind,minutes\nT1,anchorage_travel,40\nT1,no_equipment,30\n")
    doc = pay(capsys, argv)
    assert member(doc, "E1")["flags"] == [
        "EXTENSION_OVER_CAP: E1 worked 490 min, 130 min beyond the ordinary 360 min of period 07-13 "
        "(cap 120 min; E9, DL 2.032 art. 27, §1)"]
    assert member(doc, "E2")["flags"] == []  # 410 + 70 = 480: within the cap
    assert lines(member(doc, "E1")) == [("E2", "90.00"), ("E3", "90.00"), ("E7", "15.00"), ("E8", "11.25")]


def test_c9_dock_work_an_eight_hour_period_and_its_cap(tmp_path, capsys):
    # C9 (DL 3.844 art. 7 §1): period 07-15 is 480 min ordinary; W1 601 min > 600: flagged.
    # Pay: 40 t × 4.50 = 180.00, 90.00 each; C2 hourly 22.50 × 601/60 = 225.375 → 225.38, top-up
    # 135.38 (W2: 22.50 × 10 h = 225.00, top-up 135.00): paid by the tables, no premium.
    gang = "gang_id,registration,role,minutes_worked\nT1,W1,worker,601\nT1,W2,worker,600\n"
    argv = write(tmp_path, gang=gang, rulebook="dl-3844-1941",
                 tally="gang_id,ship,date,period,cargo_class,quantity\nT1,9123456,2026-03-10,07-15,general,40\n")
    doc = pay(capsys, argv)
    assert doc["gangs"][0]["summary"]["flags"] == [
        "EXTENSION_OVER_CAP: W1 worked 601 min, 121 min beyond the ordinary 480 min of period 07-15 "
        "(cap 120 min; C9, DL 3.844 art. 7 §1)"]
    assert lines(member(doc, "W1")) == [("C1", "90.00"), ("C2", "135.38")]
    assert lines(member(doc, "W2")) == [("C1", "90.00"), ("C2", "135.00")] and member(doc, "W2")["flags"] == []


def test_the_extension_over_cap_flag_is_stored_with_the_import(tmp_path, capsys, sqlite_ledger):
    from sqlalchemy import select

    from app.cli import main
    from central.db import make_engine
    from central.production.schema import production_inputs

    url = sqlite_ledger(tmp_path / "ledger.db")
    gang = "gang_id,registration,role,minutes_worked\nT1,E1,stevedore,481\nT1,E2,stevedore,480\n"
    assert main(["production", "import", *write(tmp_path, gang=gang, tally=TALLY), "--db", url]) == 0
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            notes = conn.execute(select(production_inputs.c.what, production_inputs.c.note)
                                 .where(production_inputs.c.kind == "flag")).all()
    finally:
        engine.dispose()
    assert [tuple(n) for n in notes] == [("EXTENSION_OVER_CAP", CAP_G1)]


def test_r8_hours_count_the_travel_and_an_e8_stoppage_as_work_time(tmp_path, capsys, sqlite_ledger):
    # RULES.md E9: an E8 stoppage counts as work time for R8 too (E7 already: travel). E1 300 min +
    # 40 min travel + 30 min no equipment = 370 min = 6.17 h (today: 340 min = 5.67 h).
    import json

    from app.cli import main

    url = sqlite_ledger(tmp_path / "ledger.db")
    argv = write(tmp_path, gang="gang_id,registration,role,minutes_worked\nT1,E1,stevedore,300\n", tally=TALLY,
                 interruptions="gang_id,kind,minutes\nT1,anchorage_travel,40\nT1,no_equipment,30\n")
    assert main(["production", "import", *argv, "--db", url]) == 0
    capsys.readouterr()
    assert main(["rotation", "hours", "--db", url, "--month", "2026-03"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["stevedores"] == [{"registration": "E1", "gangs": 1, "hours": "6.17"}]


def test_the_cap_check_flags_only_boarded_members_over_it_whatever_the_others_minutes():
    # extension_over_cap looks at the gang's largest minutes first (issue 32 item 6): a member who
    # did not board, however long his typed minutes, flags nobody; a boarded member half a minute
    # over 360 + 120 is flagged; 480 + 0 is not; a gang with no members has no flag.
    import datetime as dt
    from decimal import Decimal

    from central.production.model import GangWork, Member
    from central.production.rulebook import find_rulebook
    from central.production.work_checks import extension_over_cap

    day = dt.date(2026, 3, 10)
    version = find_rulebook("dl-2032-1940").version_for(day)

    def gang(*members):
        return GangWork("T1", "9123456", day, "07-13", dt.datetime(2026, 3, 10, 16, tzinfo=dt.UTC), members, ())

    at_cap = Member("E2", "stevedore", minutes_worked=Decimal(480))
    absent = Member("E3", "stevedore", boarded=False, minutes_worked=Decimal(900))
    assert extension_over_cap(gang(at_cap, absent), version, Decimal(0)) == {}
    assert extension_over_cap(gang(), version, Decimal(0)) == {}
    over = Member("E1", "stevedore", minutes_worked=Decimal("480.5"))
    flags = extension_over_cap(gang(at_cap, absent, over), version, Decimal(0))
    assert list(flags) == ["E1"] and "E1 worked 480.5 min, 120.5 min beyond" in flags["E1"]
    assert list(extension_over_cap(gang(at_cap), version, Decimal("0.5"))) == ["E2"]  # work-time minutes count
