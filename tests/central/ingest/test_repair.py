"""The office's pure repair decisions (central/ingest/repair.py): sequences seen, losses, gate
statuses and the time -> replay commands, in memory (no broker, no database, no sleeps)."""

from __future__ import annotations

import datetime as dt

import pytest

from central.ingest.repair import (
    GapRound, GapTracker, TailAsk, TailCheck, TailRefused, TailTracker, scan_sequences,
)
from central.ingest.event_store import Gap

WALL = dt.datetime(2026, 3, 15, 4, 20, tzinfo=dt.UTC)


# -- sequences seen -> holes ---------------------------------------------------------------------

@pytest.mark.parametrize("contiguous, seqs, losses, kw, expected", [
    (0, [1, 2, 3], [], {}, (3, [])),  # in order
    (0, [3, 1, 2], [], {}, (3, [])),  # reordered
    (0, [1, 1, 2, 2, 3], [], {}, (3, [])),  # duplicates
    (0, [1, 2, 5, 9], [], {}, (2, [(3, 4), (6, 8)])),  # two holes
    (0, [2], [], {}, (0, [(1, 1)])),  # the first event missing
    (0, [1, 2, 5], [(3, 4)], {}, (5, [])),  # a journal quarantine's lost range fills the hole
    (0, [1, 5], [(3, 3)], {}, (1, [(2, 2), (4, 4)])),
    (4, [7], [(1, 5)], {}, (5, [(6, 6)])),  # a loss overlapping the progress
    (0, range(1, 11), [(50, 60)], {"window_end": 10}, (10, [])),  # a loss beyond a LIMIT-ed read
    (0, [2, 4, 6, 8], [], {"max_ranges": 2}, (0, [(1, 1), (3, 3)])),  # bounded: ranges
    (0, [100], [], {"max_events": 30}, (0, [(1, 30)])),  # bounded: the last range cut to fit
    (0, [], [], {}, (0, [])),
])
def test_scan_sequences_gives_the_progress_and_every_hole(contiguous, seqs, losses, kw, expected):
    assert scan_sequences(contiguous, seqs, losses, **kw) == expected


# -- gap rounds ----------------------------------------------------------------------------------

def gaps(gate: str, *ranges) -> list[Gap]:
    return [Gap(gate, a, b) for a, b in ranges]


@pytest.mark.parametrize("steps", [
    # (now, open gaps, rounds expected)
    [(0.0, gaps("g1", (3, 4)), []),  # in grace: still in flight
     (0.4, gaps("g1", (3, 4)), []),
     (0.5, gaps("g1", (3, 4), (8, 8)), [GapRound("g1", ((3, 4), (8, 8)))]),  # every range in one round
     (5.0, gaps("g1", (3, 4), (8, 8)), []),  # being answered: not again before replay_every_s
     (60.5, gaps("g1", (3, 4)), [GapRound("g1", ((3, 4),))])],  # still open after replay_every_s
    [(0.0, gaps("g1", (3, 4)), []),
     (1.0, gaps("g1", (3, 4)), [GapRound("g1", ((3, 4),))]),
     (2.0, gaps("g1", (3, 4)), [])],
    # the round's ranges filled, more holes beyond the bound: the next round at once (its own grace)
    [(0.0, gaps("g1", (3, 4)), []),
     (1.0, gaps("g1", (3, 4)), [GapRound("g1", ((3, 4),))]),
     (2.0, gaps("g1", (90, 95)), []),
     (2.5, gaps("g1", (90, 95)), [GapRound("g1", ((90, 95),))])],
    # gates are independent
    [(0.0, gaps("g1", (3, 3)) + gaps("g2", (7, 7)), []),
     (0.5, gaps("g1", (3, 3)), [GapRound("g1", ((3, 3),))]),
     (0.6, gaps("g2", (7, 7)), [GapRound("g2", ((7, 7),))])],
])
def test_gap_rounds_wait_the_grace_and_ask_for_every_range_once_per_round(steps):
    tracker = GapTracker(grace_s=0.5, every_s=60.0)
    for now, open_gaps, expected in steps:
        assert tracker.rounds(open_gaps, now) == expected, now


def test_a_hole_filled_and_another_opened_restarts_the_grace_and_forget_drops_a_gate():
    tracker = GapTracker(grace_s=0.5, every_s=60.0)
    assert tracker.rounds(gaps("g1", (3, 3)), 0.0) == []
    assert tracker.rounds(gaps("g1", (9, 9)), 0.4) == []  # 3 arrived, 9 is new: its own grace
    assert tracker.rounds(gaps("g1", (9, 9)), 0.6) == []
    assert tracker.open == 1 and tracker.gates() == {"g1"}
    assert tracker.rounds(gaps("g1", (9, 9)), 0.9) == [GapRound("g1", ((9, 9),))]
    tracker.forget(["g1"])
    assert tracker.open == 0 and tracker.gates() == set()
    assert tracker.rounds(gaps("g1", (9, 9)), 1.0) == []  # forgotten: a new grace


# -- tails ---------------------------------------------------------------------------------------

def tails(**kw) -> TailTracker:
    return TailTracker(grace_s=30.0, every_s=60.0, max_events=10_000, **kw)


def asks(steps) -> list[tuple[str, int, int]]:
    return [(s.gate_id, s.seq_from, s.seq_to) for s in steps if isinstance(s, TailAsk)]


