"""Worked examples of rules E1-E6 (DL 2.032/1940), each computed by hand in the test.

SD = R$ 180.00; hourly wage SD/8 = R$ 22.50; half day R$ 90.00. Period 07-13 on 2026-03-10 in
America/Sao_Paulo (UTC-3) ends 16:00 UTC.
"""

import datetime as dt
from decimal import Decimal

import pytest

from central.production.engine import pay_gang
from portgate.errors import BadInput
from tests.central.production.conftest import Dispute, amounts, by_reg, gang, member


def test_e1_labour_amount_is_quantity_times_labour_tariff_per_line(stevedoring, tariffs):
    # 120.5 t × 3.20 = 385.60 ; 8 containers × 25.00 = 200.00 ; labour = 585.60
    result = pay_gang(gang([member("E1")], [("bagged", "120.5"), ("containers", "8")]), stevedoring, tariffs)
    assert [str(x.amount) for x in result.summary.labour_lines] == ["385.60", "200.00"]
    assert {x.rule for x in result.summary.labour_lines} == {"E1"}
    assert result.summary.labour_amount == Decimal("585.60")
    assert result.summary.tonnes == Decimal("120.5")  # containers are units, not tonnes


def test_e1_uses_the_tariff_in_force_on_the_work_date(stevedoring, tariffs):
    # the 9.99 tariff starts 2027-01-01; on 2026-03-10 bagged is 3.20: 10 t → 32.00
    result = pay_gang(gang([member("E1")], [("bagged", "10")]), stevedoring, tariffs)
    assert result.summary.labour_amount == Decimal("32.00")


def test_e2_quotas_split_the_labour_amount_and_shares_are_rounded_half_up(stevedoring, tariffs):
    # general foreman on 4 holds: capped at 3 quotas; hatch foreman 1.5; two stevedores 1 each
    # total 6.5 quotas; quota value 585.60 / 6.5 = 90.0923076923… (kept exact)
    # shares: 3 × q = 270.2769… → 270.28 ; 1.5 × q = 135.1384… → 135.14 ; 1 × q → 90.09 (twice)
    crew = [member("GF", "general_foreman", minutes=180, holds=4), member("HF", "hatch_foreman", minutes=180),
            member("S1", minutes=180), member("S2", minutes=180)]
    result = pay_gang(gang(crew, [("bagged", "120.5"), ("containers", "8")]), stevedoring, tariffs)
    s = result.summary
    assert s.total_quotas == Decimal("6.5")
    assert s.quota_value == Decimal("585.60") / Decimal("6.5")
    m = by_reg(result)
    assert m["GF"].quotas == Decimal(3)
    assert amounts(m["GF"], "E2") == ["270.28"]
    assert amounts(m["HF"], "E2") == ["135.14"]
    assert amounts(m["S1"], "E2") == amounts(m["S2"], "E2") == ["90.09"]
    assert s.shares_total == Decimal("585.60") and s.rounding_difference == Decimal("0.00")
    # 180 min: half-day minimum 90.00 only, and every share is above it: no E3 line
    assert all(line.rule != "E3" for st in result.members for line in st.lines)


@pytest.mark.parametrize(("holds", "quotas"), [(1, "1"), (2, "2"), (3, "3"), (4, "3"), (6, "3")])
def test_e2_general_foreman_gets_one_quota_per_hold_up_to_three(stevedoring, tariffs, holds, quotas):
    result = pay_gang(gang([member("GF", "general_foreman", holds=holds)], [("bagged", "100")]), stevedoring, tariffs)
    assert result.members[0].quotas == Decimal(quotas)


def test_e2_rounding_difference_is_reported_when_shares_do_not_add_up(stevedoring, tariffs):
    # 3 stevedores, 10 t × 3.20 = 32.00 → q = 10.6666… → 10.67 each → Σ 32.01, difference −0.01
    crew = [member("S1"), member("S2"), member("S3")]
    result = pay_gang(gang(crew, [("bagged", "10")]), stevedoring, tariffs)
    assert result.summary.shares_total == Decimal("32.01")
    assert result.summary.rounding_difference == Decimal("-0.01")


# E3: work of 2 stevedores; 30 t × 3.20 = 96.00, 30.001 t × 3.20 = 96.0032 → 96.00; share 48.00 each.
# Half day 90.00 → top-up 42.00; full day 180.00 → top-up 132.00.
@pytest.mark.parametrize(("minutes", "tonnes", "top_up"), [
    (240, "30.001", "42.00"),   # exactly 4 h: not more than half a day → half-day minimum
    (241, "30.001", "132.00"),  # 4 h 01 min and more than 30 t → full day
    (241, "30", "42.00"),       # exactly 30 t: not more than 30 t → half-day minimum
    (600, "30", "42.00"),
])
def test_e3_boundary_between_half_day_and_full_day(stevedoring, tariffs, minutes, tonnes, top_up):
    crew = [member("S1", minutes=minutes), member("S2", minutes=minutes)]
    result = pay_gang(gang(crew, [("bagged", tonnes)]), stevedoring, tariffs)
    for st in result.members:
        assert amounts(st, "E2") == ["48.00"]
        assert amounts(st, "E3") == [top_up]
        assert st.total == Decimal("48.00") + Decimal(top_up)


def test_e3_no_top_up_when_the_share_already_exceeds_the_guarantee(stevedoring, tariffs):
    # 100 t × 3.20 = 320.00 for one stevedore, 300 min: full day 180.00 < 320.00 → no E3 line
    result = pay_gang(gang([member("S1", minutes=300)], [("bagged", "100")]), stevedoring, tariffs)
    assert amounts(result.members[0]) == ["320.00"]


