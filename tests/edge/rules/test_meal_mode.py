"""P6 recorded at the gate (83.611 art. 26 d; RULES.md G10 reading in docs/rules.md): the inspector's
card read twice opens meal mode; the next control card of a worker aboard is ABOARD, meal_worked."""

from __future__ import annotations

import dataclasses

from edge.rules.model import Flag, Outcome
from portgate.records import CardKind, CardStatus
from tests.edge.rules.conftest import local


def _inspector(port):
    return port.card("CC000001", "9001", kind=CardKind.INSPECTOR)


def _aboard(port, reg="1001"):
    uid = port.worker(reg)
    port.dispatch(reg, "07-13")
    assert port.read(uid, local(7)).outcome is Outcome.ADMIT
    return uid


def test_second_inspector_read_opens_meal_mode(port):
    insp = _inspector(port)
    first = port.read(insp, local(9))
    assert first.opens_inspector_session and not first.opens_meal_mode
    d = port.read(insp, local(9, 0, 10))
    assert d.outcome is Outcome.INSPECTOR and d.opens_inspector_session and d.opens_meal_mode
    assert d.flags == (Flag.MEAL_MODE,)
    assert d.message_pt == ("MODO FISCAL — modo refeição: apresente o cartão do trabalhador cujo "
                            "intervalo de refeição foi trabalhado.")
    assert d.message_en.startswith("INSPECTOR MODE — meal mode: present the card of the worker")
    assert port.views["GA"].session.mode == "meal"


def test_meal_mode_records_the_meal_of_a_worker_aboard_and_keeps_the_shift_open(port):
    uid = _aboard(port)
    insp = _inspector(port)
    port.read(insp, local(9))
    port.read(insp, local(9, 0, 10))
    d = port.read(uid, local(9, 0, 20))
    assert d.outcome is Outcome.ABOARD and d.meal_worked and not d.confiscate
    assert d.flags == (Flag.MEAL_WORKED,) and d.rules_failed == ()
    assert d.dispatch is not None and d.dispatch.period == "07-13"
    assert d.message_pt == ("JÁ A BORDO — intervalo de refeição trabalhado registrado (período 07-13; "
                            "83.611 art. 26 d).")
    assert port.views["GA"].session is None  # one record per meal mode
    assert port.presence.open_shifts["1001"].ship  # still aboard
    # the next read of the worker is an ordinary one (after the minimum stay: an exit)
    assert port.read(uid, local(13)).outcome is Outcome.EXIT


def test_meal_mode_refuses_a_worker_not_aboard_here(port):
    uid = port.worker("1002")
    port.dispatch("1002", "07-13")
    insp = _inspector(port)
    port.read(insp, local(7))
    port.read(insp, local(7, 0, 5))
    d = port.read(uid, local(7, 0, 10))
    assert d.outcome is Outcome.DENY and not d.meal_worked and d.rules_failed == ("G10",)
    assert "refeição não registrada" in d.message_pt
    assert "1002" not in port.presence.open_shifts  # not admitted either


def test_meal_mode_with_a_blocked_card_is_a_g2_refusal(port):
    uid = _aboard(port)
    port.cards = [dataclasses.replace(c, status=CardStatus.LOST) if c.uid == uid else c
                  for c in port.cards]
    insp = _inspector(port)
    port.read(insp, local(9))
    port.read(insp, local(9, 0, 10))
    d = port.read(uid, local(9, 0, 20))
    assert d.outcome is Outcome.DENY and not d.meal_worked and "G2" in d.rules_failed


def test_third_inspector_read_returns_to_confiscation_mode(port):
    uid = _aboard(port)
    insp = _inspector(port)
    port.read(insp, local(9))
    port.read(insp, local(9, 0, 10))
    back = port.read(insp, local(9, 0, 20))
    assert back.opens_inspector_session and not back.opens_meal_mode
    assert port.views["GA"].session.mode == "confiscate"
    d = port.read(uid, local(9, 0, 30))
    assert d.confiscate and not d.meal_worked


def test_another_inspector_card_or_an_expired_session_does_not_open_meal_mode(port):
    insp = _inspector(port)
    other = port.card("CC000002", "9002", kind=CardKind.INSPECTOR)
    port.read(insp, local(9))
    assert not port.read(other, local(9, 0, 10)).opens_meal_mode
    port.read(insp, local(10))
    assert not port.read(insp, local(10, 2)).opens_meal_mode  # the 60 s session had ended


def test_meal_mode_refuses_a_shift_with_no_escala_entry(port):
    """The office keys the meal by the shift's escala entry: none, so nothing is recorded."""
    from edge.rules.model import OpenShift

    uid = port.worker("1003")
    port.presence.open_shifts["1003"] = OpenShift("1003", "GA", "9074729", local(7), None)
    insp = _inspector(port)
    port.read(insp, local(9))
    port.read(insp, local(9, 0, 10))
    d = port.read(uid, local(9, 0, 20))
    assert d.outcome is Outcome.DENY and not d.meal_worked and d.rules_failed == ("G10",)
    assert d.message_pt.startswith("NEGADO — refeição não registrada: o turno do trabalhador não tem escala")
    assert d.message_en.startswith("DENIED — meal not recorded: the worker's shift has no escala entry")
