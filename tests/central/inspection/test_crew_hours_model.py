"""The crew hours book's integer model: periods kept to the second, read from the file's cells in
any column order, civil days cut at the zone's real midnights (DST), and the books' text escaped."""

from __future__ import annotations

import datetime as dt

import pytest

from central.inspection import book_render
from central.inspection.crew_hours import compute_book
from central.inspection.files import read_periods
from central.inspection.work_periods import Kind, WorkPeriod
from portgate.errors import BadInput
from tests.central.inspection.conftest import period_row, work

H = dt.timedelta(hours=1)


def test_a_fraction_of_a_second_is_refused_from_a_row_and_from_datetimes(periods_csv):
    path = periods_csv(
        [period_row("A", "2024-06-10T08:00:00.5-03:00", "2024-06-10T12:00-03:00")]
    )
    with pytest.raises(BadInput) as info:
        read_periods(path)
    assert str(info.value) == (
        "periods.csv:2: start '2024-06-10T08:00:00.5-03:00' has a fraction of a second"
    )
    start = dt.datetime(2024, 6, 10, 11, 0, 0, 1, tzinfo=dt.UTC)
    with pytest.raises(BadInput, match="kept to the second"):
        WorkPeriod("S", "A", "", "", start, start + H, Kind.WORK)
    with pytest.raises(BadInput, match="UTC offset"):
        WorkPeriod("S", "A", "", "", start.replace(tzinfo=None, microsecond=0), start, Kind.WORK)


def test_periods_keep_epoch_seconds_and_give_back_utc_datetimes():
    p = work("A", "2024-06-10", "08:00", "12:30")
    assert p.start_s == int(dt.datetime(2024, 6, 10, 11, tzinfo=dt.UTC).timestamp())
    assert p.end_s - p.start_s == 4 * 3600 + 1800
    assert p.start == dt.datetime(2024, 6, 10, 11, tzinfo=dt.UTC) and p.start.tzinfo is dt.UTC
    assert p.length == 4 * H + dt.timedelta(minutes=30)


def test_columns_in_another_order_or_absent_read_as_the_canonical_file(tmp_path):
    canonical = tmp_path / "a.csv"
    canonical.write_text(
        "ship,crew_id,name,role,start,end,kind,watch_type,port_traffic,compensation\n"
        "S,A,,,2024-06-10T08:00-03:00,2024-06-10T12:00-03:00,watch,engine,,\n",
        encoding="utf-8",
    )
    other = tmp_path / "b.csv"
    other.write_text(
        "watch_type,end,kind,start,crew_id,ship\n"
        "engine,2024-06-10T12:00-03:00,watch,2024-06-10T08:00-03:00,A,S\n",
        encoding="utf-8",
    )
    (a,) = read_periods(canonical)
    (b,) = read_periods(other)
    assert a._replace(where="") == b._replace(where="")
    assert (b.where, b.name, b.port_traffic, b.compensation) == ("b.csv:2", "", False, None)


def test_a_row_with_more_cells_than_the_header_is_named(periods_csv):
    good = period_row("A", "2024-06-10T08:00-03:00", "2024-06-10T12:00-03:00")
    path = periods_csv([good, [*good, "extra"]])
    with pytest.raises(BadInput) as info:
        read_periods(path)
    assert str(info.value) == "periods.csv:3: 1 cell(s) more than the header has"


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [
        # DST began at 00:00 on 4 Nov 2018 (clocks to 01:00): the 4th starts at 03:00 UTC
        (
            "2018-11-03T22:00-03:00",
            "2018-11-04T03:00-02:00",
            [("2018-11-03", 2), ("2018-11-04", 2)],
        ),
        # DST ended at 00:00 on 17 Feb 2019 (clocks back to 23:00): the 16th has 25 hours
        (
            "2019-02-16T22:00-02:00",
            "2019-02-17T02:00-03:00",
            [("2019-02-16", 3), ("2019-02-17", 2)],
        ),
    ],
)
def test_civil_days_are_cut_at_the_zones_real_midnight_across_dst(
    periods_csv, start, end, expected
):
    day = dt.date.fromisoformat(expected[0][0])
    b = compute_book(
        read_periods(periods_csv([period_row("A", start, end)])),
        ship="9300001",
        date_from=day,
        date_to=day + dt.timedelta(days=1),
        tz="America/Sao_Paulo",
    )
    assert [(e.date.isoformat(), e.worked / H) for e in b.overtime] == expected


def test_names_and_sources_are_escaped_in_the_html_and_kept_in_the_csv(periods_csv):
    rows = [
        period_row("A&1", "2024-06-10T08:00-03:00", "2024-06-10T08:20-03:00", name='Zé <"chefe">'),
    ]
    b = compute_book(
        read_periods(periods_csv(rows, name="p&q.csv")),
        ship="9300001",
        date_from=dt.date(2024, 6, 10),
        date_to=dt.date(2024, 6, 10),
        tz="America/Sao_Paulo",
    )
    page = book_render.book_html(b)
    assert "<td>A&amp;1</td><td>Zé &lt;&quot;chefe&quot;&gt;</td>" in page
    assert "<td>p&amp;q.csv:2</td>" in page
    assert "2024-06-10T08:00:00-03:00" in page  # K1 short period, in the ship's zone
    assert 'A&1,"Zé <""chefe"">"' in book_render.transgressions_csv(b)
    assert ',60,60,0,0,0,\n' in book_render.overtime_csv(b)
