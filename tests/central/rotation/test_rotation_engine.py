"""The pure rotation engine on hand-built cases (R1-R3) and the fairness property."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from central.rotation.eligibility import Ineligible, registration_problems
from central.rotation.engine import RotationSettings, dispatch, fairness
from portgate.records import WorkerStatus
from tests.central.registry.conftest import DAY, requisition, worker

TZ = "America/Sao_Paulo"


def regs(result):
    return [a.entry.registration for a in result.assignments]


def test_requisitions_take_workers_in_rotation_order_and_the_pointer_moves_past_them():
    pool = [worker("V3", 3), worker("V1", 1), worker("V2", 2)]
    first = dispatch([requisition("a", workers=2)], pool, {}, {})
    assert regs(first) == ["V1", "V2"]
    second = dispatch([requisition("b", period="19-01")], pool, first.turns, {})
    assert regs(second) == ["V3"]
    third = dispatch([requisition("c", day=DAY + dt.timedelta(days=1))], pool,
                     first.turns | second.turns, {})
    assert regs(third) == ["V1"]


def test_suspended_worker_is_skipped_and_keeps_their_place():
    pool = [worker("V1", 1, status=WorkerStatus.SUSPENDED, suspended_from=DAY,
                   suspended_until=DAY), worker("V2", 2), worker("V3", 3)]
    today = dispatch([requisition("a")], pool, {}, {})
    assert regs(today) == ["V2"]
    assert today.ineligible["V1"] == (Ineligible.SUSPENDED,)
    tomorrow = dispatch([requisition("b", day=DAY + dt.timedelta(days=1), workers=2)], pool,
                        today.turns, {})
    assert regs(tomorrow) == ["V1", "V3"]  # V1 first: never lost the place


def test_less_than_11_hours_of_rest_skips_the_worker_without_losing_the_place():
    pool = [worker("V1", 1), worker("V2", 2)]
    prev = requisition(day=DAY - dt.timedelta(days=1), period="19-01").entry("V1").bounds(TZ)
    busy = {"V1": [prev]}  # ended 01:00 local; 07-13 starts 6 h later
    morning = dispatch([requisition("a", period="07-13")], pool, {}, busy)
    assert regs(morning) == ["V2"]
    assert [(s.registration, s.reason) for s in morning.skips] == [("V1", Ineligible.REST)]
    afternoon = dispatch([requisition("b", period="13-19")], pool, morning.turns, busy)
    assert regs(afternoon) == ["V1"]  # 12 h after 01:00


def test_rest_is_also_checked_before_a_later_dispatch():
    pool = [worker("V1", 1), worker("V2", 2)]
    later = requisition(day=DAY + dt.timedelta(days=1), period="01-07").entry("V1").bounds(TZ)
    result = dispatch([requisition("a", period="13-19")], pool, {}, {"V1": [later]})
    assert regs(result) == ["V2"]


def test_nobody_is_dispatched_to_two_ships_in_overlapping_periods():
    pool = [worker(f"V{i}", i) for i in range(1, 4)]
    result = dispatch([requisition("a", ship="1", workers=2), requisition("b", ship="2", workers=2)],
                      pool, {}, {})
    assert regs(result) == ["V1", "V2", "V3"]
    assert [(s.requisition.ref, s.missing) for s in result.shortfalls] == [("b", 1)]
    held = dispatch([requisition("c")], pool, {}, {"V1": [requisition().entry("V1").bounds(TZ)]})
    assert regs(held) == ["V2"]
    assert held.skips[0].reason is Ineligible.OVERLAP


def test_requisitions_are_filled_by_period_start_then_input_order():
    pool = [worker("V1", 1), worker("V2", 2)]
    result = dispatch([requisition("late", period="13-19"), requisition("early", period="07-13")],
                      pool, {}, {}, RotationSettings(rest_hours=0))
    assert [(a.requisition.ref, a.entry.registration) for a in result.assignments] == [
        ("early", "V1"), ("late", "V2")]


def test_workers_of_other_categories_and_without_rotation_number_are_not_taken():
    pool = [worker("E1", 1, category="estivador"), worker("X", None), worker("V2", 2)]
    assert regs(dispatch([requisition("a", function="vigia_chefe")], pool, {}, {})) == ["V2"]


def test_excluded_worker_is_not_taken():
    pool = [worker("V1", 1), worker("V2", 2)]
    assert regs(dispatch([requisition()], pool, {}, {}, exclude=frozenset({"V1"}))) == ["V2"]


def test_registration_validity_g3_health_exam_and_booklet():
    old_exam = worker("V1", 1, health_exam_date=dt.date(2024, 3, 9))
    assert registration_problems(old_exam, DAY) == [Ineligible.HEALTH_EXAM]
    assert registration_problems(dataclasses.replace(old_exam, health_exam_date=dt.date(2024, 3, 10)),
                                 DAY) == []
    stevedore = worker("E1", 1, category="estivador", booklet_revalidated_year=2025)
    assert registration_problems(stevedore, dt.date(2026, 3, 31)) == []  # first quarter
    assert registration_problems(stevedore, dt.date(2026, 4, 1)) == [Ineligible.BOOKLET]
    cancelled = worker("V9", 9, status=WorkerStatus.CANCELLED)
    assert registration_problems(cancelled, DAY) == [Ineligible.CANCELLED]
    indefinite = worker("V8", 8, status=WorkerStatus.SUSPENDED)
    assert registration_problems(indefinite, DAY) == [Ineligible.SUSPENDED]


PERIODS = ["01-07", "07-13", "13-19", "19-01"]
days_st = st.lists(
    st.lists(st.tuples(st.sampled_from(PERIODS), st.integers(1, 3)), min_size=0, max_size=5),
    min_size=1, max_size=20)


@settings(max_examples=60, deadline=None)
@given(n_workers=st.integers(8, 40), days=days_st,
       suspended=st.sets(st.integers(1, 40), max_size=4))
def test_many_random_days_never_double_book_and_stay_within_one_shift_of_fairest(
        n_workers, days, suspended):
    pool = [worker(f"V{i:02d}", i, status=WorkerStatus.SUSPENDED if i in suspended
                   else WorkerStatus.ACTIVE) for i in range(1, n_workers + 1)]
    always = [w.registration for w in pool if w.rotation_number not in suspended]
    turns: dict[str, int] = {}
    busy: dict[str, list] = {}
    counts: Counter[str] = Counter()
    for offset, reqs in enumerate(days):
        day = DAY + dt.timedelta(days=offset)
        batch = [requisition(f"{offset}-{i}", day=day, period=p, workers=k, ship=str(i))
                 for i, (p, k) in enumerate(reqs)]
        result = dispatch(batch, pool, turns, busy)
        turns |= result.turns
        for a in result.assignments:
            interval = a.entry.bounds(TZ)
            for other in busy.get(a.entry.registration, ()):
                assert not (interval[0] < other[1] and other[0] < interval[1]), "double booking"
                gap = max(interval[0] - other[1], other[0] - interval[1])
                assert gap >= dt.timedelta(hours=11), "rest under 11 h"
            busy.setdefault(a.entry.registration, []).append(interval)
            counts[a.entry.registration] += 1
            assert a.entry.registration in always
    f = fairness(counts, always)
    assert f.spread <= f.fairest_spread + 1


def test_fairness_figures():
    f = fairness({"A": 26, "B": 24}, ["A", "B", "C"])
    assert f.shifts == {"A": 26, "B": 24, "C": 0}
    assert (f.spread, f.fairest_spread, f.distance("C")) == (26, 1, -25)
    assert f.average == 50 / 3
