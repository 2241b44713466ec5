"""A ship call's times (central/calls/service.py): ISO 8601 with an offset, read as UTC; a bad one
is one ``BadInput`` naming the field, never a crash."""

from __future__ import annotations

import datetime as dt

import pytest

from central.calls.service import parse_call, parse_time
from portgate.errors import BadInput

ROW = {"ship": "9300009", "voyage": "long_haul", "berth": "berthed", "arrival": "2026-03-10T07:00:00-03:00"}


def test_a_call_time_is_read_as_utc_and_departure_may_be_empty():
    call = parse_call(ROW | {"departure": " "}, "")
    assert call.arrival == dt.datetime(2026, 3, 10, 10, tzinfo=dt.UTC) and call.departure is None
    assert parse_time("2026-03-10T13:00:00Z", "departure") == dt.datetime(2026, 3, 10, 13, tzinfo=dt.UTC)


@pytest.mark.parametrize("text,reason", [
    ("", "a time is required"),
    ("10/03/2026 07:00", "time '10/03/2026 07:00' is not an ISO 8601 timestamp"),
    ("2026-03-10T07:00:00", "time '2026-03-10T07:00:00' has no UTC offset"),
    ("0001-01-01T00:00:00+03:00", "is out of the representable date range"),
    ("9999-03-16T01:00:00-03:00", "the year 9999 is outside 2000..2100"),
    ("1999-12-31T23:59:59+00:00", "the year 1999 is outside 2000..2100"),
])
def test_a_bad_call_time_names_the_field(text, reason):
    with pytest.raises(BadInput) as caught:
        parse_call(ROW | {"arrival": text}, "row 2 ")
    assert caught.value.where == "row 2 arrival" and reason in caught.value.reason
    with pytest.raises(BadInput) as caught:
        parse_time(text, "departure")
    assert caught.value.where == "departure" and reason in caught.value.reason


def test_a_ship_name_longer_than_its_column_is_refused_not_cut():
    assert parse_call(ROW | {"ship_name": "N" * 255}, "").ship_name == "N" * 255
    with pytest.raises(BadInput) as caught:
        parse_call(ROW | {"ship_name": "N" * 300}, "ships.csv:2: ")
    assert caught.value.where == "ships.csv:2: ship_name"
    assert caught.value.reason == "ship_name is longer than 255 characters (300)"
