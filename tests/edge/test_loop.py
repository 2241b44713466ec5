"""The gate loop wired to a real store, journal and the real rules engine, with a recording
indicator: admit, exit, borrowed card, confiscation, failure paths."""

from __future__ import annotations

import datetime as dt
import threading

import msgspec

from edge.loop import GateLoop
from edge.rules.model import Flag, Outcome
from edge.rules.rulebook import G4Settings, default_gate_rulebook
from portgate.errors import StoreError
from portgate.records import CardStatus
from wire.events import ConfiscationPayload, ReaderPayload, TapPayload

from .conftest import GATE, QueueReader, card_read

V001_CARD, V001_BADGE, V002_BADGE, INSPECTOR = "0A04A10001", "0B0B01BADE", "0B0B02BADE", "0F1F5CA001"


def taps(journal):
    return [e for e in journal.events_between(1, 10**9) if isinstance(e.payload, TapPayload)]


def test_dispatched_worker_is_admitted_journaled_before_shown_and_shift_opened(make_loop, clock, journal, store):
    loop = make_loop()
    seen_at_show = []
    loop.indicator.show = lambda d, lang, event=None: seen_at_show.append((d, journal.last_seq(), event))
    [decision] = loop.handle(card_read(V001_CARD, clock))
    assert decision.outcome is Outcome.ADMIT and decision.registration == "V001"
    shown, committed_seq, event = seen_at_show[0]
    assert committed_seq == event.seq == 1  # the event was committed when the light came on
    [ev] = taps(journal)
    assert (ev.payload.decision, ev.payload.registration, ev.payload.dispatch.post) == ("admit", "V001", "portalo")
    shift = store.open_shift("V001")
    assert (shift.gate_id, shift.ship, shift.admitted_at) == (GATE, "9300001", clock.wall())


def test_second_read_closes_the_shift_as_exit_and_records_the_shift_end(make_loop, clock, store, journal):
    loop = make_loop()
    loop.handle(card_read(V001_CARD, clock))
    clock.advance(6 * 3600)
    [decision] = loop.handle(card_read(V001_CARD, clock))
    assert decision.outcome is Outcome.EXIT
    assert store.open_shift("V001") is None
    assert store.last_shift_end("V001") == clock.wall()
    assert [e.payload.decision for e in taps(journal)] == ["admit", "exit"]


def test_a_bounce_inside_the_debounce_window_is_not_a_second_decision(make_loop, clock, journal):
    loop = make_loop()
    loop.handle(card_read(V001_CARD, clock))
    clock.advance(1)
    assert loop.handle(card_read(V001_CARD, clock)) == []
    assert len(taps(journal)) == 1


def test_borrowed_card_is_denied_when_the_badge_is_someone_elses(make_loop, clock, journal, store):
    rb = msgspec.structs.replace(default_gate_rulebook(), g4=G4Settings(card_and_badge_required=True))
    loop = make_loop(rb)
    assert loop.handle(card_read(V002_BADGE, clock, kind="badge")) == []  # held for pairing
    clock.advance(2)
    [decision] = loop.handle(card_read(V001_CARD, clock))
    assert decision.outcome is Outcome.DENY and "G4" in decision.rules_failed
    assert Flag.BORROWED_CARD in decision.flags
    [ev] = taps(journal)
    assert (ev.payload.badge_uid, ev.payload.badge_registration) == (V002_BADGE, "V002")
    assert store.pending_flags(V001_CARD) == ["BORROWED_CARD"]
    assert store.open_shift("V001") is None


def test_own_badge_and_card_admit_when_both_are_required(make_loop, clock):
    rb = msgspec.structs.replace(default_gate_rulebook(), g4=G4Settings(card_and_badge_required=True))
    loop = make_loop(rb)
    loop.handle(card_read(V001_BADGE, clock, kind="badge"))
    clock.advance(2)
    [decision] = loop.handle(card_read(V001_CARD, clock))
    assert decision.outcome is Outcome.ADMIT