def test_e3_hatch_foreman_guarantee_is_the_same_day_wage(stevedoring, tariffs):
    # nothing moved (quantity 0): both get the half-day minimum 90.00 whatever their quotas
    result = pay_gang(gang([member("HF", "hatch_foreman", minutes=100), member("S1", minutes=100)],
                           [("bagged", "0")]), stevedoring, tariffs)
    assert [st.total for st in result.members] == [Decimal("90.00"), Decimal("90.00")]


@pytest.mark.parametrize(("kind", "minutes", "amount"), [
    ("rain", 40, "7.50"),          # 22.50 × 0.5 × 40/60 = 7.50
    ("late_start", 30, "5.63"),    # 22.50 × 0.5 × 30/60 = 5.625 → 5.63 (half up)
    ("rough_water", 10, "1.88"),   # 22.50 × 0.5 × 10/60 = 1.875 → 1.88
])
def test_e4_waiting_is_half_the_hourly_wage_for_the_wait(stevedoring, tariffs, kind, minutes, amount):
    result = pay_gang(gang([member("S1")], [("bagged", "100")], stops=[(kind, minutes)]), stevedoring, tariffs)
    assert amounts(result.members[0], "E4") == [amount]


@pytest.mark.parametrize(("minutes", "expected"), [
    (120, []),            # exactly 2 h: not more than 2 h → not paid
    (121, ["22.69"]),     # 2 h 01 min: the whole wait, 22.50 × 0.5 × 121/60 = 22.6875 → 22.69
    (180, ["33.75"]),     # 22.50 × 0.5 × 3 = 33.75
])
def test_e4_tide_wait_is_paid_only_over_two_hours_and_then_whole(stevedoring, tariffs, minutes, expected):
    result = pay_gang(gang([member("S1")], [("bagged", "100")], stops=[("tide", minutes)]), stevedoring, tariffs)
    assert amounts(result.members[0], "E4") == expected


def test_e5_meal_interval_worked_is_twice_the_hourly_wage(stevedoring, tariffs):
    # 60 min: 2 × 22.50 = 45.00 ; 90 min: 2 × 22.50 × 1.5 = 67.50
    result = pay_gang(gang([member("S1")], [("bagged", "100")], stops=[("meal_worked", 60), ("meal_worked", 90)]),
                      stevedoring, tariffs)
    assert amounts(result.members[0], "E5") == ["45.00", "67.50"]
    assert all(line.article == "DL 2.032 art. 27 §2" for line in result.members[0].lines if line.rule == "E5")


def test_e4_waits_are_paid_to_every_member_who_boarded_and_never_billed(stevedoring, tariffs):
    crew = [member("S1"), member("S2"), member("S3", boarded=False, minutes=0)]
    result = pay_gang(gang(crew, [("bagged", "100")], stops=[("rain", 40)]), stevedoring, tariffs)
    assert [st.registration for st in result.members] == ["S1", "S2"]
    assert result.summary.absent == ("S3",)
    assert result.billing == () and result.billing_total == Decimal("0.00")


def test_e6_payment_is_due_24_hours_after_the_end_of_the_service(stevedoring, tariffs):
    result = pay_gang(gang([member("S1")], [("bagged", "100")]), stevedoring, tariffs)
    # 07-13 local (UTC-3) ends 16:00 UTC; due 24 h later
    assert result.members[0].due_at == dt.datetime(2026, 3, 11, 16, 0, tzinfo=dt.UTC)


def test_e6_disputed_part_is_recorded_and_the_undisputed_part_is_payable(stevedoring, tariffs):
    # S1: E2 320.00 + E4 rain 7.50 = 327.50; the E4 line is disputed whole; 20.00 of E2 in doubt
    disputes = [Dispute("S1", "E4", None, "rain not confirmed", "disputes.csv:2"),
                Dispute("S1", "E2", Decimal("20.00"), "tally under review", "disputes.csv:3")]
    result = pay_gang(gang([member("S1")], [("bagged", "100")], stops=[("rain", 40)], disputes=disputes),
                      stevedoring, tariffs)
    st = result.members[0]
    assert st.total == Decimal("327.50")
    assert st.disputed == Decimal("27.50")
    assert st.payable == Decimal("300.00")
    assert [d.rule for d in st.disputes] == ["E4", "E2"]


@pytest.mark.parametrize(("dispute", "message"), [
    (Dispute("S9", "E2", None, "", "disputes.csv:2"), "disputes.csv:2: S9 is not a member"),
    (Dispute("S1", "E5", None, "", "disputes.csv:2"), "disputes.csv:2: S1 has no line of rule E5"),
    (Dispute("S1", "E2", Decimal("999"), "", "disputes.csv:2"), "disputes.csv:2: disputed amount 999"),
])
def test_e6_a_dispute_that_matches_no_line_is_refused(stevedoring, tariffs, dispute, message):
    with pytest.raises(BadInput, match=message):
        pay_gang(gang([member("S1")], [("bagged", "100")], disputes=[dispute]), stevedoring, tariffs)


def test_lines_carry_rule_ids_and_articles_in_portuguese_by_default_english_on_request(stevedoring, tariffs):
    work = gang([member("S1")], [("bagged", "1")], stops=[("rain", 40)])
    pt = pay_gang(work, stevedoring, tariffs)
    en = pay_gang(work, stevedoring, tariffs, lang="en")
    assert [(x.rule, x.article) for x in pt.members[0].lines] == [
        ("E2", "DL 2.032 art. 24"), ("E3", "DL 2.032 arts. 25, 27"), ("E4", "DL 2.032 art. 12 §3")]
    assert "chuva" in pt.members[0].lines[2].description
    assert "Rain" in en.members[0].lines[2].description
    assert [x.amount for x in pt.members[0].lines] == [x.amount for x in en.members[0].lines]
