"""The sent-seq ranges of the journal (pure): merging PUBACK groups in any order."""

from __future__ import annotations

import random

from edge.sent_ranges import seq_runs
from edge.sent_ranges import SentRanges


def _as_set(ranges: SentRanges) -> set[int]:
    return {s for lo, hi in ranges for s in range(lo, hi + 1)}


def test_construction_merges_overlapping_and_adjacent_ranges_and_drops_empty_ones():
    r = SentRanges([(5, 7), (1, 2), (3, 3), (6, 9), (20, 19), (12, 12)])
    assert list(r) == [(1, 3), (5, 9), (12, 12)] and len(r) == 3 and r.count() == 9


def test_in_order_acks_grow_one_range_and_rewrite_only_it():
    r = SentRanges([(1, 100)])
    new, added, touched, gone = r.merge([(101, 600)])
    assert list(new) == [(1, 600)] and added == 500 and touched == [(1, 600)] and gone == []
    assert list(r) == [(1, 100)]  # the old set is left as it was (the journal swaps after COMMIT)


def test_out_of_order_acks_leave_holes_that_later_acks_close():
    r = SentRanges()
    r, added, touched, gone = r.merge(seq_runs([5, 3, 9]))
    assert list(r) == [(3, 3), (5, 5), (9, 9)] and added == 3
    assert not r.covers(4) and r.first_unsent(3) == 4 and r.first_unsent(1) == 1
    r, added, touched, gone = r.merge(seq_runs([4, 6, 7, 8]))
    assert list(r) == [(3, 9)] and added == 4 and touched == [(3, 9)] and gone == [5, 9]
    r, added, touched, gone = r.merge(seq_runs([3, 4, 9]))  # all already sent
    assert added == 0 and touched == [] and gone == []


def test_a_merge_never_adds_a_seq_that_was_not_passed_in():
    rng = random.Random(7)
    ranges, truth = SentRanges(), set()
    for _ in range(300):
        group = {rng.randrange(1, 400) for _ in range(rng.randrange(1, 12))}
        new, added, _touched, _gone = ranges.merge(seq_runs(group))
        assert added == len(group - truth)
        truth |= group
        ranges = new
        assert _as_set(ranges) == truth and ranges.count() == len(truth)
        assert all(b[0] > a[1] + 1 for a, b in zip(list(ranges), list(ranges)[1:]))  # disjoint, not adjacent


def test_next_range_and_first_unsent():
    r = SentRanges([(1, 4), (10, 20)])
    assert r.next_range(0) == (1, 4) and r.next_range(1) == (10, 20) and r.next_range(10) is None
    assert r.first_unsent(1) == 5 and r.first_unsent(12) == 21 and r.first_unsent(7) == 7
