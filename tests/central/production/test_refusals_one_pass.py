"""The engine checks a gang in the same pass that gathers its inputs (issue 23); each problem it
can meet, one at a time and all together, is refused with the same message as the reference engine
(tests/central/production/engine_reference.py), and a gang without problems is paid the same."""

from __future__ import annotations

import dataclasses
import datetime as dt
from decimal import Decimal

import pytest

from central.production import engine
from central.production.model import GangWork, Interruption, Member, Tariff, TariffTable, TallyRow
from central.production.rulebook import find_rulebook
from portgate.errors import BadInput
from tests.central.production import engine_reference

BOOKS = {name: find_rulebook(name) for name in ("dl-2032-1940", "dl-3844-1941")}
TARIFFS = TariffTable((Tariff("bagged", "t", Decimal("3.20"), dt.date(2000, 1, 1)),
                       Tariff("containers", "unit", Decimal("25.00"), dt.date(2000, 1, 1))))
DAY = dt.date(2026, 3, 10)


def _gang(book: str) -> GangWork:
    roles = sorted(BOOKS[book].versions[-1].shares.quotas)
    members = tuple(Member(f"R{i}", role, 2, True, Decimal(300), f"gang.csv:{i + 2}")
                    for i, role in enumerate(roles))
    members += (Member("R9", roles[0], 1, False, Decimal(0), "gang.csv:9"),)
    return GangWork("T1", "9123456", DAY, "07-13", dt.datetime(2026, 3, 10, 16, tzinfo=dt.UTC), members,
                    (TallyRow("bagged", Decimal("40.5"), "tally.csv:2"),
                     TallyRow("containers", Decimal(3), "tally.csv:3")),
                    (Interruption("rain", Decimal(30), "interruptions.csv:2"),))


def _member(work: GangWork, i: int, **change) -> GangWork:
    members = list(work.members)
    members[i] = dataclasses.replace(members[i], **change)
    return dataclasses.replace(work, members=tuple(members))


def _bad(work: GangWork, book: str) -> dict[str, GangWork]:
    kinds = BOOKS[book].versions[-1].interruptions
    not_billed = next(kind for kind, rule in sorted(kinds.items()) if not rule.billed_to_shipowner)
    quotas = BOOKS[book].versions[-1].shares.quotas
    per_hold = [i for i, m in enumerate(work.members) if m.boarded and quotas[m.role].per_hold]
    cases = {
        "role": _member(work, 0, role="crane_driver"),
        "absent member's role": _member(work, len(work.members) - 1, role="crane_driver"),
        "negative minutes": _member(work, 1, minutes_worked=Decimal(-1)),
        "absent member's negative minutes": _member(work, len(work.members) - 1, minutes_worked=Decimal(-5)),
        "nobody boarded": dataclasses.replace(work, members=tuple(dataclasses.replace(m, boarded=False)
                                                                   for m in work.members)),
        "negative quantity": dataclasses.replace(work, tally=(TallyRow("bagged", Decimal(-1), "tally.csv:2"),)),
        "infinite quantity": dataclasses.replace(work, tally=(TallyRow("bagged", Decimal("Infinity"), "tally.csv:2"),)),
        "unknown class": dataclasses.replace(work, tally=(TallyRow("coal", Decimal(1), "tally.csv:2"),)),
        "class not yet in force": dataclasses.replace(work, date=dt.date(1999, 12, 31)),
        "kind not paid": dataclasses.replace(work, interruptions=(Interruption("strike", Decimal(5), "i.csv:2"),)),
        "zero minutes": dataclasses.replace(work, interruptions=(Interruption("rain", Decimal(0), "i.csv:2"),)),
        "transport on a kind not billed": dataclasses.replace(
            work, interruptions=(Interruption(not_billed, Decimal(5), "i.csv:2", Decimal("12.50")),)),
    }
    if per_hold:
        cases["per-hold role without a hold"] = _member(work, per_hold[0], holds_worked=0)
    cases["all at once"] = dataclasses.replace(
        _member(cases["role"], 1, minutes_worked=Decimal(-1)),
        tally=cases["unknown class"].tally + cases["negative quantity"].tally,
        interruptions=cases["kind not paid"].interruptions + cases["zero minutes"].interruptions)
    return cases


def _outcome(module, work: GangWork, book: str, prices: dict | None = None) -> str:
    try:
        kwargs = {} if prices is None else {"_prices": prices}
        return repr(module.pay_gang(work, BOOKS[book], TARIFFS, **kwargs))
    except BadInput as exc:
        return f"BadInput: {exc}"


@pytest.mark.parametrize("book", sorted(BOOKS))
def test_each_problem_is_refused_as_the_reference_refuses_it(book):
    work = _gang(book)
    prices: dict = {}  # shared, as in a batch: a refusal leaves nothing wrong in the caches
    assert _outcome(engine, work, book, prices).startswith("GangResult")
    for name, bad in _bad(work, book).items():
        got = _outcome(engine, bad, book, prices)
        assert got.startswith("BadInput"), name
        assert got == _outcome(engine_reference, bad, book), name
    assert _outcome(engine, work, book, prices) == _outcome(engine_reference, work, book)


def test_a_batch_names_the_problems_of_every_bad_gang():
    work = _gang("dl-2032-1940")
    bad = _bad(work, "dl-2032-1940")
    with pytest.raises(BadInput) as caught:
        engine.pay_gangs([work, bad["role"], work, bad["unknown class"]], BOOKS["dl-2032-1940"], TARIFFS)
    assert "gang.csv:2: role 'crane_driver' is not in the quota table" in str(caught.value)
    assert "tally.csv:2: cargo class 'coal' has no tariff in force on 2026-03-10" in str(caught.value)
