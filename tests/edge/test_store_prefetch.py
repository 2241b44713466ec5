"""The store's look-ahead for a group commit (``Store.prefetch``): the batch's cards, their holders and
their last shift ends in one query, answering as the file does, below the batch's own effects and
the office's writes."""

from __future__ import annotations

import dataclasses
import datetime as dt

from edge.effects import Effects
from portgate.records import Card, CardKind, CardStatus, WorkerStatus

from .conftest import T0

# control cards, a badge, a lost card, an unknown UID, a partial read, a malformed read
READS = ["0A04A10001", "0A04A10002", "0B0B01BADE", "0A04A1FFEE", "DEADBEEF01", "dez8:A10003", "zz"]
ENDED = T0 - dt.timedelta(hours=5)


def _answers(store, reads):
    cards = [store.card(r) for r in reads]
    regs = sorted({c.registration for c in cards if c is not None} | {"V404"})
    return (cards, [store.cards_sharing(r) for r in reads], [store.worker(r) for r in regs],
            [store.last_shift_end(r) for r in regs])


def _selects(store):
    seen: list[str] = []
    store._db.set_trace_callback(lambda sql: seen.append(sql) if sql.lstrip().upper().startswith("SELECT") else None)
    return seen


def test_reads_looked_up_ahead_answer_as_the_file_with_one_query(store):
    store.apply(1, Effects(close=("V001", ENDED)))  # a last shift end in the file
    before = _answers(store, READS)
    assert before[0][0] == Card("0A04A10001", CardKind.CONTROL, "V001", CardStatus.ACTIVE)
    assert before[3][:2] == [ENDED, None]
    with store.batch():
        seen = _selects(store)
        store.prefetch(READS)
        assert len(seen) == 1  # cards, holders and last shift ends at once
        store._last_card = store._last_worker = None  # no answer kept from before
        whole = [r for r in READS if r not in ("dez8:A10003", "zz")]
        seen.clear()
        answers = _answers(store, whole)
        assert len(seen) == 2  # only the registration no read names: its worker, its last end
    assert answers[0] == [before[0][READS.index(r)] for r in whole]
    assert answers[1] == [before[1][READS.index(r)] for r in whole]
    with store.batch():  # partial and malformed reads are looked up as before, with the same answers
        store.prefetch(READS)
        assert _answers(store, READS) == before


def test_the_batch_s_own_effects_and_an_office_write_win_over_what_was_looked_up(store):
    store.apply(1, Effects(close=("V002", ENDED)))
    later = T0 + dt.timedelta(minutes=3)
    with store.batch():
        store.prefetch(["0A04A10001", "0A04A10002"])
        assert store.last_shift_end("V002") == ENDED
        store.apply(2, Effects(close=("V002", later)))  # staged: the next read sees it
        assert store.last_shift_end("V002") == later
        store.apply(3, Effects(block=("0A04A10001", "confiscated: ROTATION_JUMP", later), end_inspector=True))
        assert store.card("0A04A10001").status is CardStatus.CONFISCATED
        suspended = dataclasses.replace(store.worker("V002"), status=WorkerStatus.SUSPENDED)
        lost = Card("0A04A10002", CardKind.CONTROL, "V002", CardStatus.LOST)
        assert store.apply_roster_delta(1, 2, [suspended], [lost], later) is True
        assert store.worker("V002").status is WorkerStatus.SUSPENDED
        assert store.card("0A04A10002").status is CardStatus.LOST
        store.commit()
    assert store.last_shift_end("V002") == later


def test_a_look_ahead_outside_a_batch_asks_nothing_and_ends_with_its_batch(store):
    v003 = store.worker("V003")
    seen = _selects(store)
    store.prefetch(["0A04A10001"])
    assert seen == []
    with store.batch():
        store.prefetch(["0A04A10003"])
    store._last_card = store._last_worker = None
    seen.clear()
    assert store.worker("V003") == v003
    assert len(seen) == 1  # asked the file again: the look-ahead ended with its batch
