"""Group commit in the gate loop (edge.loop): the reads waiting in the inbox are decided in order,
each on the effects of the ones before it, journaled in one transaction, and shown only after it."""

from __future__ import annotations

import sqlite3

import msgspec

from edge.journal_batch import JournalBatch
from edge.rules.model import Outcome
from edge.rules.rulebook import default_gate_rulebook
from portgate.errors import StoreError
from wire.events import TapPayload

from .conftest import card_read

V001_CARD, V002_CARD, V003_CARD = "0A04A10001", "0A04A10002", "0A04A10003"


def _no_min_stay():
    """No minimum stay (G9): a second read of a worker aboard is an exit at once."""
    rb = default_gate_rulebook()
    return msgspec.structs.replace(rb, g9=msgspec.structs.replace(rb.g9, min_stay_minutes=0))


def taps(journal):
    return [e for e in journal.events_between(1, 10**9) if isinstance(e.payload, TapPayload)]


def test_an_entry_and_the_same_workers_exit_in_one_batch_are_decided_in_order(make_loop, clock, journal,
                                                                               store, mocker):
    loop = make_loop(_no_min_stay())
    entry = card_read(V001_CARD, clock)
    clock.advance(10)  # past the debounce window
    leave = card_read(V001_CARD, clock)
    commits = mocker.spy(JournalBatch, "commit")
    decisions = loop.handle_batch([entry, leave])
    assert [d.outcome for d in decisions] == [Outcome.ADMIT, Outcome.EXIT]  # the exit saw the admit
    assert commits.call_count == 1  # one transaction for both
    assert [(e.seq, e.payload.decision) for e in taps(journal)] == [(1, "admit"), (2, "exit")]
    assert store.open_shift("V001") is None and store.last_shift_end("V001") is not None
    assert store.applied_seq == 2
    assert [d for d, _lang, _ev in loop.indicator.shown] == decisions


def test_a_second_read_of_the_worker_in_the_same_batch_sees_him_aboard(make_loop, clock, journal, store):
    loop = make_loop()  # default G9: a read within 5 min of the admit is "already aboard"
    entry = card_read(V001_CARD, clock)
    clock.advance(10)
    again = card_read(V001_CARD, clock)
    assert [d.outcome for d in loop.handle_batch([entry, again])] == [Outcome.ADMIT, Outcome.ABOARD]
    assert store.open_shift("V001") is not None


def test_the_last_reads_store_effects_come_after_its_light_and_the_next_read_still_sees_the_ones_before(
        make_loop, clock, journal, store):
    """A read's store effects are applied when the batch next reads the store (the next read's pairing
    and decision), else after the lights: at V001's light his shift is open (V002 was decided on it),
    at V002's, the last read's, his is not yet; both are once the batch is done."""
    loop = make_loop()
    open_at_light = []

    def show(decision, lang, event=None):
        open_at_light.append((decision.registration, store.open_shift(decision.registration) is not None))

    loop.indicator.show = show
    first = card_read(V001_CARD, clock)
    clock.advance(1)
    decisions = loop.handle_batch([first, card_read(V002_CARD, clock)])
    assert [d.outcome for d in decisions] == [Outcome.ADMIT, Outcome.ADMIT]
    assert open_at_light == [("V001", True), ("V002", False)]
    assert store.open_shift("V001") is not None and store.open_shift("V002") is not None
    assert store.applied_seq == 2


def test_no_read_of_a_batch_is_shown_before_the_batch_is_committed(make_loop, clock, journal, tmp_path):
    loop = make_loop()
    reader = sqlite3.connect(tmp_path / "journal.db")  # another connection sees only committed rows
    committed_at_show = []

    def show(decision, lang, event=None):
        row = reader.execute("SELECT count(*) FROM journal WHERE seq = ?", (event.seq,)).fetchone()
        committed_at_show.append((event.seq, row[0]))

    loop.indicator.show = show
    reads = []
    for uid in (V001_CARD, V002_CARD, V003_CARD):
        reads.append(card_read(uid, clock))
        clock.advance(1)
    assert len(loop.handle_batch(reads)) == 3
    reader.close()
    assert committed_at_show == [(1, 1), (2, 1), (3, 1)]


def test_a_batch_the_journal_cannot_commit_shows_every_read_the_failure_and_changes_nothing(
        make_loop, clock, journal, store, mocker):
    loop = make_loop(_no_min_stay())
    loop.handle(card_read(V002_CARD, clock))  # V002 aboard, committed before the fault
    clock.advance(10)
    # a full disk cannot be produced on demand here: the fault is injected at the commit
    mocker.patch.object(JournalBatch, "commit", side_effect=StoreError("disk I/O error"))
    reads = [card_read(V001_CARD, clock)]
    clock.advance(10)
    reads.append(card_read(V002_CARD, clock))
    admit_fail, exit_fail = loop.handle_batch(reads)
    assert admit_fail.outcome is Outcome.DENY and "registro" in admit_fail.message_pt
    assert exit_fail.outcome is Outcome.EXIT and "NÃO registrada" in exit_fail.message_pt  # G13
    mocker.stopall()
    assert [e.payload.registration for e in taps(journal)] == ["V002"]  # nothing of the batch
    assert store.open_shift("V001") is None  # the staged admit was rolled back
    assert store.open_shift("V002") is not None and store.applied_seq == 1
    # the next read is decided on the state as committed: V001 is admitted now
    clock.advance(10)
    [again] = loop.handle(card_read(V001_CARD, clock))
    assert again.outcome is Outcome.ADMIT and store.open_shift("V001") is not None


def test_a_store_commit_that_fails_is_reapplied_from_the_journal_before_the_next_batch(
        make_loop, clock, journal, store, mocker):
    loop = make_loop()
    real_commit = store._db.commit
    # an I/O error at the store's commit cannot be produced on demand: injected at the connection
    mocker.patch.object(store, "_db", wraps=store._db)
    store._db.commit.side_effect = sqlite3.OperationalError("disk I/O error")
    [d] = loop.handle(card_read(V001_CARD, clock))
    assert d.outcome is Outcome.ADMIT  # journaled and shown
    assert store.applied_seq == 0 and store.open_shift("V001") is None  # store rolled back
    store._db.commit.side_effect = lambda: real_commit()  # the disk is back
    clock.advance(10)
    loop.handle(card_read(V002_CARD, clock))
    assert store.applied_seq == 2
    assert store.open_shift("V001") is not None and store.open_shift("V002") is not None
