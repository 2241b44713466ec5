"""The writer process commits the batches already waiting for it together (writer_process.coalesce), in
arrival order, and never takes a stop or an error into a group."""

from __future__ import annotations

import queue

import pytest

from central.ingest.writer_process import _NOTHING, coalesce


def batch(batch_id: int, n: int) -> tuple:
    return (batch_id, [("t", b"%d" % i) for i in range(n)], None)


def inbox(*entries) -> queue.SimpleQueue:
    q: queue.SimpleQueue = queue.SimpleQueue()
    for e in entries:
        q.put(e)
    return q


@pytest.mark.parametrize("waiting, limit, ids, held", [
    ((), 5000, [1], _NOTHING),  # nothing waiting: the batch alone
    ((batch(2, 10), batch(3, 10)), 5000, [1, 2, 3], _NOTHING),  # all waiting ones, in order
    ((batch(2, 10), batch(3, 10)), 25, [1, 2], 3),  # the one that does not fit is held for next
    ((batch(2, 10), None, batch(3, 10)), 5000, [1, 2], None),  # the stop ends the group
    ((EOFError("gone"), batch(2, 1)), 5000, [1], EOFError),
])
def test_waiting_batches_join_in_order_within_the_limit(waiting, limit, ids, held):
    q = inbox(*waiting)
    group, got = coalesce(batch(1, 10), q, limit)
    assert [b[0] for b in group] == ids
    if held is _NOTHING or held is None:
        assert got is held
    elif isinstance(held, int):
        assert got[0] == held
    else:
        assert isinstance(got, held)
