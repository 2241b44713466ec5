"""Worked examples of rules C1-C6 (DL 3.844/1941), computed by hand.

SD = R$ 180.00; hourly wage SD/8 = R$ 22.50; half day R$ 90.00.
"""

from decimal import Decimal

import pytest

from central.pay.lines import StatementLine
from central.production.engine import monthly_top_up, pay_gang
from portgate.errors import BadInput
from tests.central.production.conftest import DAY, amounts, by_reg, gang, member

ROLES = ["worker", "warehouse_driver", "foreman", "assistant_foreman", "quay_crane_driver", "tally_clerk"]


def test_c1_quotas_per_role_and_c2_hourly_guarantee(dock, tariffs):
    # quotas 1 + 1 + 1.5 + 1.25 + 1.5 + 1.5 = 7.75 ; 100 t × 4.50 = 450.00
    # q = 450 / 7.75 = 58.0645…: 1 → 58.06 ; 1.5 → 87.0968 → 87.10 ; 1.25 → 72.5806 → 72.58
    # 300 min and 100 t > 30 t → paid by the hour: 22.50 × 5 = 112.50; top-up = 112.50 − share
    crew = [member(role, role, minutes=300) for role in ROLES]
    result = pay_gang(gang(crew, [("general", "100")]), dock, tariffs)
    assert result.summary.total_quotas == Decimal("7.75")
    m = by_reg(result)
    shares = {reg: amounts(st, "C1") for reg, st in m.items()}
    assert shares == {"worker": ["58.06"], "warehouse_driver": ["58.06"], "foreman": ["87.10"],
                      "assistant_foreman": ["72.58"], "quay_crane_driver": ["87.10"], "tally_clerk": ["87.10"]}
    assert result.summary.shares_total == Decimal("450.00")
    assert amounts(m["worker"], "C2") == ["54.44"]
    assert amounts(m["foreman"], "C2") == ["25.40"]
    assert amounts(m["assistant_foreman"], "C2") == ["39.92"]
    assert {st.total for st in result.members} == {Decimal("112.50")}


# 2 workers; 31 t × 3.20 = 99.20 → 49.60 each; 30 t → 96.00 → 48.00 each
@pytest.mark.parametrize(("minutes", "tonnes", "share", "top_up"), [
    (240, "31", "49.60", "40.40"),   # exactly 4 h → half day 90.00
    (241, "31", "49.60", "40.78"),   # 4 h 01 → 22.50 × 241/60 = 90.375 → 90.38
    (241, "30", "48.00", "42.00"),   # exactly 30 t → half day 90.00
])
def test_c2_boundary_between_half_day_and_hourly_pay(dock, tariffs, minutes, tonnes, share, top_up):
    crew = [member("W1", "worker", minutes=minutes), member("W2", "worker", minutes=minutes)]
    result = pay_gang(gang(crew, [("bagged", tonnes)]), dock, tariffs)
    for st in result.members:
        assert amounts(st) == [share, top_up]


@pytest.mark.parametrize(("kind", "minutes", "expected"), [
    ("rain", 30, ["5.63"]),          # 22.50 × 0.5 × 0.5 = 5.625 → 5.63
    ("rough_water", 30, ["5.63"]),
    ("late_start", 30, ["5.63"]),
    ("third_party", 20, []),         # exactly 20 consecutive minutes: not paid
    ("third_party", 21, ["7.88"]),   # 21 min at full wage: 22.50 × 21/60 = 7.875 → 7.88
])
def test_c3_stoppage_pay(dock, tariffs, kind, minutes, expected):
    result = pay_gang(gang([member("W1", "worker")], [("general", "100")], stops=[(kind, minutes)]), dock, tariffs)
    assert amounts(result.members[0], "C3") == expected


def test_c4_meal_interval_worked_is_twice_the_hourly_wage(dock, tariffs):
    result = pay_gang(gang([member("W1", "worker")], [("general", "100")], stops=[("meal_worked", 60)]), dock, tariffs)
    assert amounts(result.members[0], "C4") == ["45.00"]


def test_c5_waits_and_meal_are_billed_to_the_shipowner_plus_ten_percent(dock, tariffs):
    # two workers: rain 30 min 5.63 each → 11.26 ; meal 60 min 45.00 each → 90.00
    # third party 21 min (7.88 each) is recovered from the third party, not billed (art. 8)
    # surcharge 10% × 101.26 = 10.126 → 10.13 ; total 111.39
    crew = [member("W1", "worker"), member("W2", "worker")]
    stops = [("rain", 30), ("meal_worked", 60), ("third_party", 21)]
    result = pay_gang(gang(crew, [("general", "100")], stops=stops), dock, tariffs)
    assert [str(x.amount) for x in result.billing] == ["11.26", "90.00", "10.13"]
    assert {x.rule for x in result.billing} == {"C5"}
    assert result.billing_total == Decimal("111.39")
    assert amounts(result.members[0], "C3") == ["5.63", "7.88"]


def test_c_rulebook_does_not_pay_a_tide_wait(dock, tariffs):
    with pytest.raises(BadInput, match="interruptions.csv:2: kind 'tide' is not paid"):
        pay_gang(gang([member("W1", "worker")], [("general", "1")], stops=[("tide", 180)]), dock, tariffs)


def test_c6_monthly_top_up_pays_the_shortfall_of_production_lines(dock):
    version = dock.version_for(DAY)
    lines = [StatementLine("C1", "a", "d", Decimal("1000.00")), StatementLine("C2", "a", "d", Decimal("200.00")),
             StatementLine("C3", "a", "d", Decimal("50.00")), StatementLine("X9", "a", "d", Decimal("999.00"))]
    # counted: C1 + C2 + C3 = 1250.00 ; minimum 1500.00 → top-up 250.00
    line = monthly_top_up("W1", "2026-03", lines, Decimal("1500.00"), version)
    assert (line.rule, line.article, line.amount) == ("C6", "DL 3.844 art. 4 §6", Decimal("250.00"))
    assert monthly_top_up("W1", "2026-03", lines, Decimal("1250.00"), version) is None


def test_c6_is_refused_under_a_rulebook_without_a_monthly_minimum(stevedoring):
    with pytest.raises(BadInput, match="no monthly minimum"):
        monthly_top_up("S1", "2026-03", [], Decimal("100"), stevedoring.version_for(DAY))