def test_G4_card_then_own_badge_within_the_window_admits_once(make_loop, clock, journal, store):
    rb = msgspec.structs.replace(default_gate_rulebook(), g4=G4Settings(card_and_badge_required=True))
    loop = make_loop(rb)
    assert loop.handle(card_read(V001_CARD, clock)) == []  # held for its badge
    clock.advance(14)
    assert loop.handle(None) == []  # a tick inside the window decides nothing
    [decision] = loop.handle(card_read(V001_BADGE, clock, kind="badge"))
    assert decision.outcome is Outcome.ADMIT and decision.badge_registration == "V001"
    [ev] = taps(journal)
    assert (ev.payload.uid, ev.payload.badge_uid, ev.payload.decision) == (V001_CARD, V001_BADGE, "admit")
    assert ev.occurred_at == clock.wall()  # decided (and journaled) when the badge came
    assert store.open_shift("V001") is not None


def test_G4_card_then_someone_elses_badge_is_a_borrowed_card_naming_both(make_loop, clock, journal, store):
    rb = msgspec.structs.replace(default_gate_rulebook(), g4=G4Settings(card_and_badge_required=True))
    loop = make_loop(rb)
    loop.handle(card_read(V001_CARD, clock))
    clock.advance(3)
    [decision] = loop.handle(card_read(V002_BADGE, clock, kind="badge"))
    assert decision.outcome is Outcome.DENY and Flag.BORROWED_CARD in decision.flags
    [ev] = taps(journal)
    assert (ev.payload.registration, ev.payload.badge_registration) == ("V001", "V002")
    assert "V001" in ev.payload.message and "V002" in ev.payload.message
    assert store.pending_flags(V001_CARD) == ["BORROWED_CARD"] and store.open_shift("V001") is None


def test_G4_card_without_badge_is_denied_badge_missing_on_the_tick_after_the_window(make_loop, clock, journal):
    rb = msgspec.structs.replace(default_gate_rulebook(), g4=G4Settings(card_and_badge_required=True))
    loop = make_loop(rb)
    loop.handle(card_read(V001_CARD, clock))
    clock.advance(15.5)
    [decision] = loop.handle(None)  # timer tick
    assert decision.outcome is Outcome.DENY and decision.reasons == ("G4.badge_missing",)
    assert [e.payload.uid for e in taps(journal)] == [V001_CARD]


def test_G4_a_badge_alone_is_journaled_at_its_read_not_when_the_window_ran_out(make_loop, clock, journal):
    rb = msgspec.structs.replace(default_gate_rulebook(), g4=G4Settings(card_and_badge_required=True))
    loop = make_loop(rb)
    read_at, read_mono = clock.wall(), clock.mono_ns()
    assert loop.handle(card_read(V001_BADGE, clock, kind="badge")) == []  # held for its control card
    clock.advance(15.5)
    [decision] = loop.handle(None)  # the tick after the window
    assert decision.outcome is Outcome.DENY and "G4" in decision.rules_failed
    [ev] = taps(journal)
    assert ev.payload.uid == V001_BADGE and ev.payload.reader_kind == "badge"
    assert ev.occurred_at == read_at and ev.mono_ns == read_mono and ev.clock_trusted


def test_G4_a_card_whose_badge_never_came_is_journaled_at_its_read(make_loop, clock, journal):
    rb = msgspec.structs.replace(default_gate_rulebook(), g4=G4Settings(card_and_badge_required=True))
    loop = make_loop(rb)
    read_at = clock.wall()
    loop.handle(card_read(V001_CARD, clock))
    clock.advance(20)
    [decision] = loop.handle(card_read(V002_BADGE, clock, kind="badge"))  # after the window: alone
    assert decision.reasons == ("G4.badge_missing",)
    assert [(e.payload.uid, e.occurred_at) for e in taps(journal)] == [(V001_CARD, read_at)]
    clock.advance(16)
    loop.handle(None)  # the second badge, alone too, at its own read
    assert [e.occurred_at for e in taps(journal)] == [read_at, read_at + dt.timedelta(seconds=20)]


