"""RULES.md "Rounding (E and C)": every printed amount rounded half up; each tally line rounded and
the labour amount their sum; a share is labour × own quotas ÷ total quotas divided last; amounts by
time SD × fraction × minutes ÷ 480, divided last; totals are sums of printed lines; C5 bills only
the art. 4 §2 waits and the meal hours. Figures by hand, SD = R$ 180.00."""

from decimal import Decimal

from central.production.engine import pay_gang
from central.production.model import Tariff, TariffTable
from tests.central.production.conftest import DAY, amounts, by_reg, gang, member


def test_each_tally_line_is_rounded_and_the_labour_amount_is_their_sum(stevedoring):
    # 1.005 t × 3.00 = 3.015 -> 3.02 ; 2.005 t × 3.00 = 6.015 -> 6.02 ; labour 9.04
    # (rounding the exact sum 9.030 instead would give 9.03)
    table = TariffTable((Tariff("x", "t", Decimal("3.00"), DAY),))
    result = pay_gang(gang([member("A")], [("x", "1.005"), ("x", "2.005")]), stevedoring, table)
    assert [str(line.amount) for line in result.summary.labour_lines] == ["3.02", "6.02"]
    assert result.summary.labour_amount == Decimal("9.04")


def test_a_share_is_divided_last_so_an_exact_half_cent_rounds_up(stevedoring):
    # 12 stevedores (12 quotas) + 2 hatch foremen (2 × 1.5) = 15 quotas. Labour 0.05 (1 t × 0.05).
    # hatch foreman: 0.05 × 1.5 ÷ 15 = 0.005 -> 0.01 (quota value 0.00333… × 1.5 = 0.004999… -> 0.00)
    table = TariffTable((Tariff("x", "t", Decimal("0.05"), DAY),))
    crew = [member(f"S{i}") for i in range(12)] + [member("H1", "hatch_foreman"), member("H2", "hatch_foreman")]
    result = pay_gang(gang(crew, [("x", "1")]), stevedoring, table)
    assert result.summary.total_quotas == Decimal("15")
    m = by_reg(result)
    assert amounts(m["H1"], "E2") == ["0.01"]
    assert amounts(m["S0"], "E2") == ["0.00"]  # 0.05 ÷ 15 = 0.00333… -> 0.00
    assert result.summary.shares_total == Decimal("0.02")
    assert result.summary.rounding_difference == Decimal("0.03")


def test_amounts_by_time_are_sd_times_minutes_over_480(stevedoring, tariffs):
    # rain 2 min: 180 × 0.5 × 2 ÷ 480 = 0.375 -> 0.38 ; meal 7 min: 180 × 2 × 7 ÷ 480 = 5.25
    result = pay_gang(gang([member("A")], [("general", "100")], stops=[("rain", 2), ("meal_worked", 7)]),
                      stevedoring, tariffs)
    st = result.members[0]
    assert amounts(st, "E4") == ["0.38"] and amounts(st, "E5") == ["5.25"]
    assert st.total == sum((line.amount for line in st.lines), Decimal(0))


def test_hours_per_day_other_than_8_still_divides_last(stevedoring, tariffs):
    # a port version with a 6-hour day and SD 180.02: rain 180 min at half wage
    # 180.02 × 0.5 × 180 ÷ 360 = 45.005 -> 45.01 (SD/6 first would give 45.00499… -> 45.00)
    import msgspec

    version = msgspec.structs.replace(stevedoring.versions[0], day_wage=Decimal("180.02"), hours_per_day=6)
    book = msgspec.structs.replace(stevedoring, versions=[version])
    result = pay_gang(gang([member("A")], [("general", "100")], stops=[("rain", 180)]), book, tariffs)
    assert amounts(result.members[0], "E4") == ["45.01"]


def test_c5_bills_only_art_4_par_2_waits_and_meal_hours(dock, tariffs):
    # 2 workers. rain 30 min: 180 × 0.5 × 30 ÷ 480 = 5.625 -> 5.63 each, billed 11.26;
    # third party 30 min: 180 × 1 × 30 ÷ 480 = 11.25 each, paid, NOT billed;
    # meal 60 min: 180 × 2 × 60 ÷ 480 = 45.00 each, billed 90.00;
    # surcharge 10% of (11.26 + 90.00 = 101.26) = 10.126 -> 10.13; billing total 111.39
    crew = [member("W1", "worker"), member("W2", "worker")]
    result = pay_gang(gang(crew, [("general", "100")],
                           stops=[("rain", 30), ("third_party", 30), ("meal_worked", 60)]), dock, tariffs)
    assert amounts(result.members[0], "C3") == ["5.63", "11.25"]
    assert [str(line.amount) for line in result.billing] == ["11.26", "90.00", "10.13"]
    assert all(line.rule == "C5" for line in result.billing)
    assert result.billing_total == Decimal("111.39")
