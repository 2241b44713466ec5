"""Brazilian crew share of foreign vessels (N1-N6, instruction art. 7 and art. 13 VI):
hand-computed thresholds and rounding."""

from __future__ import annotations

from fractions import Fraction

import pytest

from central.inspection.checklist import checklist
from central.inspection.crew_share import (
    Branch,
    CrewMember,
    Level,
    Operation,
    Rounding,
    assess,
    required_count,
)
from portgate.errors import BadInput
from tests.central.inspection.conftest import member


def crew_of(total: int, brazilians: int, level=Level.OFFICER, branch=Branch.DECK, prefix="x"):
    return [
        member(f"{prefix}{i}", "BR" if i < brazilians else "PH", level, branch)
        for i in range(total)
    ]


def only(report):
    (check,) = report.checks
    return check


# N1 offshore support: 1/3 from 90 days, 1/2 from 180, 2/3 from 360; rounded up (N5) ------------


@pytest.mark.parametrize(
    ("days", "share", "required"),
    [
        (0, None, 0),
        (89, None, 0),
        (90, Fraction(1, 3), 4),
        (91, Fraction(1, 3), 4),
        (179, Fraction(1, 3), 4),
        (180, Fraction(1, 2), 5),
        (181, Fraction(1, 2), 5),
        (359, Fraction(1, 2), 5),
        (360, Fraction(2, 3), 7),
        (5000, Fraction(2, 3), 7),
    ],
)
def test_offshore_support_thresholds_n1(days, share, required):
    c = only(assess(Operation.OFFSHORE_SUPPORT, days, crew_of(10, 4)))
    assert (c.rule, c.share, c.required, c.brazilians, c.crew) == ("N1", share, required, 4, 10)
    assert c.complies is (4 >= required)


def test_offshore_support_at_ninety_days_cites_the_item():
    r = assess(Operation.OFFSHORE_SUPPORT, 90, crew_of(9, 3))
    assert only(r).article == "art. 13 VI c 1.1"
    assert only(r).required == 3 and r.complies
    assert not assess(Operation.OFFSHORE_SUPPORT, 90, crew_of(9, 2)).complies


# N2 exploration: 1/5 from 180, 1/3 from 360, 2/3 from 720 ----------------------------------


@pytest.mark.parametrize(
    ("days", "required"),
    [
        (90, 0),
        (179, 0),
        (180, 2),
        (359, 2),
        (360, 4),
        (719, 4),
        (720, 7),
    ],
)
def test_exploration_thresholds_n2(days, required):
    c = only(assess(Operation.EXPLORATION, days, crew_of(10, 2)))
    assert (c.rule, c.required) == ("N2", required)
    assert c.complies is (2 >= required)


# N3 cabotage: 1/5 from 90, 1/3 from 180, per level x branch, fraction >= 0.5 rounds up -------


def _cabotage_crew():
    return (
        crew_of(3, 1, Level.OFFICER, Branch.DECK, "od")  # 3/5=0.6 -> 1 ; 1/3*3=1
        + crew_of(2, 0, Level.OFFICER, Branch.ENGINE, "oe")  # 0.4 -> 0 ; 0.67 -> 1
        + crew_of(8, 1, Level.GRADUATED_RATING, Branch.DECK, "gd")  # 1.6 -> 2 ; 2.67 -> 3
        + crew_of(7, 1, Level.GRADUATED_RATING, Branch.ENGINE, "ge")  # 1.4 -> 1 ; 2.33 -> 2
        + crew_of(5, 1, Level.NON_GRADUATED_RATING, Branch.DECK, "nd")  # 1.0 -> 1 ; 1.67 -> 2
        + crew_of(4, 1, Level.NON_GRADUATED_RATING, Branch.ENGINE, "ne")  # 0.8 -> 1 ; 1.33 -> 1
        + crew_of(3, 0, Level.NON_GRADUATED_RATING, Branch.OTHER, "cook")
    )


def _required(report):
    return {c.group: c.required for c in report.checks}


def test_cabotage_below_ninety_days_requires_nobody_n3():
    r = assess(Operation.CABOTAGE, 89, _cabotage_crew())
    assert set(_required(r).values()) == {0} and r.complies


@pytest.mark.parametrize("days", [90, 91, 179])
def test_cabotage_one_fifth_per_level_and_branch_half_up_n3(days):
    r = assess(Operation.CABOTAGE, days, _cabotage_crew())
    assert _required(r) == {
        "officer/deck": 1,
        "officer/engine": 0,
        "graduated_rating/deck": 2,
        "graduated_rating/engine": 1,
        "non_graduated_rating/deck": 1,
        "non_graduated_rating/engine": 1,
    }
    assert [c.group for c in r.checks if not c.complies] == ["graduated_rating/deck"]  # 1 of 2
    assert not r.complies