def test_G4_a_pair_is_journaled_at_its_second_read(make_loop, clock, journal):
    rb = msgspec.structs.replace(default_gate_rulebook(), g4=G4Settings(card_and_badge_required=True))
    loop = make_loop(rb)
    loop.handle(card_read(V001_CARD, clock))
    clock.advance(5)
    second_at = clock.wall()
    [decision] = loop.handle(card_read(V001_BADGE, clock, kind="badge"))
    assert decision.outcome is Outcome.ADMIT
    assert [e.occurred_at for e in taps(journal)] == [second_at]


def test_G4_an_exit_is_not_held_for_a_badge(make_loop, clock, journal):
    rb = msgspec.structs.replace(default_gate_rulebook(), g4=G4Settings(card_and_badge_required=True))
    loop = make_loop(rb)
    loop.handle(card_read(V001_BADGE, clock, kind="badge"))
    loop.handle(card_read(V001_CARD, clock))
    clock.advance(6 * 3600)
    [decision] = loop.handle(card_read(V001_CARD, clock))
    assert decision.outcome is Outcome.EXIT


def test_a_lonely_badge_is_decided_when_the_pairing_window_passes(make_loop, clock, journal):
    loop = make_loop()
    loop.handle(card_read(V001_BADGE, clock, kind="badge"))
    clock.advance(16)
    [decision] = loop.handle(None)  # timer tick
    assert decision.outcome is Outcome.DENY and "G4" in decision.rules_failed


def test_inspector_confiscation_blocks_the_card_at_once_and_jumps_the_outbox(make_loop, clock, journal, store):
    loop = make_loop()
    loop.handle(card_read("0A04A10003", clock))  # V003 is dispatched elsewhere: DENY, first in outbox
    [insp] = loop.handle(card_read(INSPECTOR, clock))
    assert insp.outcome is Outcome.INSPECTOR and store.inspector_session().inspector_registration == "F001"
    clock.advance(5)
    [conf] = loop.handle(card_read(V001_CARD, clock))
    assert conf.confiscate and conf.outcome is Outcome.DENY
    assert store.card(V001_CARD).status is CardStatus.CONFISCATED  # blocked at once
    assert store.inspector_session() is None
    outbox = journal.outbox_batch(10)
    assert [type(e.payload).__name__ for e in outbox[:2]] == ["TapPayload", "ConfiscationPayload"]
    c = outbox[1].payload
    assert isinstance(c, ConfiscationPayload)
    assert (c.uid, c.registration, c.inspector_uid, c.inspector_registration) == (V001_CARD, "V001", INSPECTOR, "F001")
    clock.advance(5)
    [again] = loop.handle(card_read(V001_CARD, clock))
    assert again.outcome is Outcome.DENY and "G2" in again.rules_failed and Flag.RETAIN_CARD in again.flags


def test_unknown_and_malformed_uids_are_denied_and_journaled(make_loop, clock, journal):
    loop = make_loop()
    [unknown] = loop.handle(card_read("DEADBEEF", clock))
    clock.advance(4)
    [garbage] = loop.handle(card_read("zz\x00\x1b[31m" + "9" * 500, clock))
    assert unknown.outcome is garbage.outcome is Outcome.DENY
    assert unknown.rules_failed == garbage.rules_failed == ("G1",)
    uids = [e.payload.uid for e in taps(journal)]
    assert uids[0] == "DEADBEEF" and len(uids[1]) == 64 and uids[1].isprintable()


def test_bytes_a_reader_could_not_decode_reach_the_watchman_as_question_marks(make_loop, clock, journal):
    loop = make_loop()
    [d] = loop.handle(card_read(b"\xff\xfe0A".decode("utf-8", "replace"), clock))
    assert d.outcome is Outcome.DENY and d.rules_failed == ("G1",)
    assert "\ufffd" not in d.message_pt and "??0A" in d.message_pt
    assert taps(journal)[-1].payload.uid == "??0A"


