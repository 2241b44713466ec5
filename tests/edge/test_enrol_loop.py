"""Enrol mode in the gate loop (issue 34), with a real store, journal and rules engine: the
office's EnrolCommand comes through the inbox; the next unknown card is refused G1 + ENROL and
journaled as the office's candidate; the mode ends after that read, at its deadline, or on a
cancel; a command already past its deadline is ignored; the heartbeat says it to the screen."""

from __future__ import annotations

import datetime as dt
import time

from edge.rules.model import Outcome
from wire.downlink import EnrolCommand
from wire.events import TapPayload

from .conftest import card_read

NEW, OTHER_NEW, V001_CARD = "04A1B2C3D4E5F6", "04FFEEDDCCBBAA", "0A04A10001"


def _start(loop, clock, seconds=120, session="enrol-7"):
    cmd = EnrolCommand(session=session, action="start", registration="V009",
                       until=clock.wall() + dt.timedelta(seconds=seconds), timeout_s=seconds, at=clock.wall())
    return loop.handle_batch([cmd])


def _taps(journal):
    return [e.payload for e in journal.events_between(1, 10**9) if isinstance(e.payload, TapPayload)]


def test_the_next_unknown_card_is_the_enrol_read_then_enrol_mode_ends(make_loop, clock, journal):
    loop = make_loop()
    _start(loop, clock)
    assert loop.enrol_state()["session"] == "enrol-7"
    clock.advance(3)
    [first] = loop.handle(card_read(NEW, clock))
    assert first.outcome is Outcome.DENY and first.rules_failed == ("G1", "ENROL")
    assert loop.enrol_state() is None  # one card, then it ends
    clock.advance(3)
    [second] = loop.handle(card_read(OTHER_NEW, clock))
    assert second.rules_failed == ("G1",)
    tap = _taps(journal)[0]
    assert (tap.uid, tap.decision, tap.rules_failed) == (NEW, "deny", ["G1", "ENROL"])
    assert "cartão em cadastro" in tap.message


def test_a_known_card_read_during_enrol_mode_is_decided_as_always_and_the_mode_waits(make_loop, clock, journal):
    loop = make_loop()
    _start(loop, clock)
    [d] = loop.handle(card_read(V001_CARD, clock))
    assert d.outcome is Outcome.ADMIT and "ENROL" not in d.rules_failed
    assert loop.enrol_state() is not None


def test_enrol_mode_ends_at_its_timeout_on_the_tick(make_loop, clock):
    loop = make_loop()
    _start(loop, clock, seconds=30)
    clock.advance(29)
    loop.handle(None)
    assert loop.enrol_state() is not None
    clock.advance(2)
    loop.handle(None)
    assert loop.enrol_state() is None
    [d] = loop.handle(card_read(NEW, clock))
    assert d.rules_failed == ("G1",)


def test_a_cancel_of_the_same_session_ends_it_another_session_does_not(make_loop, clock):
    loop = make_loop()
    _start(loop, clock)
    loop.handle_batch([EnrolCommand(session="enrol-1", action="cancel", at=clock.wall())])
    assert loop.enrol_state() is not None
    loop.handle_batch([EnrolCommand(session="enrol-7", action="cancel", at=clock.wall())])
    assert loop.enrol_state() is None


def test_a_start_already_past_its_deadline_is_ignored(make_loop, clock):
    loop = make_loop()
    _start(loop, clock, seconds=0)
    assert loop.enrol_state() is None
    late = EnrolCommand(session="enrol-8", action="start", registration="V009",
                        until=clock.wall() - dt.timedelta(seconds=5), timeout_s=120, at=clock.wall())
    loop.handle_batch([late])
    assert loop.enrol_state() is None


def test_reads_before_the_command_in_one_batch_are_decided_without_it(make_loop, clock):
    loop = make_loop()
    cmd = EnrolCommand(session="enrol-9", action="start", registration="V009",
                       until=clock.wall() + dt.timedelta(seconds=60), timeout_s=60, at=clock.wall())
    first = card_read(NEW, clock)
    clock.advance(3)
    decisions = loop.handle_batch([first, cmd, card_read(OTHER_NEW, clock)])
    assert [d.rules_failed for d in decisions] == [("G1",), ("G1", "ENROL")]


def test_the_heartbeat_carries_enrol_mode_to_the_screen(make_loop, clock, tmp_path):
    from edge.heartbeat import Heartbeat, read_heartbeat

    loop = make_loop()
    beat = Heartbeat(tmp_path, None, enrol=loop.enrol_state)
    beat.beat()
    assert read_heartbeat(tmp_path / "gate-alive.json").enrol_until is None
    _start(loop, clock, seconds=90)
    beat.beat()
    until = read_heartbeat(tmp_path / "gate-alive.json").enrol_until
    assert until is not None and 80 < until - time.time() <= 90
    beat.stop()