def test_a_tail_below_the_claim_is_asked_for_after_the_grace_only_while_the_ledger_stays():
    t = tails()
    t.claim("g1", 100, "progress")
    assert t.poll({"g1": 90}, 0.0, WALL) == []  # the wait begins
    assert t.poll({"g1": 95}, 20.0, WALL) == []  # the ledger moved: still arriving, a new wait
    assert t.poll({"g1": 95}, 49.0, WALL) == []
    steps = t.poll({"g1": 95}, 50.0, WALL)
    assert asks(steps) == [("g1", 96, 100)] and steps[0].round == 1 and steps[0].at == WALL
    assert t.poll({"g1": 95}, 51.0, WALL) == []  # asked: the next round after replay_every_s
    assert t.poll({"g1": 100}, 52.0, WALL) == [] and t.claims == {}  # the tail arrived: done


def test_a_gate_never_seen_in_the_ledger_is_asked_from_its_first_event():
    t = tails()
    t.claim("g1", 3, "birth")
    t.poll({}, 0.0, WALL)
    assert asks(t.poll({}, 30.0, WALL)) == [("g1", 1, 3)]


def test_a_status_claiming_a_huge_sent_seq_asks_for_one_bounded_round_at_a_time():
    t = tails()
    t.claim("g1", 2**63 - 1, "progress")
    t.poll({"g1": 5}, 0.0, WALL)
    steps = t.poll({"g1": 5}, 30.0, WALL)
    assert asks(steps) == [("g1", 6, 10_005)] and steps[0].sent_seq == 2**63 - 1


@pytest.mark.parametrize("claims, expected", [
    ([(50, "progress"), (40, "will")], 50),  # a Last Will (set at the last connect: older) never lowers
    ([(50, "progress"), (60, "will")], 60),
    ([(50, "progress"), (10, "birth")], 10),  # a journal started again: its newest status says lower
    ([(50, "progress"), (None, "progress")], 50),  # a gate that does not say
])
def test_the_claim_follows_the_newest_status_but_a_will_never_lowers_it(claims, expected):
    t = tails()
    for sent_seq, reason in claims:
        t.claim("g1", sent_seq, reason)
    assert t.claims["g1"] == expected


def test_a_tail_older_than_the_last_connect_is_not_asked_for_again():
    # the gate reconnected and its birth status says every event up to 20 is acknowledged; the
    # ledger already holds them: the older, higher claim of its Last Will does not come back
    t = tails()
    t.claim("g1", 20, "birth")
    t.claim("g1", 15, "will")
    assert t.poll({"g1": 20}, 0.0, WALL) == [] and t.claims == {}
    assert t.poll({"g1": 20}, 100.0, WALL) == []


def test_repeat_rounds_back_off_doubling_then_check_for_dead_letters():
    t = tails()
    t.claim("g1", 100, "progress")
    t.poll({"g1": 90}, 0.0, WALL)
    assert asks(t.poll({"g1": 90}, 30.0, WALL)) == [("g1", 91, 100)]
    assert t.poll({"g1": 90}, 89.0, WALL) == []  # 60 s after round 1
    [check] = t.poll({"g1": 90}, 90.0, WALL)
    assert check == TailCheck("g1", WALL)
    later = WALL + dt.timedelta(seconds=90)
    step = t.answer(check, False, 90.0, later)
    assert isinstance(step, TailAsk) and step.round == 2 and step.at == later
    assert t.poll({"g1": 90}, 209.0, WALL) == []  # round 3 waits 120 s
    assert isinstance(t.poll({"g1": 90}, 210.0, WALL)[0], TailCheck)


def test_a_refused_tail_waits_the_longest_pause_or_until_the_ledger_moves():
    t = tails(max_wait_s=3600.0)
    t.claim("g1", 100, "progress")
    t.poll({"g1": 90}, 0.0, WALL)
    t.poll({"g1": 90}, 30.0, WALL)
    [check] = t.poll({"g1": 90}, 90.0, WALL)
    assert t.answer(check, True, 90.0, WALL) == TailRefused("g1", 91, 100)
    assert t.poll({"g1": 90}, 3000.0, WALL) == []  # refused: not asked again within the hour
    assert asks(t.poll({"g1": 90}, 30.0 + 3600.0, WALL)) == [("g1", 91, 100)]  # once more: the key may be fixed
    u = tails()
    u.claim("g1", 100, "progress")
    u.poll({"g1": 90}, 0.0, WALL)
    u.poll({"g1": 90}, 30.0, WALL)
    [check] = u.poll({"g1": 90}, 90.0, WALL)
    u.answer(check, True, 90.0, WALL)
    assert u.poll({"g1": 91}, 91.0, WALL) == []  # the ledger moved (a gap repair): a new wait ...
    assert asks(u.poll({"g1": 91}, 121.0, WALL)) == [("g1", 92, 100)]  # ... and a fresh first round


def test_an_answer_for_a_gate_no_longer_tracked_is_nothing():
    t = tails()
    t.claim("g1", 100, "progress")
    t.poll({"g1": 90}, 0.0, WALL)
    t.poll({"g1": 90}, 30.0, WALL)
    [check] = t.poll({"g1": 90}, 90.0, WALL)
    t.poll({"g1": 100}, 91.0, WALL)  # caught up meanwhile
    assert t.answer(check, False, 92.0, WALL) is None
