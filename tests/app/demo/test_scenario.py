"""The demo's scripted day replayed through the pure gate rules gives the expected decisions.

The same expectations are checked again by ``portgate demo`` through real readers, a real broker
and the office (tests/app/demo/test_demo_e2e.py)."""

from decimal import Decimal

from edge.replay import Replay
from edge.memview import Roster
from edge.rules.rulebook import GateRulebooks
from app.demo.scenario import Expected, Scenario, check_decision, check_pay
from portgate.records import Card, EscalaEntry, Worker, load_csv


def test_demo_day_replays_to_the_expected_decisions():
    sc = Scenario()
    roster = Roster(load_csv(sc.workers_csv, Worker), load_csv(sc.cards_csv, Card),
                    load_csv(sc.escala_csv, EscalaEntry))
    replay = Replay(roster, GateRulebooks())
    decided = {}
    for line, tap in sc.taps:
        for result in replay.feed(tap):
            if result["decision"] not in ("paired", "debounced"):
                decided[line] = result
    assert set(decided) == set(sc.expected)
    problems = [check_decision(sc.expected[line], r["decision"], r["rules_failed"], r["flags"])
                for line, r in decided.items()]
    assert [p for p in problems if p] == []


def test_check_decision_names_the_mismatch():
    exp = Expected(taps_line=7, gate_id="g", registration="V1", decision="admit", rules_failed=(),
                   flags=())
    assert check_decision(exp, "admit", [], ["STALE_DATA"]) is None
    assert "decision deny != admit" in check_decision(exp, "deny", ["G1"], [])


def test_check_pay_reports_missing_and_unexpected_statements():
    problems = check_pay({"V1": Decimal("180.00")}, {"V2": Decimal("1.00")})
    assert problems == ["pay V1: None != expected 180.00", "pay V2: unexpected statement of 1.00"]


def test_scenario_covers_what_issue_2_asks_for():
    sc = Scenario()
    flags = {f for e in sc.expected.values() for f in e.flags}
    rules = {r for e in sc.expected.values() for r in e.rules_failed}
    decisions = {e.decision for e in sc.expected.values()}
    assert {"admit", "exit", "deny", "inspector"} <= decisions
    assert {"BORROWED_CARD", "DOUBLE_ASSIGNMENT", "ROTATION_JUMP", "CONFISCATE"} <= flags
    assert "G1" in rules  # an unknown card
    assert sc.spec.outage is not None and sc.spec.outage.seconds >= 20
    assert sc.expected_pay["V017"] == Decimal("696.60")  # RULES.md P worked example 2
    assert len(load_csv(sc.workers_csv, Worker)) >= 40
