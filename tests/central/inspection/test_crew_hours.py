"""Crew hours book (K1-K5, DL 29/06/1939): hand-computed days, weeks and watches."""

from __future__ import annotations

import datetime as dt

import pytest

from central.inspection.crew_hours import compute_book, whole_hours
from central.inspection.work_periods import Compensation, WatchType, WorkPeriod, check_overlaps
from portgate.errors import BadInput
from tests.central.inspection.conftest import TZ, watch, work

MON = "2024-06-10"  # Monday of ISO week 2024-W24
H = dt.timedelta(hours=1)
M = dt.timedelta(minutes=1)


def book(periods, date_from=MON, date_to="2024-06-16", tz=TZ, ship="9300001"):
    return compute_book(
        periods,
        ship=ship,
        date_from=dt.date.fromisoformat(date_from),
        date_to=dt.date.fromisoformat(date_to),
        tz=tz,
    )


def day_line(b, crew_id, day):
    lines = [e for e in b.overtime if e.crew_id == crew_id and e.date.isoformat() == day]
    assert len(lines) == 1
    return lines[0]


def rules(b):
    return [t.rule for t in b.transgressions]


# K1 / K3 / K4: the day -------------------------------------------------------------------------


def test_exactly_eight_hours_is_normal_work_without_overtime():
    b = book([work("A", MON, "08:00", "12:00"), work("A", MON, "13:00", "17:00")])
    line = day_line(b, "A", MON)
    assert (line.worked, line.normal, line.overtime, line.overtime_hours) == (
        8 * H,
        8 * H,
        0 * H,
        0,
    )
    assert line.compensation == ""
    assert b.transgressions == []


def test_ten_minutes_past_eight_hours_is_booked_as_one_whole_hour_k4():
    b = book([work("A", MON, "08:00", "12:00"), work("A", MON, "13:00", "17:10")])
    line = day_line(b, "A", MON)
    assert line.overtime == 10 * M
    assert line.overtime_hours == 1


def test_nine_and_a_half_hours_book_two_hours_of_overtime():
    b = book([work("A", MON, "07:00", "12:00"), work("A", MON, "13:00", "17:30")])
    line = day_line(b, "A", MON)
    assert line.worked == 9 * H + 30 * M
    assert line.overtime == 90 * M
    assert line.overtime_hours == 2


def test_whole_hours_rule_on_its_edges():
    assert whole_hours(dt.timedelta()) == 0
    assert whole_hours(M) == 1
    assert whole_hours(H) == 1
    assert whole_hours(H + dt.timedelta(seconds=1)) == 2


def test_short_intermittent_period_counts_one_hour_and_is_booked_k1():
    b = book(
        [
            work("A", MON, "08:00", "12:00"),
            work("A", MON, "13:00", "17:00"),
            work("A", MON, "20:00", "20:20", where="periods.csv:4"),
        ]
    )
    line = day_line(b, "A", MON)
    assert line.worked == 9 * H
    assert line.overtime_hours == 1
    (t,) = b.transgressions
    assert t.rule == "K1_SHORT_PERIOD"
    assert t.amount == 20 * M
    assert t.where == "periods.csv:4"
    assert "1h00" in t.detail_pt


def test_short_periods_are_padded_only_up_to_the_next_period():
    # 10:00-10:30 counts 10:00-10:45 (stops at the next period), 10:45-11:15 counts 10:45-11:45.
    b = book([work("A", MON, "10:00", "10:30"), work("A", MON, "10:45", "11:15")])
    assert day_line(b, "A", MON).worked == 105 * M
    assert rules(b) == ["K1_SHORT_PERIOD", "K1_SHORT_PERIOD"]


def test_back_to_back_periods_are_one_spell_not_a_short_period():
    b = book([work("A", MON, "08:00", "08:30"), watch("A", MON, "08:30", "12:00")])
    assert day_line(b, "A", MON).worked == 4 * H
    assert b.transgressions == []


