"""The uplink core (edge/sync/uplink.py) in memory: no broker, no SQLite, no sleeps; the test moves
the clock. A row leaves the outbox only on the PUBACK of its own message id (DESIGN.md, STYLE.md 7)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import edge.sync.uplink
from edge.sync import uplink as up
from tests.edge.sync.harness import NO_MATCHING_SUBSCRIBERS, NOT_AUTHORIZED, OK, Harness, of


# -- the window ------------------------------------------------------------------------------------
def test_a_backlog_goes_out_one_window_at_a_time_and_each_ack_marks_its_own_row():
    h = Harness(12, window=5)
    h.connect()
    assert h.published_seqs() == [1, 2, 3, 4, 5] and h.core.inflight == 5
    h.ack(h.link.sent[1][0])  # seq 2 only
    h.run()
    assert h.unsent() == [1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]  # seq 2 marked, nothing else
    assert h.published_seqs(5) == [6]  # the freed slot is used at once
    while h.unsent():
        h.ack_all()
        h.run()
    assert h.published_seqs() == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12] and h.core.stats["acked"] == 12


@pytest.mark.parametrize("first_mid, expect_mids", [
    (1, [1, 2, 3]),
    (65534, [65534, 65535, 1]),  # paho's ids wrap at 65535
])
def test_a_puback_marks_the_row_of_its_mid_also_when_the_ids_wrap(first_mid, expect_mids):
    h = Harness(3, window=3, first_mid=first_mid)
    h.connect()
    assert [m for m, _s in h.link.sent] == expect_mids
    h.ack(expect_mids[2])
    h.run()
    assert h.unsent() == [1, 2]


def test_a_reused_mid_still_in_the_window_names_the_new_row_and_the_old_one_goes_out_again():
    h = Harness(2, window=5)
    h.connect()
    assert h.link.sent == [(1, 1), (2, 2)]
    h.core.published(1, 7)  # the client handed out mid 1 again (wrapped) for another row
    h.ack(1)
    h.run()
    assert h.outbox[1] is False, "row 1 must not be marked by a PUBACK that names row 7"
    assert 1 in h.published_seqs(2), "row 1 is published again"


# -- lost PUBACKs and restarts ----------------------------------------------------------------------
def test_a_lost_puback_republishes_the_row_after_ack_timeout_and_a_late_ack_marks_nothing():
    h = Harness(3, window=5, ack_timeout_s=15)
    h.connect()
    lost_mid = h.link.sent[0][0]
    h.ack(h.link.sent[1][0])
    h.ack(h.link.sent[2][0])
    h.run()
    assert h.unsent() == [1]
    h.advance(14.9)
    assert of(up.Publish, h.run()) == [], "not before ack_timeout_s"
    h.advance(0.2)
    done = h.run()
    assert [n.event for n in of(up.Notice, done)] == ["uplink.ack_timeout"]
    assert [p.seq for p in of(up.Publish, done)] == [1] and h.core.stats["ack_timeouts"] == 1
    h.ack(lost_mid)  # the old mid's PUBACK after all: it names nothing any more
    h.run()
    assert h.unsent() == [1]
    h.ack(h.link.sent[-1][0])
    h.run()
    assert h.unsent() == []


def test_a_broker_restart_mid_window_leaves_the_resend_to_the_client_then_gives_up_after_ack_timeout():
    h = Harness(5, window=5, ack_timeout_s=15)
    h.connect()
    h.advance(10)
    h.core.disconnected(h.now)
    h.advance(30)  # down longer than ack_timeout_s: nothing expires while disconnected
    assert of(up.Publish, h.run()) == []
    done = h.connect()
    assert of(up.SendStatus, done) == [up.SendStatus("birth")] and h.core.stats["connects"] == 2
    assert of(up.Publish, done) == [] and h.core.inflight == 5, "the client resends its own window"
    h.ack(h.link.sent[0][0])  # the resent first message is acknowledged under its old mid
    h.run()
    assert h.unsent() == [2, 3, 4, 5]
    h.advance(15.1)
    assert [p.seq for p in of(up.Publish, h.run())] == [2, 3, 4, 5], "no PUBACK since: published again"


@pytest.mark.parametrize("tail", [(1, 3), (2, 5)])
def test_a_tail_older_than_the_last_connect_is_published_again_before_the_outbox(tail):
    """The office asks again for rows the broker acknowledged before it restarted (and lost):
    they are already marked sent, and go out again ahead of the rows still unsent."""
    h = Harness(5, window=10)
    h.connect()
    h.ack_all()
    h.run()
    assert h.unsent() == []
    h.core.disconnected(h.now)
    h.connect()
    h.append(2)  # rows 6 and 7 journaled since
    first, last = tail
    h.core.replay([(s, h.body(s)) for s in range(first, last + 1)])
    start = len(h.link.sent)
    h.run()
    assert h.published_seqs(start) == [*range(first, last + 1), 6, 7]
    assert h.core.stats["replayed"] == last - first + 1


# -- pauses ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("rc, why, pause", [
    (NOT_AUTHORIZED, "rejected", 5.0),
    (NO_MATCHING_SUBSCRIBERS, "unrouted", 1.0),
])
def test_a_refused_or_unrouted_row_stays_unsent_and_publishing_pauses(rc, why, pause):
    h = Harness(3, window=1, reject_backoff_s=5.0, unrouted_backoff_s=1.0)
    h.connect()
    h.ack(h.link.sent[0][0], rc)
    done = h.run()
    assert of(up.Pause, done) == [up.Pause(why, pause, 1, rc)]
    assert h.unsent() == [1, 2, 3] and of(up.Publish, done) == []
    assert h.core.wake_at == pytest.approx(h.now + pause)
    h.advance(pause - 0.01)
    assert of(up.Publish, h.run()) == []
    h.advance(0.02)
    assert h.published_seqs(1) == [] and [p.seq for p in of(up.Publish, h.run())] == [1], "the same row first"
    h.ack(h.link.sent[-1][0], OK)
    h.run()
    assert h.unsent() == [2, 3]


def test_unrouted_pauses_double_up_to_the_maximum_and_drop_back_on_a_routed_puback():
    h = Harness(1, window=1, unrouted_backoff_s=1.0, unrouted_backoff_max_s=3.0)
    h.connect()
    pauses = []
    for _ in range(4):
        h.ack(h.link.sent[-1][0], NO_MATCHING_SUBSCRIBERS)
        pauses += [p.seconds for p in of(up.Pause, h.run())]
        h.advance(10)
        h.run()
    assert pauses == [1.0, 2.0, 3.0, 3.0] and h.core.stats["unrouted"] == 4
    h.ack(h.link.sent[-1][0], OK)  # the office is back
    h.append(1)
    h.run()
    h.ack(h.link.sent[-1][0], NO_MATCHING_SUBSCRIBERS)
    assert [p.seconds for p in of(up.Pause, h.run())] == [1.0]


def test_the_rest_of_a_window_coming_back_unrouted_does_not_lengthen_the_pause():
    h = Harness(4, window=4, unrouted_backoff_s=1.0)
    h.connect()
    h.ack_all(NO_MATCHING_SUBSCRIBERS)
    assert [p.seconds for p in of(up.Pause, h.run())] == [1.0] and h.core.stats["unrouted"] == 4
    assert h.unsent() == [1, 2, 3, 4]


def test_an_unrouted_snapshot_request_is_sent_again_after_the_pause():
    h = Harness(0, unrouted_backoff_s=0.5)
    h.connect()
    h.core.request(b"snapshot please")
    h.run()
    (mid, body), = h.link.requests
    h.ack(mid, NO_MATCHING_SUBSCRIBERS)
    assert of(up.Pause, h.run()) == [up.Pause("request_unrouted", 0.5, None, NO_MATCHING_SUBSCRIBERS)]
    h.advance(0.6)
    h.run()
    assert [b for _m, b in h.link.requests] == [b"snapshot please", b"snapshot please"]


def test_the_rate_limit_holds_rows_back_and_says_when_to_poll_again():
    h = Harness(10, window=10, rate=10, burst=2)
    h.connect()
    assert h.published_seqs() == [1, 2] and h.core.wake_at == pytest.approx(h.now + 0.1)
    h.advance(0.1)
    h.run()
    assert h.published_seqs() == [1, 2, 3]


# -- marks ---------------------------------------------------------------------------------------------
def test_marks_go_in_batches_of_acknowledged_rows_only():
    h = Harness(6, window=6, mark_batch=500, mark_every_s=0.1)
    h.connect()
    for mid, seq in h.link.sent:
        if seq % 2:
            h.ack(mid)
    h.run()
    marks = of(up.MarkSent, h.commands)
    assert marks == [up.MarkSent((1, 3, 5))], "one batch, only the acknowledged seqs"


def test_a_failed_mark_keeps_the_rows_out_of_the_window_and_is_retried():
    h = Harness(3, window=3)
    h.connect()
    h.fail_marks = True
    h.ack_all()
    done = h.run()
    assert [n.event for n in of(up.Notice, done)] == ["uplink.marks_deferred"]
    h.append(1)
    h.advance(1)
    assert [p.seq for p in of(up.Publish, h.run())] == [4], "acknowledged rows are never published again"
    h.fail_marks = False
    h.advance(up.MARK_RETRY_S)
    done = h.run()
    assert [n.event for n in of(up.Notice, done)] == ["uplink.marks_recovered"]
    assert h.unsent() == [4] and h.core.stats["mark_failures"] == 1


# -- the status beacon ---------------------------------------------------------------------------------
def test_a_progress_status_follows_sent_seq_at_most_every_status_every_s():
    h = Harness(3, window=1, status_every_s=30)
    h.connect()
    assert h.link.statuses[:2] == [("birth", 0), ("progress", 0)]
    h.ack_all()
    h.run()
    assert h.link.statuses[-1] == ("progress", 0), "sent_seq moved to 1 but the last status is recent"
    h.advance(30)
    h.run()
    assert h.link.statuses[-1] == ("progress", 1)
    h.advance(60)
    n = len(h.link.statuses)
    h.run()
    assert len(h.link.statuses) == n, "nothing moved: no status"


def test_a_change_of_health_sends_a_status_too():
    h = Harness(0, status_every_s=1)
    h.connect()
    n = len(h.link.statuses)
    h.advance(2)
    for c in h.core.poll(h.now, (False, None)):
        h.execute(c)
    assert len(h.link.statuses) == n + 1


def test_nothing_is_published_while_disconnected():
    h = Harness(3)
    assert of(up.Publish, h.run()) == [] and h.core.inflight == 0


# -- purity --------------------------------------------------------------------------------------------
def test_the_core_imports_no_io_library():
    code = "import json, sys\nimport edge.sync.uplink\nprint(json.dumps(sorted(sys.modules)))\n"
    root = Path(__file__).resolve().parents[3]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root)
    loaded = json.loads(out.stdout)
    assert [m for m in loaded if m.split(".")[0] in ("paho", "sqlite3", "socket", "sqlalchemy", "structlog")] == []


def test_the_core_reads_no_clock():
    tree = ast.parse(Path(edge.sync.uplink.__file__).read_text(encoding="utf-8"))
    reads = [node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)
             and node.attr in {"time", "monotonic", "monotonic_ns", "perf_counter", "now", "utcnow"}]
    imports = [a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names]
    assert reads == [] and "time" not in imports


def test_while_a_mark_is_being_committed_new_acks_wait_for_the_next_batch():
    """The driver commits marks on another thread: acks arriving meanwhile go in the next batch
    (after ``mark_every_s``), not in one small transaction per poll."""
    h = Harness(8, window=8, mark_batch=500, mark_every_s=0.1)
    h.connect()
    mids = [m for m, _s in h.link.sent]
    h.ack(mids[0])
    first = of(up.MarkSent, h.core.poll(h.now))  # not answered yet: being committed
    assert first == [up.MarkSent((1,))]
    h.ack(mids[1])
    h.ack(mids[2])
    assert of(up.MarkSent, h.core.poll(h.now + 0.05)) == []
    h.core.marked((1,), 1, h.now + 0.06)
    assert of(up.MarkSent, h.core.poll(h.now + 0.1)) == [up.MarkSent((2, 3))]


# -- reading on after the rows handed out ----------------------------------------------------------
def test_each_read_starts_after_the_rows_handed_out_so_rows_in_flight_are_not_read_again():
    h = Harness(40, window=5, read_ahead=5, mark_batch=1000, mark_every_s=60)
    h.connect()
    for _ in range(12):
        h.ack_all()
        h.run()
    assert h.unsent() == [] and h.published_seqs() == list(range(1, 41))
    assert h.reads[0][0] == 0
    for (after, _seqs), (_a, earlier) in zip(h.reads[1:], h.reads):
        assert after == earlier[-1] if earlier else True  # on from the last row of the read before
    returned = [s for _after, seqs in h.reads for s in seqs]
    assert len(returned) == len(set(returned)) == 40, "no row was read twice"


def test_a_refused_row_makes_the_next_read_start_at_the_lowest_unsent_row():
    h = Harness(20, window=5, read_ahead=5, reject_backoff_s=5)
    h.connect()
    mids = [m for m, _s in h.link.sent]
    for mid in mids[:2]:
        h.ack(mid)
    h.ack(mids[2], NOT_AUTHORIZED)  # row 3 refused
    h.run()
    h.advance(6)
    reads = len(h.reads)
    h.ack_all()
    h.run()
    assert h.reads[reads][0] == 0, "the read after a refusal starts again from the lowest unsent row"
    assert h.published_seqs(5)[0] == 3, "the refused row goes out again before the later rows"
    while h.unsent():
        h.ack_all()
        h.run()
    assert h.published_seqs().count(3) == 2


def test_rows_dropped_from_the_read_ahead_for_a_priority_row_are_read_again():
    h = Harness(30, window=4, read_ahead=10, mark_batch=1000, mark_every_s=60)
    h.connect()
    assert h.published_seqs() == [1, 2, 3, 4]  # 5..14 wait in the read-ahead
    h.core.reread()  # a priority row was journaled: the read-ahead is dropped
    while h.unsent():
        h.ack_all()
        h.run()
    assert sorted(set(h.published_seqs())) == list(range(1, 31)), "no row was lost with the read-ahead"
    assert len(h.published_seqs()) == 30, "and none published twice"
