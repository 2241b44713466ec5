"""E7 (DL 2.032 art. 16): travel to an anchored ship is work time at the day wage and billed to the
shipowner with the transport; E8 (art. 12 §5, §6; art. 26): a stoppage for want of equipment is
paid in full, one proven caused by the workers is not paid; both refused by the dock rulebook.
Figures by hand, SD = R$ 180.00 (SD × minutes ÷ 480)."""

from decimal import Decimal

import pytest

from central.production.csvio import interruption_from_row
from central.production.engine import pay_gang
from central.production.model import GangWork, Interruption
from portgate.errors import BadInput
from tests.central.production.conftest import amounts, by_reg, gang, member


def _with_transport(work: GangWork, amount: str) -> GangWork:
    stops = tuple(Interruption(s.kind, s.minutes, s.source, Decimal(amount) if s.kind == "anchorage_travel" else None)
                  for s in work.interruptions)
    import dataclasses
    return dataclasses.replace(work, interruptions=stops)


def test_e7_travel_paid_at_day_wage_and_billed_with_transport_e8_both_ways(stevedoring, tariffs):
    # 2 stevedores + 1 hatch foreman, 100 t × 4.50 = 450.00, 3.5 quotas:
    #   stevedore 450 × 1 ÷ 3.5 = 128.571… -> 128.57, E3 full day 180.00 -> top-up 51.43
    #   hatch foreman 450 × 1.5 ÷ 3.5 = 192.857… -> 192.86 (above the day wage)
    # E7 travel 50 min: 180 × 1 × 50 ÷ 480 = 18.75 each
    # E8 no equipment 45 min: 180 × 1 × 45 ÷ 480 = 16.875 -> 16.88 each; workers' fault 30 min: 0.00
    crew = [member("S1"), member("S2"), member("H1", "hatch_foreman")]
    work = _with_transport(gang(crew, [("general", "100")], stops=[
        ("anchorage_travel", 50), ("no_equipment", 45), ("workers_fault", 30)]), "120.00")
    result = pay_gang(work, stevedoring, tariffs)
    m = by_reg(result)
    assert amounts(m["S1"]) == ["128.57", "51.43", "18.75", "16.88", "0.00"]
    assert [line.rule for line in m["S1"].lines] == ["E2", "E3", "E7", "E8", "E8"]
    assert [line.article for line in m["S1"].lines][2:] == [
        "DL 2.032 art. 16", "DL 2.032 art. 12 §5, §6", "DL 2.032 art. 26"]
    assert m["S1"].total == Decimal("215.63")
    assert amounts(m["H1"]) == ["192.86", "18.75", "16.88", "0.00"]
    assert m["H1"].total == Decimal("228.49")
    # billing: the travel wages 3 × 18.75 = 56.25, no surcharge (0 in the rulebook), transport 120.00
    assert [(line.rule, str(line.amount)) for line in result.billing] == [("E7", "56.25"), ("E7", "120.00")]
    assert result.billing_total == Decimal("176.25")
    assert "3 trabalhador(es)" in result.billing[0].description


@pytest.mark.parametrize("kind", ["anchorage_travel", "no_equipment", "workers_fault"])
def test_dock_rulebook_refuses_the_stevedoring_kinds_naming_rule_and_row(dock, tariffs, kind):
    with pytest.raises(BadInput, match=rf"interruptions.csv:2: kind '{kind}' is not paid under this "
                                       rf"rulebook .*; E[78] \(DL 2.032 art\. [0-9§ ]+\) is a rule of stevedoring"):
        pay_gang(gang([member("W1", "worker")], [("general", "10")], stops=[(kind, 30)]), dock, tariffs)


def test_transport_only_on_travel_rows():
    with pytest.raises(BadInput, match="transport is only for anchorage_travel rows"):
        interruption_from_row({"gang_id": "T1", "kind": "rain", "minutes": "30", "transport": "10.00"}, "x")
    _, stop = interruption_from_row({"gang_id": "T1", "kind": "anchorage_travel", "minutes": "40",
                                     "transport": "85.50"}, "x")
    assert stop.transport == Decimal("85.50")


def test_e7_percentage_is_on_the_travel_wages_only_not_on_the_transport(tmp_path, capsys):
    """RULES.md E7 as amended (issue 31 item 10): the stevedoring entity's percentage (the port's
    ``shipowner_billing.surcharge``, here 10%) applies to the billed travel wages, not to the
    transport. 2 stevedores, travel 40 min: 180 × 40 ÷ 480 = 15.00 each, billed 30.00; 10% of
    30.00 = 3.00; transport 100.00 as entered (not 110.00). Billing total 133.00."""
    from tests.central.production.cli_files import pay, write
    from tests.central.production.conftest import ROOT

    book = (ROOT / "config" / "rulebooks" / "dl-2032-1940.toml").read_text(encoding="utf-8")
    assert 'surcharge = "0" ' in book
    (tmp_path / "port.toml").write_text(book.replace('surcharge = "0" ', 'surcharge = "0.10" '), encoding="utf-8")
    argv = write(tmp_path, gang="gang_id,registration,role,minutes_worked\nT1,E1,stevedore,220\nT1,E2,stevedore,220\n",
                 tally="gang_id,ship,date,period,cargo_class,quantity\nT1,9123456,2026-03-10,07-13,general,40\n",
                 interruptions="gang_id,kind,minutes,transport\nT1,anchorage_travel,40,100.00\n")
    argv[1] = str(tmp_path / "port.toml")
    gang = pay(capsys, argv, "--lang", "pt-BR")["gangs"][0]
    assert [(x["rule"], x["amount"]) for x in gang["billing"]] == [("E7", "30.00"), ("E7", "3.00"), ("E7", "100.00")]
    assert "10% sobre R$ 30.00" in gang["billing"][1]["description"]
    assert gang["billing_total"] == "133.00"