def test_a_period_across_midnight_is_split_between_civil_days():
    b = book([work("A", MON, "20:00", "02:00", end_day="2024-06-11")])
    assert day_line(b, "A", MON).worked == 4 * H
    assert day_line(b, "A", "2024-06-11").worked == 2 * H


def test_civil_days_follow_the_ships_time_zone():
    # 22:00-02:00 in Sao Paulo is 01:00-05:00 UTC: all on 11 June for a ship kept on UTC.
    periods = [work("A", MON, "22:00", "02:00", end_day="2024-06-11")]
    sp = book(periods)
    utc = book(periods, tz="UTC")
    assert [e.date.isoformat() for e in sp.overtime] == [MON, "2024-06-11"]
    assert [(e.date.isoformat(), e.worked) for e in utc.overtime] == [("2024-06-11", 4 * H)]


def test_overtime_is_the_work_after_the_eighth_hour_for_port_traffic():
    # 08-10 port traffic, 10-20 other work: the overtime (18-20) is not port traffic.
    b = book([work("A", MON, "08:00", "10:00", port=True), work("A", MON, "10:00", "20:00")])
    assert day_line(b, "A", MON).port_traffic_overtime == 0 * H
    # 08-16 other work, 16-18 port traffic: both overtime hours are port traffic.
    b = book([work("B", MON, "08:00", "16:00"), work("B", MON, "16:00", "18:00", port=True)])
    assert day_line(b, "B", MON).port_traffic_overtime == 2 * H


@pytest.mark.parametrize(
    ("comps", "expected"),
    [
        ((Compensation.REST,), "rest"),
        ((Compensation.PAY,), "pay"),
        ((None,), "pending"),
        ((Compensation.REST, Compensation.PAY), "mixed"),
    ],
)
def test_compensation_status_of_the_overtime_k4(comps, expected):
    periods = [work("A", MON, "06:00", "14:00")]
    start = 14
    for comp in comps:
        periods.append(work("A", MON, f"{start}:00", f"{start + 1}:00", comp=comp))
        start += 1
    assert day_line(book(periods), "A", MON).compensation == expected


def test_compensation_of_periods_within_the_eight_hours_does_not_count():
    b = book(
        [
            work("A", MON, "08:00", "12:00", comp=Compensation.PAY),
            work("A", MON, "13:00", "18:00", comp=Compensation.REST),
        ]
    )
    assert day_line(b, "A", MON).compensation == "rest"


# K3: the week --------------------------------------------------------------------------------


def _port_week(extra_saturday_end):
    # Mon-Fri 08:00-22:00 port traffic: 14 h a day, 6 h overtime a day, 30 h in the week.
    days = [f"2024-06-{d}" for d in range(10, 15)]
    periods = [work("A", d, "08:00", "22:00", port=True) for d in days]
    if extra_saturday_end:
        periods.append(work("A", "2024-06-15", "08:00", extra_saturday_end, port=True))
    return periods


def test_exactly_thirty_hours_of_port_traffic_overtime_in_a_week_complies_k3():
    b = book(_port_week(None))
    (week,) = b.weeks
    assert (week.iso_year, week.iso_week, week.first_day.isoformat()) == (2024, 24, MON)
    assert week.port_traffic_overtime == 30 * H
    assert week.overtime_hours == 30
    assert not week.exceeds_cap
    assert b.transgressions == []


def test_thirty_hours_and_one_minute_exceeds_the_weekly_cap_k3():
    b = book(_port_week("16:01"))
    (week,) = b.weeks
    assert week.port_traffic_overtime == 30 * H + M
    assert week.overtime_hours == 31  # Saturday's minute is booked as an hour (K4)
    assert week.exceeds_cap
    (t,) = b.transgressions
    assert t.rule == "K3_PORT_TRAFFIC_CAP"
    assert t.date.isoformat() == "2024-06-16"  # booked on the Sunday that closes the week
    assert t.amount == 30 * H + M