def test_an_exception_in_decide_is_shown_as_internal_failure_and_journaled(make_loop, clock, journal):
    def broken(*_a):
        raise KeyError("bug")

    loop = make_loop(decide=broken)
    [decision] = loop.handle(card_read(V001_CARD, clock))
    assert decision.outcome is Outcome.DENY and decision.rules_failed == ("INTERNAL",)
    assert "falha interna" in decision.message_pt.lower()
    [ev] = taps(journal)
    assert ev.payload.rules_failed == ["INTERNAL"]
    assert loop.indicator.decisions == [decision]


def test_a_journal_that_cannot_commit_shows_deny_and_admits_nobody(make_loop, clock, journal, mocker):
    # a full disk cannot be produced on demand here: the fault is injected at the journal boundary
    mocker.patch("edge.journal_batch.JournalBatch.commit", side_effect=StoreError("disk I/O error"))
    loop = make_loop()
    [decision] = loop.handle(card_read(V001_CARD, clock))
    assert decision.outcome is Outcome.DENY and "registro" in decision.message_pt
    assert loop.indicator.shown[0][2] is None


def test_a_read_the_journal_refused_is_handed_to_the_screen_and_a_failing_hand_off_is_harmless(
        make_loop, clock, journal, mocker):
    """``on_unjournaled`` (the heartbeat's ``note_refused``) gets each read shown without a journal
    row; if it raises, the gate still shows the refusal and goes on deciding."""
    mocker.patch("edge.journal_batch.JournalBatch.commit", side_effect=StoreError("disk I/O error"))
    loop = make_loop()
    noted = []
    loop.on_unjournaled = lambda uid, outcome, registration: noted.append((uid, outcome, registration))
    [decision] = loop.handle(card_read(V001_CARD, clock))
    assert noted == [(V001_CARD, "deny", None)]
    loop.on_unjournaled = mocker.Mock(side_effect=RuntimeError("screen record broken"))
    clock.advance(5)
    [again] = loop.handle(card_read("0A04A10002", clock))
    assert again.outcome is Outcome.DENY and "registro" in again.message_pt
    assert loop.indicator.decisions == [decision, again]


def test_a_clock_jumping_backwards_flags_the_event_untrusted_and_still_decides(make_loop, clock, journal):
    loop = make_loop()
    loop.handle(card_read("0A04A10002", clock))
    clock.advance(10)
    clock.set_wall(clock.wall() - dt.timedelta(hours=3))
    [decision] = loop.handle(card_read(V001_CARD, clock))
    assert Flag.CLOCK_UNTRUSTED in decision.flags
    first, second = taps(journal)
    assert first.clock_trusted and not second.clock_trusted
    assert second.mono_ns > first.mono_ns and second.seq == first.seq + 2  # the CLOCK_UNTRUSTED alert between
    assert second.occurred_at == first.occurred_at + dt.timedelta(seconds=10)  # G13: the estimate


def test_G13_a_1970_clock_is_untrusted_and_decides_on_the_estimate(make_loop, clock, journal):
    loop = make_loop()  # the loop read the clock at T0 when it was built: the last plausible time
    clock.set_wall(dt.datetime(1970, 1, 1, 0, 5, tzinfo=dt.UTC))
    [decision] = loop.handle(card_read(V001_CARD, clock))
    assert decision.outcome is Outcome.ADMIT and Flag.CLOCK_UNTRUSTED in decision.flags
    [tap] = taps(journal)
    assert not tap.clock_trusted and tap.occurred_at.year == 2026


def test_store_effects_lost_in_a_crash_are_reapplied_from_the_journal(make_loop, clock, store, journal, mocker):
    loop = make_loop()
    mocker.patch.object(store, "apply", side_effect=StoreError("killed here"))
    loop.handle(card_read(V001_CARD, clock))
    mocker.stopall()
    assert store.open_shift("V001") is None and store.applied_seq == 0
    assert make_loop().recover() == 1
    assert store.open_shift("V001").registration == "V001"


