"""Enrol mode (issue 34) is an input of the pure rules: while it lasts, an unknown card read whole
is DENY G1 + ENROL ("cartão em cadastro"); a known card, a partial read, or the mode past its end
is decided as always."""

from __future__ import annotations

from edge.memview import MemoryGateView
from edge.display.said import decide  # the rules with their words (edge.rules.engine.decide: none)
from edge.rules.model import EnrolMode, Now, Outcome, Presentation

from .conftest import local, mono

NEW = "04A1B2C3D4E5F6"


def _read(port, uid, at, enrol):
    view: MemoryGateView = port.view("GA")
    view.updated_at = at
    p = Presentation(uid=uid, reader_id="GA/control", reader_kind="control", mono_ns=mono(at))
    return decide(view, p, Now(wall=at, mono_ns=mono(at)), port.rulebook, enrol=enrol)


def test_an_unknown_card_in_enrol_mode_is_refused_as_the_card_being_enrolled(port):
    at = local(8)
    d = _read(port, NEW, at, EnrolMode("enrol-1", "V001", mono(at) + 10**9))
    assert d.outcome is Outcome.DENY
    assert d.rules_failed == ("G1", "ENROL")
    assert d.card_uid == NEW and d.registration is None
    assert "cartão em cadastro" in d.message_pt and d.message_pt.endswith("[G1, ENROL]")


def test_without_enrol_mode_or_after_its_end_an_unknown_card_is_plain_g1(port):
    at = local(8)
    assert _read(port, NEW, at, None).rules_failed == ("G1",)
    ended = EnrolMode("enrol-1", "V001", mono(at))  # ends at this very nanosecond
    d = _read(port, NEW, at, ended)
    assert d.rules_failed == ("G1",) and "G1.unknown" in d.reasons


def test_a_known_card_in_enrol_mode_is_decided_as_always(port):
    card = port.worker("1010")  # its control card AA001010
    port.dispatch("1010", "07-13")
    at = local(7, 10)
    d = _read(port, card, at, EnrolMode("enrol-1", "V001", mono(at) + 10**12))
    assert d.outcome is Outcome.ADMIT and d.registration == "1010" and "ENROL" not in d.rules_failed


def test_a_partial_read_in_enrol_mode_is_not_offered(port):
    at = local(8)
    d = _read(port, "decimal10:C3D4E5F6", at, EnrolMode("enrol-1", "V001", mono(at) + 10**12))
    assert d.rules_failed == ("G1",) and d.reasons == ("G1.unknown",)
