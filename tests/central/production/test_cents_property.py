"""Integer centavos inside the production-pay engine give exactly what the Decimal engine gave
(issue 23): 10,000 random gangs on both shipped rulebooks with their figures redrawn (day wages
with mills, fractional quotas, wage fractions and surcharges with four decimals, tonnages and
minutes with decimals, transport fares, disputes), against the former engine kept verbatim in
tests/central/production/engine_reference.py: the same results to the last printed digit (``repr``),
or the same refusal.
"""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from central.production import engine
from central.production.model import (Dispute, GangWork, Interruption, Member, Tariff, TariffTable,
                                      TallyRow)
from central.production.rulebook import find_rulebook
from portgate.errors import BadInput
from portgate.gctune import paused
from tests.central.production import engine_reference

BOOKS = {name: find_rulebook(name) for name in ("dl-2032-1940", "dl-3844-1941")}
GANGS_PER_EXAMPLE = 1_250
EXAMPLES = 8  # 10,000 gangs in all


def _dec(draw, lo: int, hi: int, places: int) -> Decimal:
    return Decimal(draw(st.integers(lo * 10 ** places, hi * 10 ** places))).scaleb(-places)


@st.composite
def setups(draw):
    """A rulebook whose figures are redrawn, a tariff table, and a seed for the gangs."""
    book = BOOKS[draw(st.sampled_from(sorted(BOOKS)))]
    version = book.versions[-1]
    quotas = {role: msgspec.structs.replace(rule, quota=_dec(draw, 1, 3, 2))
              for role, rule in version.shares.quotas.items()}
    stops = {kind: msgspec.structs.replace(rule, wage_fraction=_dec(draw, 0, 3, 4))
             for kind, rule in version.interruptions.items()}
    billing = version.shipowner_billing
    if billing is not None:
        billing = msgspec.structs.replace(billing, surcharge=_dec(draw, 0, 1, 4))
    version = msgspec.structs.replace(
        version, day_wage=_dec(draw, 50, 400, draw(st.integers(0, 3))),
        hours_per_day=draw(st.sampled_from([6, 7, 8])),
        shares=msgspec.structs.replace(version.shares, quotas=quotas),
        guarantee=msgspec.structs.replace(version.guarantee, minimum_day_fraction=_dec(draw, 0, 1, 3)),
        interruptions=stops, shipowner_billing=billing)
    book = msgspec.structs.replace(book, versions=[version])
    tariffs = TariffTable(tuple(Tariff(cls, unit, _dec(draw, 0, 40, 3), dt.date(2000, 1, 1))
                                for cls, unit in (("bagged", "t"), ("general", "t"), ("containers", "unit"))))
    return book, tariffs, draw(st.integers(0, 2 ** 32 - 1))


def random_gangs(rng: random.Random, book, n: int) -> list[GangWork]:
    version = book.versions[-1]
    roles, kinds = sorted(version.shares.quotas), sorted(version.interruptions)
    out = []
    for g in range(n):
        day = dt.date(2026, 1, 1) + dt.timedelta(days=rng.randrange(365))
        members = tuple(Member(f"R{g}-{i}", rng.choice(roles), rng.randint(1, 4), rng.random() < 0.9,
                               Decimal(rng.randrange(0, 60_000)).scaleb(-2), f"gang.csv:{i + 2}")
                        for i in range(rng.randint(1, 12)))
        tally = tuple(TallyRow(rng.choice(("bagged", "general", "containers")),
                               Decimal(rng.randrange(0, 400_000)).scaleb(-3), f"tally.csv:{k + 2}")
                      for k in range(rng.randint(1, 3)))
        stops = []
        for k in range(rng.choice((0, 0, 1, 2, 3))):
            kind = rng.choice(kinds)
            fare = (Decimal(rng.randrange(0, 100_000)).scaleb(-3)
                    if kind == "anchorage_travel" and version.interruptions[kind].billed_to_shipowner
                    and rng.random() < 0.7 else None)
            stops.append(Interruption(kind, Decimal(rng.randrange(1, 30_000)).scaleb(-2),
                                      f"interruptions.csv:{k + 2}", fare))
        disputes = ()
        if members and rng.random() < 0.1:
            who = rng.choice(members).registration
            amount = rng.choice((None, Decimal(rng.randrange(1, 50_000)).scaleb(-3)))
            disputes = (Dispute(who, rng.choice((version.shares.rule, version.guarantee.rule)), amount,
                                "x", "disputes.csv:2"),)
        out.append(GangWork(f"T{g}", "9123456", day, "07-13",
                            dt.datetime.combine(day, dt.time(16), dt.UTC), members, tally,
                            tuple(stops), disputes))
    return out


def outcome(module, work, book, tariffs, **kwargs) -> str:
    try:
        return repr(module.pay_gang(work, book, tariffs, **kwargs))
    except BadInput as exc:
        return f"BadInput: {exc}"


@settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(setup=setups())
def test_integer_centavo_gangs_equal_decimal_gangs(setup):
    book, tariffs, seed = setup
    prices: dict = {}  # shared across the batch, as pay_gangs shares it
    refused = 0
    with paused():
        for work in random_gangs(random.Random(seed), book, GANGS_PER_EXAMPLE):
            got = outcome(engine, work, book, tariffs, _prices=prices)
            assert got == outcome(engine_reference, work, book, tariffs), work
            refused += got.startswith("BadInput")
    assert refused < GANGS_PER_EXAMPLE // 2  # most gangs are paid, not refused


def test_pay_gangs_equals_the_reference_in_english_too():
    book = BOOKS["dl-3844-1941"]
    tariffs = TariffTable(tuple(Tariff(cls, unit, Decimal("3.125"), dt.date(2000, 1, 1))
                                for cls, unit in (("bagged", "t"), ("general", "t"), ("containers", "unit"))))
    works = [w for w in random_gangs(random.Random(3), book, 200) if outcome(engine_reference, w, book, tariffs).startswith("GangResult")]
    assert len(works) > 100
    assert repr(engine.pay_gangs(works, book, tariffs, lang="en")) == repr(
        engine_reference.pay_gangs(works, book, tariffs, lang="en"))


def test_a_batch_with_a_bad_gang_is_refused_whole_and_the_collector_is_back_on():
    import gc

    book, tariffs = BOOKS["dl-2032-1940"], TariffTable((Tariff("bagged", "t", Decimal("3.20"),
                                                                dt.date(2000, 1, 1)),))
    good = GangWork("T1", "9123456", dt.date(2026, 3, 10), "07-13", dt.datetime(2026, 3, 10, 16, tzinfo=dt.UTC),
                    (Member("E1", "stevedore", minutes_worked=Decimal(300)),),
                    (TallyRow("bagged", Decimal(100), "tally.csv:2"),))
    bad = GangWork("T2", "9123456", dt.date(2026, 3, 10), "07-13", good.service_end, good.members,
                   (TallyRow("coal", Decimal(1), "tally.csv:3"),))
    assert gc.isenabled()
    with pytest.raises(BadInput, match="tally.csv:3: cargo class 'coal'"):
        engine.pay_gangs([good, bad], book, tariffs)
    assert gc.isenabled()
