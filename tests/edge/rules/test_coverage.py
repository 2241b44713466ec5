"""G11: a long-haul ship must have a gangway watchman admitted for every period."""

from __future__ import annotations

import datetime as dt

from edge.rules.coverage import coverage_gaps
from edge.rules.model import Flag, OpenShift
from edge.rules.rulebook import G11Settings, GateRulebook
from tests.edge.rules.conftest import DAY, Port, local

RB = GateRulebook()


def test_long_haul_period_without_a_watchman_is_a_gap_after_the_grace():
    port = Port()
    port.dispatch("1002", "13-19", gate="GA")  # the ship is in port today
    view = port.view("GA")
    assert coverage_gaps(view.gate_dispatches(local(7, 29)), [], local(7, 29), RB) == []
    [gap] = coverage_gaps(view.gate_dispatches(local(7, 30)), [], local(7, 30), RB)
    assert (gap.ship, gap.date, gap.period, gap.flag) == ("9074729", DAY, "07-13", Flag.COVERAGE_GAP)
    assert gap.due_at == local(7, 30) and gap.dispatched == ()


def test_admitted_watchman_covers_the_period():
    port = Port()
    entry = port.dispatch("1001", "07-13", gate="GA")
    shifts = [OpenShift("1001", "GA", "9074729", local(6, 50), dispatch=entry)]
    assert coverage_gaps(port.view("GA").gate_dispatches(local(8)), shifts, local(8), RB) == []


def test_dispatched_but_not_admitted_is_a_gap_naming_who_was_dispatched():
    port = Port()
    port.dispatch("1001", "07-13", gate="GA")
    [gap] = coverage_gaps(port.view("GA").gate_dispatches(local(8)), [], local(8), RB)
    assert gap.dispatched == ("1001",)


def test_admission_without_dispatch_inside_the_period_covers_it():
    port = Port()
    port.dispatch("1001", "07-13", gate="GA")
    shifts = [OpenShift("1009", "GA", "9074729", local(7, 5))]
    assert coverage_gaps(port.view("GA").gate_dispatches(local(8)), shifts, local(8), RB) == []


def test_cabotage_without_a_requisitioned_watchman_raises_nothing():
    port = Port()
    port.dispatch("2001", "07-13", gate="GB", post="porao", function="estivador")
    assert coverage_gaps(port.view("GB").gate_dispatches(local(9)), [], local(9), RB) == []


def test_cabotage_with_a_requisitioned_watchman_is_checked():
    port = Port()
    port.dispatch("1001", "07-13", gate="GB")
    [gap] = coverage_gaps(port.view("GB").gate_dispatches(local(9)), [], local(9), RB)
    assert gap.period == "07-13" and gap.ship == "9300001"


def test_switched_off_and_ended_periods():
    port = Port()
    port.dispatch("1001", "07-13", gate="GA")
    dispatches = port.view("GA").gate_dispatches(local(8))
    assert coverage_gaps(dispatches, [], local(8), GateRulebook(g11=G11Settings(enabled=False))) == []
    gaps = coverage_gaps(dispatches, [], local(13, 45), RB)
    assert [g.period for g in gaps] == ["13-19"]  # 07-13 ended; 13-19 is past its grace


def test_night_period_crosses_midnight():
    port = Port()
    port.dispatch("1001", "19-01", gate="GA", day=DAY - dt.timedelta(days=1))
    at = local(0, 30)
    gaps = coverage_gaps(port.view("GA").gate_dispatches(at), [], at, RB)
    assert [(g.date, g.period) for g in gaps] == [(DAY - dt.timedelta(days=1), "19-01")]