@pytest.mark.parametrize("days", [180, 181, 5000])
def test_cabotage_one_third_from_180_days_n3(days):
    r = assess(Operation.CABOTAGE, days, _cabotage_crew())
    assert _required(r) == {
        "officer/deck": 1,
        "officer/engine": 1,
        "graduated_rating/deck": 3,
        "graduated_rating/engine": 2,
        "non_graduated_rating/deck": 2,
        "non_graduated_rating/engine": 1,
    }
    assert [c.group for c in r.checks if not c.complies] == [
        "officer/engine",
        "graduated_rating/deck",
        "graduated_rating/engine",
        "non_graduated_rating/deck",
    ]
    assert not r.complies


def test_cabotage_leaves_branch_other_out_of_the_groups():
    r = assess(Operation.CABOTAGE, 90, _cabotage_crew())
    assert [m.crew_id for m in r.not_counted] == ["cook0", "cook1", "cook2"]
    assert sum(c.crew for c in r.checks) == 29


def test_a_fraction_of_exactly_one_half_rounds_up_under_n3_and_below_it_rounds_down():
    # 1/5 and 1/3 of a whole number never leave exactly 0.5; the rule is checked on the function.
    assert required_count(5, Fraction(1, 2), Rounding.HALF_UP) == 3  # 2.5 -> 3
    assert required_count(5, Fraction(1, 10), Rounding.HALF_UP) == 1  # 0.5 -> 1
    assert required_count(4, Fraction(1, 10), Rounding.HALF_UP) == 0  # 0.4 -> 0
    assert required_count(2, Fraction(1, 5), Rounding.HALF_UP) == 0  # 0.4 -> 0
    assert required_count(3, Fraction(1, 5), Rounding.HALF_UP) == 1  # 0.6 -> 1
    assert required_count(4, Fraction(1, 10), Rounding.UP) == 1  # N5 rounds any fraction up


# N4 fishing and cruise -----------------------------------------------------------------------


def test_leased_fishing_needs_two_thirds_from_day_zero_n4():
    assert only(assess(Operation.FISHING_LEASED, 0, crew_of(9, 6))).required == 6
    c = only(assess(Operation.FISHING_LEASED, 0, crew_of(10, 6)))
    assert (c.rule, c.required, c.complies) == ("N4", 7, False)  # 6.67 -> 7


@pytest.mark.parametrize(("days", "required"), [(29, 0), (30, 0), (31, 3)])
def test_cruise_needs_a_quarter_after_more_than_thirty_days_n4(days, required):
    c = only(assess(Operation.CRUISE, days, crew_of(10, 2)))  # 2.5 -> 3
    assert c.required == required
    assert c.complies is (2 >= required)


# bad input -----------------------------------------------------------------------------------


def test_negative_days_are_refused():
    with pytest.raises(BadInput, match="days -1"):
        assess(Operation.CABOTAGE, -1, crew_of(3, 1))


def test_a_crew_member_listed_twice_is_refused():
    with pytest.raises(BadInput, match="crew_id x0 already listed"):
        assess(Operation.CRUISE, 40, crew_of(2, 1) + crew_of(1, 0))


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("level", "captain", "level 'captain' is not one of"),
        ("branch", "galley", "branch 'galley' is not one of"),
        ("nationality", "Brazil", "not an ISO 3166 two-letter code"),
        ("name", "", "name is required"),
    ],
)
def test_a_bad_crew_row_says_which_field(field, value, message):
    row = {
        "crew_id": "1",
        "name": "Ana",
        "nationality": "br",
        "level": "officer",
        "branch": "deck",
        field: value,
    }
    with pytest.raises(BadInput, match=message):
        CrewMember.from_row(row)


def test_nationality_is_read_case_insensitively():
    row = {"crew_id": "1", "name": "Ana", "nationality": "br", "level": "Officer", "branch": "DECK"}
    assert CrewMember.from_row(row).brazilian


# N6 checklist --------------------------------------------------------------------------------


def test_checklist_has_the_six_documents_of_article_7():
    keys = [i.key for i in checklist()]
    assert keys == [
        "ship_registry",
        "crew_list",
        "ship_particulars",
        "contracts",
        "safe_manning",
        "crew_payroll",
    ]
    assert all(i.article == "art. 7" for i in checklist())


def test_checklist_for_cabotage_adds_the_caa_and_work_permits():
    cab = [i.key for i in checklist(Operation.CABOTAGE)]
    cruise = [i.key for i in checklist(Operation.CRUISE)]
    assert "caa" in cab and "work_permits" in cab and "caa" not in cruise
    assert "visas" in cab and "visas" in cruise
