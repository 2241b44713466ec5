"""Integer centavos inside the watchmen's pay engine give the same cents as the Decimal arithmetic
(issue 23): a property test over 10,000 random shifts on random rulebooks (rates with up to four
decimals, wages with mills, fractional extension bands, fixed amounts: exact half cents happen),
against the Decimal reference in tests/central/pay/pay_reference.py; and the helpers of central.pay.cents.
"""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from central.pay.cents import cents_of, half_up, ratio, to_brl
from central.pay.loading import holiday_calendar, parse_rulebook
from central.pay.watchmen import ShiftPayer, WatchShift
from tests.central.pay.pay_reference import reference_pay

Z = ZoneInfo("America/Sao_Paulo")
CAL = holiday_calendar("SP")
SHIFTS_PER_EXAMPLE = 2_500
EXAMPLES = 4  # 10,000 shifts in all


def test_half_up_rounds_an_exact_half_away_from_zero():
    assert [half_up(n, 10) for n in (14, 15, 16, 0, -14, -15, -16)] == [1, 2, 2, 0, -1, -2, -2]
    assert half_up(1225, 200) == 6  # 6.125 -> 6.13 in BRL is 612.5 centavos -> 613
    assert half_up(6125, 10) == 613


def test_ratio_is_exact_and_refuses_what_is_not_a_number():
    assert ratio(Decimal("1.20")) == (6, 5)
    assert ratio(Decimal("180.00")) == (180, 1)
    assert ratio(Decimal("1E+2")) == (100, 1)
    assert ratio(Decimal("-0.005")) == (-1, 200)
    for bad in ("Infinity", "NaN"):
        with pytest.raises(ValueError, match="not a finite amount"):
            ratio(Decimal(bad))


def test_cents_and_back_to_brl():
    assert cents_of(Decimal("6.125")) == 613
    assert cents_of(Decimal("210.00"), 7 * 150, 360 * 100) == 613  # CCT: 210 × 1.50 × 7 ÷ 360
    assert [str(to_brl(c)) for c in (0, 5, -5, 18000, 69660)] == ["0.00", "0.05", "-0.05", "180.00",
                                                                   "696.60"]


def _amount(draw, lo: int, hi: int, places: int) -> str:
    return str(Decimal(draw(st.integers(lo * 10 ** places, hi * 10 ** places))).scaleb(-places))


@st.composite
def rulebooks(draw):
    """A valid rulebook with every basis and condition, its figures drawn with awkward decimals."""
    def rate() -> str:
        return str(Decimal(draw(st.integers(0, 30_000))).scaleb(-draw(st.integers(0, 4))))

    band = Decimal(draw(st.integers(1, 12))) / 4  # the first overtime band ends at 0.25 .. 3 h
    lines = [
        {"rule": "P1", "article": "a", "description": "d", "when": "always", "basis": "day_wage", "rate": rate()},
        {"rule": "P2", "article": "a", "description": "d", "when": "extension", "basis": "extension_hours",
         "rate": rate(), "to_hours": str(band)},
        {"rule": "P2b", "article": "a", "description": "d", "when": "extension", "basis": "extension_hours",
         "rate": rate(), "from_hours": str(band)},
        {"rule": "P3", "article": "a", "description": "d", "when": "night", "basis": "day_wage", "rate": rate()},
        {"rule": "P4", "article": "a", "description": "d", "when": "sunday", "basis": "day_wage", "rate": rate()},
        {"rule": "P5", "article": "a", "description": "d", "when": "holiday", "basis": "day_wage", "rate": rate()},
        {"rule": "P6", "article": "a", "description": "d", "when": "meal_worked", "basis": "day_wage", "rate": rate()},
        {"rule": "P7", "article": "a", "description": "d", "when": "anchored", "basis": "lines", "rate": rate(),
         "of": draw(st.lists(st.sampled_from(["P1", "P2", "P2b", "P3", "P4", "P5", "P6"]), min_size=1,
                             max_size=7, unique=True))},
        {"rule": "P9", "article": "a", "description": "d", "when": "always", "basis": "fixed",
         "amount": _amount(draw, 0, 50, 3)},
    ]
    raw = {
        "id": "random", "title": "random",
        "day_wages": [{"effective_from": dt.date(2020, 1, 1), "amount": _amount(draw, 50, 400, 2)},
                      {"effective_from": dt.date(2026, 7, 1), "amount": _amount(draw, 50, 400, 3)}],
        "terms": [{"effective_from": dt.date(2020, 1, 1),
                   "ordinary_hours": draw(st.sampled_from([6, 7, 8])),
                   "tolerance_minutes": draw(st.integers(0, 15)),
                   "rounding": draw(st.sampled_from(["ceil_hour", "minute"])),
                   "functions": {"vigia": "1.0", "vigia_chefe": _amount(draw, 1, 3, 3)},
                   "lines": lines}],
    }
    return parse_rulebook(raw, path="random.toml")


def random_shifts(rng: random.Random, n: int) -> list[WatchShift]:
    """``n`` shifts of 2025-12-20 .. 2027-01-10 (holidays, Sundays, the wage change, DST edges of
    other years' tables), times given in UTC, the port zone or a fixed -03:00 offset."""
    zones = (dt.UTC, Z, dt.timezone(dt.timedelta(hours=-3)))
    out = []
    for i in range(n):
        day = dt.date(2025, 12, 20) + dt.timedelta(days=rng.randrange(387))
        start = dt.datetime.combine(day, dt.time(rng.randrange(24)), Z).astimezone(dt.UTC)
        end = start + dt.timedelta(hours=rng.choice((6, 6, 6, 4, 8)))
        admit = start - dt.timedelta(seconds=rng.randrange(0, 3600))
        pick = rng.random()
        if pick < 0.1:
            exit_at = None
        elif pick < 0.2:
            exit_at = end - dt.timedelta(seconds=rng.randrange(1, 3600))
        elif pick < 0.9:
            exit_at = end + dt.timedelta(seconds=rng.randrange(0, 4 * 3600))
        else:
            exit_at = end + dt.timedelta(seconds=rng.randrange(0, 24 * 3600 + 1))
        zone = rng.choice(zones)
        out.append(WatchShift(
            f"s{i}", f"{100000 + i % 500}", rng.choice(("vigia", "vigia_chefe")), "9300001",
            rng.choice(("berthed", "anchored")), start.astimezone(zone), end.astimezone(zone),
            admit.astimezone(zone), None if exit_at is None else exit_at.astimezone(zone),
            rng.random() < 0.2))
    return out


@settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(book=rulebooks(), seed=st.integers(0, 2 ** 32 - 1))
def test_integer_centavo_pay_equals_decimal_pay_on_random_shifts(book, seed):
    payer = ShiftPayer(book, CAL)  # one payer for the batch: its memo is part of what is tested
    for shift in random_shifts(random.Random(seed), SHIFTS_PER_EXAMPLE):
        got = payer.pay(shift)
        want = reference_pay(shift, book, CAL)
        assert [(line.rule, str(line.amount)) for line in got.lines] == want["lines"], shift
        assert str(got.total) == want["total"]
        assert got.total == sum((line.amount for line in got.lines), Decimal("0.00"))
        assert (got.work_day, got.flags, got.extension_minutes, got.extension_hours, got.due_at,
                got.service_end) == (want["day"], want["flags"], want["minutes"], want["hours"],
                                     want["due_at"], want["service_end"])
        assert got.due_at.tzinfo is dt.UTC and got.service_end.tzinfo is dt.UTC
