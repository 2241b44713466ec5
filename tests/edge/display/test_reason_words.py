"""The decision's sentence on an English screen (``edge.display.reason_words``): the journaled
pt-BR text read back into the rules core's keys and values and worded from the English catalog,
as the gate's indicator words it (``edge.display.said``); the screen's own browser tests show it."""

from __future__ import annotations

import pytest

from edge.display.board import reason_text
from edge.display.reason_words import read_back, reason
from edge.display.said import text
from edge.rules.messages import ACTIONS, REASONS, said
from portgate.i18n import gettext

#: a value for each field the engine gives (a status, a post and a function by their codes)
VALUES = {"uid": "04A1B2C3", "count": 2, "status": "confiscated", "registration": "V001", "exam": "2024-01-05",
          "months": 24, "year": 2026, "badge_registration": "V002", "gate_id": "g-aurora", "ship": "9300001",
          "period": "07-13", "other": "V004", "post": "portalo", "late": "0h25", "tolerance": 15, "hours": 11,
          "rest": "5h10", "minutes": 30, "since": "07:02", "early": "2h00", "category": "bagrinho",
          "function": "vigia_chefe", "article": "83.611 art. 20 i", "ship_name": "MSC Aurora"}


@pytest.mark.parametrize("key", sorted(REASONS))
def test_every_reason_reads_back_and_is_worded_in_english_as_the_gate_words_it(key) -> None:
    message = said("deny", [(key, {f: VALUES[f] for f in REASONS[key]})], ["call_inspector"], [key.split(".")[0]])
    journaled = reason_text(text(message, "pt"))
    assert reason("en", journaled) == reason_text(text(message, "en"))
    assert reason("pt", journaled) == journaled


def test_several_reasons_actions_and_a_reason_whose_text_has_a_semicolon() -> None:
    message = said("exit", [("G9.aboard", {"since": "07:02", "minutes": 30}), ("G7.rest", {"rest": "5h10", "hours": 11})],
                   ["retain", "present_badge"], ["G9", "G7"])
    journaled = reason_text(text(message, "pt"))
    assert "; nada foi alterado" in journaled  # G9.aboard's own "; " is not a reasons' separator
    assert reason("en", journaled) == reason_text(text(message, "en"))
    assert read_back(journaled).actions == ("retain", "present_badge")
    for action in ACTIONS:  # a decision without a reason: its head, the action
        alone = reason_text(text(said("deny", [], [action], ["G4"]), "pt"))
        assert reason("en", alone) == text(said("deny", [], [action], ["G4"]), "en")


def test_an_internal_failure_and_an_unreadable_sentence() -> None:
    assert reason("en", gettext("pt", "gate.internal.deny")) == gettext("en", "gate.internal.deny")
    assert reason("en", reason_text(gettext("pt", "gate.internal.exit"))) == reason_text(gettext("en", "gate.internal.exit"))
    other = "cartão recusado por um motivo que esta versão não conhece. [G1]"  # an older gate's wording
    assert read_back(other) is None and reason("en", other) == other
