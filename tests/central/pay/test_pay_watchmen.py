"""Pay of port watchmen, rules P1-P7 (RULES.md), on the default rulebook decreto-83611-1979."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from central.pay.calendar import HolidayCalendar, LocalHoliday
from central.pay.rulebook import load_rulebook
from central.pay.watchmen import WatchShift, night_share, pay_shift, work_day
from portgate.errors import BadInput, ConfigError

ROOT = Path(__file__).resolve().parents[3]
Z = ZoneInfo("America/Sao_Paulo")
BOOK = load_rulebook(ROOT / "config/rulebooks/decreto-83611-1979.toml")
CCT = load_rulebook(ROOT / "config/rulebooks/example-cct-2026.toml")
CAL = HolidayCalendar("SP", "America/Sao_Paulo")


def t(*args) -> dt.datetime:
    return dt.datetime(*args, tzinfo=Z)


def shift(start, hours=6, *, exit_after=dt.timedelta(0), function="vigia", berth="berthed",
          meal=False, exit_none=False):
    end = start + dt.timedelta(hours=hours)
    return WatchShift("s1", "100", function, "9300001", berth, start, end, start,
                      None if exit_none else end + exit_after, meal)


def amounts(statement) -> dict[str, str]:
    return {line.rule: str(line.amount) for line in statement.lines}


# -- the three worked examples of RULES.md ----------------------------------------------------------

def test_example_1_tuesday_day_shift_exit_within_tolerance_pays_base_only():
    st_ = pay_shift(shift(t(2026, 3, 10, 7), exit_after=dt.timedelta(minutes=5)), BOOK, CAL)
    assert amounts(st_) == {"P1": "180.00"}
    assert st_.total == Decimal("180.00")
    assert st_.lines[0].article == "83.611 art. 25"


def test_example_2_chief_sunday_night_anchored_with_extension():
    s = shift(t(2026, 3, 15, 19), function="vigia_chefe", berth="anchored",
              exit_after=dt.timedelta(minutes=90))
    st_ = pay_shift(s, BOOK, CAL)
    assert amounts(st_) == {"P1": "270.00", "P2": "108.00", "P3": "67.50", "P4": "135.00",
                            "P7": "116.10"}
    assert st_.total == Decimal("696.60")
    assert st_.work_day == dt.date(2026, 3, 15)
    assert st_.extension_hours == 2


def test_example_3_sunday_national_holiday_pays_holiday_not_sunday():
    st_ = pay_shift(shift(t(2026, 11, 15, 7)), BOOK, CAL)
    assert amounts(st_) == {"P1": "180.00", "P5": "180.00"}
    assert st_.total == Decimal("360.00")


# -- definitions: work day ------------------------------------------------------------------------

def test_work_day_of_19_01_is_the_start_date_and_of_01_07_the_date_of_0100():
    s, e = t(2026, 3, 14, 19), t(2026, 3, 15, 1)
    assert work_day(s.astimezone(dt.UTC), e.astimezone(dt.UTC), Z) == dt.date(2026, 3, 14)
    s, e = t(2026, 3, 15, 1), t(2026, 3, 15, 7)
    assert work_day(s.astimezone(dt.UTC), e.astimezone(dt.UTC), Z) == dt.date(2026, 3, 15)


def test_work_day_tie_goes_to_the_start_date():
    # 21-03: three hours on Saturday, three on Sunday -> Saturday, so no Sunday premium
    st_ = pay_shift(shift(t(2026, 3, 14, 21)), BOOK, CAL)
    assert st_.work_day == dt.date(2026, 3, 14)
    assert "P4" not in amounts(st_)


def test_work_day_majority_after_midnight_moves_to_next_date():
    # 22-04: two hours Saturday, four hours Sunday -> Sunday premium
    st_ = pay_shift(shift(t(2026, 3, 14, 22)), BOOK, CAL)
    assert st_.work_day == dt.date(2026, 3, 15)
    assert amounts(st_)["P4"] == "90.00"


# -- night window ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("hour", "night"), [
    (7, False), (13, False), (19, True), (1, True),
    (16, True),   # 16-22: 3 of 6 hours inside 19-07, exactly half -> night
    (15, False),  # 15-21: 2 of 6 hours
    (4, True),    # 04-10: 3 of 6 hours
    (5, False),   # 05-11: 2 of 6 hours
])
def test_night_shift_needs_at_least_half_of_the_minutes_in_19_07(hour, night):
    st_ = pay_shift(shift(t(2026, 3, 10, hour)), BOOK, CAL)
    assert ("P3" in amounts(st_)) is night


def test_night_share_edges_are_exact():
    s, e = t(2026, 3, 10, 16), t(2026, 3, 10, 22)
    assert night_share(s.astimezone(dt.UTC), e.astimezone(dt.UTC), Z, "19-07") == Decimal("0.5")


# -- extension -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("minutes", "hours"), [(0, 0), (10, 0), (11, 1), (60, 1), (61, 2), (120, 2)])
def test_extension_tolerance_10_minutes_then_each_started_hour(minutes, hours):
    st_ = pay_shift(shift(t(2026, 3, 10, 7), exit_after=dt.timedelta(minutes=minutes)), BOOK, CAL)
    assert st_.extension_hours == hours
    expected = {"P1": "180.00"} | ({"P2": str((Decimal(30) * Decimal("1.20") * hours).quantize(Decimal("0.01")))} if hours else {})
    assert amounts(st_) == expected
    assert st_.flags == ()


def test_ten_minutes_and_59_seconds_counts_as_ten_whole_minutes():
    st_ = pay_shift(shift(t(2026, 3, 10, 7), exit_after=dt.timedelta(minutes=10, seconds=59)), BOOK, CAL)
    assert st_.extension_hours == 0


def test_extension_over_two_hours_is_paid_and_flagged():
    st_ = pay_shift(shift(t(2026, 3, 10, 7), exit_after=dt.timedelta(minutes=125)), BOOK, CAL)
    assert st_.extension_hours == 3
    assert amounts(st_)["P2"] == "108.00"
    assert st_.flags == ("EXTENSION_OVER_CAP",)


def test_no_exit_means_no_extension():
    st_ = pay_shift(shift(t(2026, 3, 10, 7), exit_none=True), BOOK, CAL)
    assert amounts(st_) == {"P1": "180.00"}


def test_meal_worked_pays_a_day_wage():
    st_ = pay_shift(shift(t(2026, 3, 10, 7), meal=True), BOOK, CAL)
    assert amounts(st_) == {"P1": "180.00", "P6": "180.00"}


# -- holidays --------------------------------------------------------------------------------------

def test_state_holiday_counts_in_its_state_only():
    day = t(2026, 7, 9, 7)  # Revolução Constitucionalista, SP only (Thursday)
    assert "P5" in amounts(pay_shift(shift(day), BOOK, CAL))
    assert "P5" not in amounts(pay_shift(shift(day), BOOK, HolidayCalendar("RJ")))


def test_municipal_holiday_from_configuration_only():
    santos = HolidayCalendar("SP", municipal=[LocalHoliday("01-26", "Aniversário de Santos")])
    day = t(2026, 1, 26, 7)
    assert "P5" in amounts(pay_shift(shift(day), BOOK, santos))
    assert "P5" not in amounts(pay_shift(shift(day), BOOK, CAL))


def test_holiday_on_a_sunday_pays_p5_only_and_a_plain_sunday_pays_p4():
    with_holiday = HolidayCalendar("SP", agreement=[LocalHoliday("2026-03-15", "Dia X")])
    assert set(amounts(pay_shift(shift(t(2026, 3, 15, 7)), BOOK, with_holiday))) == {"P1", "P5"}
    assert set(amounts(pay_shift(shift(t(2026, 3, 15, 7)), BOOK, CAL))) == {"P1", "P4"}


def test_optional_days_only_when_configured():
    carnival = t(2026, 2, 17, 7)
    assert "P5" not in amounts(pay_shift(shift(carnival), BOOK, CAL))
    with_carnival = HolidayCalendar("SP", optional_days=["Carnaval"])
    assert "P5" in amounts(pay_shift(shift(carnival), BOOK, with_carnival))


def test_unknown_optional_day_or_state_is_a_config_error():
    with pytest.raises(ConfigError) as exc:
        HolidayCalendar("SP", optional_days=["Carnival"])
    assert exc.value.key == "optional_days[0]"
    with pytest.raises(ConfigError) as exc:
        HolidayCalendar("XX")
    assert exc.value.key == "state"


# -- wage table and month edges ------------------------------------------------------------------

def test_wage_table_change_at_midnight_follows_the_work_day():
    # SD 165.00 until 2025-12-31, 180.00 from 2026-01-01
    before = pay_shift(shift(t(2025, 12, 31, 19)), BOOK, CAL)   # 19-01: work day Dec 31
    after = pay_shift(shift(t(2026, 1, 1, 1)), BOOK, CAL)       # 01-07: work day Jan 1 (holiday)
    assert amounts(before)["P1"] == "165.00"
    assert amounts(after)["P1"] == "180.00"


def test_shift_across_a_month_end_belongs_to_its_work_day():
    st_ = pay_shift(shift(t(2026, 3, 31, 19), exit_after=dt.timedelta(minutes=30)), BOOK, CAL)
    assert st_.work_day == dt.date(2026, 3, 31)
    assert st_.due_at == (t(2026, 4, 1, 1, 30) + dt.timedelta(hours=48)).astimezone(dt.UTC)
    assert amounts(st_) == {"P1": "180.00", "P2": "36.00", "P3": "45.00"}


def test_due_time_is_48_hours_after_the_end_of_the_service():
    st_ = pay_shift(shift(t(2026, 3, 10, 7)), BOOK, CAL)
    assert st_.due_at == t(2026, 3, 12, 13).astimezone(dt.UTC)


# -- refusals -------------------------------------------------------------------------------------

def test_unknown_function_is_refused_naming_the_shift():
    with pytest.raises(BadInput) as exc:
        pay_shift(shift(t(2026, 3, 10, 7), function="estivador"), BOOK, CAL)
    assert exc.value.where == "s1" and "estivador" in str(exc.value)


def test_1970_or_backwards_times_are_never_paid():
    s = shift(t(2026, 3, 10, 7))
    bad = WatchShift("s2", "100", "vigia", "x", "berthed", s.period_start, s.period_end,
                     dt.datetime(1970, 1, 1, tzinfo=dt.UTC), s.exit_at)
    with pytest.raises(BadInput, match="implausible"):
        pay_shift(bad, BOOK, CAL)
    backwards = WatchShift("s3", "100", "vigia", "x", "berthed", s.period_start, s.period_end,
                           s.period_end, s.period_start)
    with pytest.raises(BadInput, match="backwards"):
        pay_shift(backwards, BOOK, CAL)


def test_no_wage_in_force_is_refused_naming_the_shift_and_rulebook():
    with pytest.raises(BadInput, match=r"s1: rulebook decreto-83611-1979 has no day wage in force on "
                                       r"2020-03-10 \(its day_wages start 2025-01-01\)"):
        pay_shift(shift(t(2020, 3, 10, 7)), BOOK, CAL)


# -- the collective-agreement example: same engine, different data ------------------------------

def test_cct_overtime_steps_risk_premium_and_minute_rounding():
    # 3h30 extension, minute rounding: 2h at +50%, 1.5h at +100%; SD 210, SH 35
    st_ = pay_shift(shift(t(2026, 3, 10, 7), exit_after=dt.timedelta(minutes=210)), CCT, CAL)
    assert amounts(st_) == {"CCT-1": "210.00", "CCT-2a": "105.00", "CCT-2b": "105.00",
                            "CCT-6": "84.00"}
    assert st_.total == Decimal("504.00")


def test_cct_anchorage_applies_to_base_and_night_only():
    st_ = pay_shift(shift(t(2026, 3, 10, 19), berth="anchored"), CCT, CAL)
    assert amounts(st_) == {"CCT-1": "210.00", "CCT-3": "63.00", "CCT-6": "84.00", "CCT-7": "54.60"}


# -- properties -----------------------------------------------------------------------------------

@settings(max_examples=150, deadline=None)
@given(
    start=st.datetimes(min_value=dt.datetime(2026, 1, 1), max_value=dt.datetime(2026, 12, 30)),
    hours=st.integers(min_value=1, max_value=12),
    extra=st.integers(min_value=-300, max_value=400),
    function=st.sampled_from(["vigia", "vigia_chefe"]),
    berth=st.sampled_from(["berthed", "anchored"]),
    meal=st.booleans(),
    book=st.sampled_from([BOOK, CCT]),
)
def test_total_is_the_sum_of_lines_and_never_negative(start, hours, extra, function, berth, meal, book):
    s = shift(start.replace(tzinfo=Z, second=0, microsecond=0), hours,
              exit_after=dt.timedelta(minutes=max(extra, -60 * hours)), function=function,
              berth=berth, meal=meal)
    st_ = pay_shift(s, book, CAL)
    assert st_.total == sum((line.amount for line in st_.lines), Decimal(0))
    assert st_.total >= 0 and all(line.amount >= 0 for line in st_.lines)
    assert all(line.amount == line.amount.quantize(Decimal("0.01")) for line in st_.lines)
    assert st_.lines[0].rule in ("P1", "CCT-1")


def test_a_payer_reusing_lines_gives_the_same_statements_as_pay_shift():
    from central.pay.watchmen import ShiftPayer

    payer = ShiftPayer(BOOK, CAL)
    cases = [shift(t(2026, 3, d, h), exit_after=dt.timedelta(minutes=m), berth=b)
             for d in (14, 15) for h in (7, 19) for m in (0, 45, 45, 130) for b in ("berthed", "anchored")]
    cases = [dataclasses_replace(c, shift_id=f"s{i}") for i, c in enumerate(cases)]
    assert [payer.pay(c) for c in cases] == [pay_shift(c, BOOK, CAL) for c in cases]


def dataclasses_replace(obj, **changes):
    import dataclasses
    return dataclasses.replace(obj, **changes)