def test_threaded_loop_reads_from_reader_threads_and_journals_reader_status(make_loop, clock, journal):
    from drivers.base import ReaderState, ReaderStatus

    reader = QueueReader()
    loop = make_loop(readers=[reader], tick_s=0.01)
    done = threading.Event()
    loop.on_event = lambda ev: done.set() if isinstance(ev.payload, TapPayload) else None
    th = threading.Thread(target=loop.run)
    th.start()
    loop.on_status(ReaderStatus("r-control", ReaderState.FAULT, "unplugged"))
    reader.q.put(card_read(V001_CARD, clock))
    assert done.wait(30)
    loop.stop()
    th.join(30)
    kinds = [type(e.payload) for e in journal.events_between(1, 100)]
    assert ReaderPayload in kinds and TapPayload in kinds
    assert loop.indicator.decisions[0].outcome is Outcome.ADMIT


def test_G4_optional_badge_of_another_worker_after_an_admitted_card_is_a_borrowed_card(
        make_loop, clock, journal, store):
    """Default rulebook (badge optional): the card is admitted at once (no wait), the other
    registration's badge 5 s later raises BORROWED_CARD naming both, and both registrations'
    control cards carry the pending flag, so a confiscation takes art. 20 j/l (G4, G10)."""
    loop = make_loop()
    [admit] = loop.handle(card_read(V001_CARD, clock))
    assert admit.outcome is Outcome.ADMIT  # not held for an optional badge
    clock.advance(5)
    # held for the window (the next worker may show badge then card), then decided on the tick
    assert loop.handle(card_read(V002_BADGE, clock, kind="badge")) == []
    clock.advance(15.5)
    [flagged] = loop.handle(None)
    assert flagged.outcome is Outcome.DENY and flagged.flags == (Flag.BORROWED_CARD,)
    assert "Chame o fiscal." in flagged.message_pt and "V002" in flagged.message_pt
    ev = taps(journal)[-1]
    assert (ev.payload.reader_kind, ev.payload.registration, ev.payload.badge_registration) == (
        "badge", "V001", "V002")
    assert store.open_shift("V001") is not None  # the admit stands: the inspector is called
    assert store.pending_flags(V001_CARD) == ["BORROWED_CARD"]
    assert store.pending_flags("0A04A10002") == ["BORROWED_CARD"]
    clock.advance(10)
    loop.handle(card_read(INSPECTOR, clock))
    clock.advance(2)
    [conf] = loop.handle(card_read("0A04A10002", clock))
    assert conf.confiscate and conf.confiscation_article == "83.611 art. 20 j/l"


def test_G4_own_badge_after_an_admitted_card_changes_nothing(make_loop, clock, journal):
    loop = make_loop()
    loop.handle(card_read(V001_CARD, clock))
    clock.advance(5)
    assert loop.handle(card_read(V001_BADGE, clock, kind="badge")) == []
    clock.advance(20)
    assert loop.handle(None) == []
    assert [e.payload.decision for e in taps(journal)] == ["admit"]


def test_G4_next_worker_showing_badge_then_card_right_after_an_exit_is_no_borrowed_card(
        make_loop, clock, journal, store):
    rb = msgspec.structs.replace(default_gate_rulebook(), g4=G4Settings(card_and_badge_required=True))
    loop = make_loop(rb)
    loop.handle(card_read(V001_BADGE, clock, kind="badge"))
    loop.handle(card_read(V001_CARD, clock))
    clock.advance(6 * 3600)
    [exit_] = loop.handle(card_read(V001_CARD, clock))  # V001 leaves (decided at once) ...
    assert exit_.outcome is Outcome.EXIT
    clock.advance(4)  # ... and V002 shows badge, then card, 4 s later
    assert loop.handle(card_read(V002_BADGE, clock, kind="badge")) == []
    clock.advance(3)
    [d] = loop.handle(card_read("0A04A10002", clock))
    assert Flag.BORROWED_CARD not in d.flags and d.badge_registration == "V002"