def test_the_week_runs_monday_to_sunday():
    # Sun 9 June and Mon 10 June fall in different ISO weeks: 20 h + 20 h never adds up to 40 h.
    periods = [
        work("A", "2024-06-09", "00:00", "00:00", end_day="2024-06-10", port=True),
        work("A", MON, "00:00", "00:00", end_day="2024-06-11", port=True),
    ]
    b = book(periods, date_from="2024-06-09", date_to=MON)
    assert [(w.iso_week, w.port_traffic_overtime) for w in b.weeks] == [(23, 16 * H), (24, 16 * H)]
    assert not any(w.exceeds_cap for w in b.weeks)


def test_the_weekly_cap_uses_days_before_the_report_range():
    b = book(_port_week("16:01"), date_from="2024-06-15", date_to="2024-06-16")
    assert [e.date.isoformat() for e in b.overtime] == ["2024-06-15"]
    assert rules(b) == ["K3_PORT_TRAFFIC_CAP"]


# K2: watches ---------------------------------------------------------------------------------


def test_a_watch_of_exactly_four_hours_complies_k2():
    b = book([watch("A", MON, "00:00", "04:00"), watch("A", MON, "08:00", "12:00")])
    assert b.transgressions == []


def test_a_watch_of_four_hours_and_one_minute_is_a_transgression_k2():
    b = book([watch("A", MON, "00:00", "04:01", where="periods.csv:2")])
    (t,) = b.transgressions
    assert (t.rule, t.amount, t.where) == ("K2_WATCH_LENGTH", 4 * H + M, "periods.csv:2")
    assert t.article == "DL 1939 art. 1 §4"


def test_an_interval_shorter_than_four_hours_between_watches_is_a_transgression_k2():
    b = book(
        [watch("A", MON, "00:00", "04:00"), watch("A", MON, "07:59", "11:59", wt=WatchType.BRIDGE)]
    )
    (t,) = b.transgressions
    assert (t.rule, t.amount) == ("K2_WATCH_INTERVAL", 3 * H + 59 * M)


def test_back_to_back_watch_rows_are_one_watch():
    assert (
        book([watch("A", MON, "00:00", "02:00"), watch("A", MON, "02:00", "04:00")]).transgressions
        == []
    )
    assert rules(book([watch("A", MON, "00:00", "02:00"), watch("A", MON, "02:00", "04:01")])) == [
        "K2_WATCH_LENGTH"
    ]


def test_work_between_watches_does_not_shorten_the_interval():
    b = book(
        [
            watch("A", MON, "00:00", "04:00"),
            work("A", MON, "05:00", "07:00"),
            watch("A", MON, "08:00", "12:00"),
        ]
    )
    assert b.transgressions == []


# bad input -----------------------------------------------------------------------------------


def test_overlapping_periods_of_one_person_name_both_rows():
    periods = [
        work("A", MON, "08:00", "12:00", where="periods.csv:2"),
        work("A", MON, "11:00", "13:00", where="periods.csv:3"),
        work("B", MON, "11:00", "13:00", where="periods.csv:4"),
    ]
    with pytest.raises(BadInput) as err:
        check_overlaps(periods)
    assert "periods.csv:3" in str(err.value) and "overlaps periods.csv:2" in str(err.value)
    assert "periods.csv:4" not in str(err.value)
    with pytest.raises(BadInput):
        book(periods)


def test_period_ending_before_it_starts_is_refused():
    with pytest.raises(BadInput, match="not after start"):
        work("A", MON, "12:00", "08:00")


def test_watch_without_watch_type_is_refused():
    with pytest.raises(BadInput, match="watch_type is required"):
        WorkPeriod.from_row(
            {
                "ship": "S",
                "crew_id": "A",
                "start": "2024-06-10T08:00-03:00",
                "end": "2024-06-10T09:00-03:00",
                "kind": "watch",
            }
        )


def test_unknown_ship_and_reversed_range_are_refused():
    with pytest.raises(BadInput, match="no work periods for ship"):
        book([work("A", MON, "08:00", "12:00")], ship="nope")
    with pytest.raises(BadInput, match="before --from"):
        book([work("A", MON, "08:00", "12:00")], date_from="2024-06-16", date_to=MON)
