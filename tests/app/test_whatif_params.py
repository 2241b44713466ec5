"""The what-if's parameter form underneath (issue 34): the parameters of the gate rulebook version
in force on a day, a typed value read as the rulebook holds it (or refused naming the value), and
the rulebook with one parameter changed, checked as a whole."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from app.whatif import gate_parameters, parse_parameter, with_parameter
from edge.rules.rulebook import gate_rulebook_from
from portgate.errors import BadInput

GOOD = (Path(__file__).resolve().parents[2] / "config" / "rulebooks" / "gate-default.toml").read_text(encoding="utf-8")
DAY = dt.date(2026, 3, 15)
# a second version from 10/03/2026: the one in force on the 15th, not the first
TWO = GOOD + '\n[[version]]\neffective_from = 2026-03-10\n[version.g6]\nearly_tolerance_min = 45\n'


def _param(params, key):
    return next(p for p in params if p["key"] == key)


def test_the_parameters_are_those_of_the_version_in_force_on_the_day():
    params = gate_parameters(TWO, DAY)
    assert _param(params, "g6.early_tolerance_min")["value"] == "45"
    assert _param(gate_parameters(TWO, dt.date(2026, 3, 9)), "g6.early_tolerance_min")["value"] == "30"
    early = _param(params, "g6.early_tolerance_min")
    assert (early["kind"], early["min"], early["max"]) == ("int", 0, 1440)
    assert _param(params, "g7.mode") == {"key": "g7.mode", "rule": "g7", "name": "mode", "kind": "choice",
                                              "value": "deny", "min": None, "max": None, "choices": ["deny", "warn"]}
    assert _param(params, "g4.card_and_badge_required")["value"] == "false"
    assert _param(params, "g11.watch_periods")["value"] == "07-13, 13-19, 19-01, 01-07"
    keys = [p["key"] for p in params]
    assert "g12.categories" not in keys and "g3.health_exam_months_by_category" not in keys  # tables: the TOML
    assert keys.index("g1.enabled") < keys.index("g2.enabled") < keys.index("g10.enabled") < keys.index("g12.enabled")


@pytest.mark.parametrize("key, typed, value", [
    ("g4.card_and_badge_required", "sim", True), ("g4.card_and_badge_required", "false", False),
    ("g4.card_and_badge_required", "Não", False), ("g6.early_tolerance_min", " 0 ", 0),
    ("g7.mode", "warn", "warn"), ("g11.watch_periods", "07-19, 19-07", ["07-19", "19-07"]),
    ("g11.gangway_post", "proa", "proa"),
])
def test_a_typed_value_is_read_as_the_rulebook_holds_it(key, typed, value):
    assert parse_parameter(_param(gate_parameters(GOOD, DAY), key), typed) == value


@pytest.mark.parametrize("key, typed, says", [
    ("g4.card_and_badge_required", "talvez", "'talvez' is not true or false (sim or não)"),
    ("g6.early_tolerance_min", "trinta", "early_tolerance_min 'trinta' is not a whole number"),
    ("g6.early_tolerance_min", "1e3", "early_tolerance_min '1e3' is not a whole number"),
    ("g6.early_tolerance_min", "99999999999999", "is not a whole number"),
    ("g6.early_tolerance_min", "5000", "early_tolerance_min 5000 is outside 0..1440"),
    ("g6.early_tolerance_min", "-1", "early_tolerance_min -1 is outside 0..1440"),
    ("g7.mode", "talvez", "mode 'talvez' is not one of deny, warn"),
    ("g7.mode", "   ", "type a value"),
])
def test_a_typed_value_that_is_not_one_is_refused_naming_the_value(key, typed, says):
    with pytest.raises(BadInput) as caught:
        parse_parameter(_param(gate_parameters(GOOD, DAY), key), typed)
    assert caught.value.where == "value" and says in caught.value.reason


def test_with_parameter_changes_the_version_in_force_only_and_the_rest_stays():
    raw = with_parameter(TWO, DAY, "g6.early_tolerance_min", 0)
    books = gate_rulebook_from(raw, "t")
    assert books.for_date(DAY).g6.early_tolerance_min == 0
    assert books.for_date(dt.date(2026, 3, 9)).g6.early_tolerance_min == 30  # the older version untouched
    assert books.for_date(DAY).g6.late_tolerance_min == 60
    raw = with_parameter(GOOD, DAY, "g5.enabled", False)  # a sub-table the text may lack is made
    assert gate_rulebook_from(raw, "t").for_date(DAY).g5.enabled is False


def test_with_parameter_refuses_an_unknown_key_and_a_value_the_rulebook_refuses():
    with pytest.raises(BadInput) as caught:
        with_parameter(GOOD, DAY, "g99.nothing", 1)
    assert caught.value.where == "param"
    with pytest.raises(BadInput) as caught:
        with_parameter(GOOD, DAY, "g1.enabled", False)  # G1 cannot be switched off
    assert caught.value.where == "value" and "G1 cannot be switched off" in caught.value.reason
    with pytest.raises(BadInput) as caught:
        with_parameter(GOOD, DAY, "g11.watch_periods", ["7-13"])  # not HH-HH
    assert caught.value.where == "value" and "watch_periods" in caught.value.reason
