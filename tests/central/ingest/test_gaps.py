"""Gap repair in one round, and a journal quarantine's lost range that is never chased."""

from __future__ import annotations

import datetime as dt
import time

import pytest
from sqlalchemy import select

from central.ingest import event_store
from central.ledger.schema import gate_losses
from testkit.journal_faults import tear
from tests.central.ingest.conftest import now
from testkit.wait import wait_until
from tests.central.ingest.payloads import tap

pytestmark = pytest.mark.mqtt


def _missing(seqs, top):
    have = set(seqs)
    return [s for s in range(1, top + 1) if s not in have]


def test_every_hole_of_a_gate_is_asked_for_and_filled_in_one_round(broker, office, make_gate):
    gate = make_gate("g1")
    gate.journal.append_many([tap(i) for i in range(300)], now=now())
    # 40 holes that never reach the broker: single seqs, a run of 5, a run of 50 (marked sent in
    # the journal, as when the broker lost them after its PUBACK)
    holes = list(range(3, 120, 3)) + list(range(150, 155)) + list(range(200, 250))
    gate.journal.mark_sent(holes)
    ranges = len(range(3, 120, 3)) + 2
    ingest = office.start(broker, gap_grace_s=0.5, replay_every_s=60.0)
    gate.start(broker, window=50)
    wait_until(lambda: len(office.events("g1")) == 300 - len(holes), what="the rest arrived")
    t0 = time.monotonic()
    wait_until(lambda: len(office.events("g1")) == 300, timeout=60, what="every hole filled")
    elapsed = time.monotonic() - t0
    assert sorted(r.seq for r in office.events("g1")) == list(range(1, 301))
    wait_until(lambda: office.contiguous("g1") == 300, what="contiguous prefix advanced")
    stats = ingest.workers[0].stats
    assert stats["replay_rounds"] == 1, "one round asked for every range"  # replay_every_s is 60 s
    assert stats["replay_requests"] == ranges
    assert gate.sync.stats["replayed"] == len(holes)  # exactly the holes, nothing else
    print(f"{len(holes)} missing events in {ranges} ranges filled {elapsed:.2f} s after the rest arrived")


def test_update_progress_returns_every_range_bounded_and_skips_lost_ranges(office):
    """Real SQLite ledger: the bounds (ranges, events) and a gate_losses range filling a hole."""
    from tests.central.ingest.conftest import PORT
    from central.ledger.schema import events

    t = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    present = [s for s in range(1, 400) if s % 4 != 0] + [5000]  # 99 single holes, then 400..4999
    with office.engine.begin() as c:
        c.execute(events.insert(), [
            dict(event_id=f"e{s}", port=PORT, gate_id="g1", boot_id="b", seq=s, occurred_at=t, clock_trusted=True,
                 mono_ns=0, type="tap", payload={}, mac="m", raw=b"", received_at=t) for s in present
        ])
        gaps = event_store.update_progress(c, ["g1"], t)
        assert len(gaps) == event_store.MAX_GAP_RANGES == 50
        assert [(g.seq_from, g.seq_to) for g in gaps[:2]] == [(4, 4), (8, 8)]
        gaps = event_store.update_progress(c, ["g1"], t, max_ranges=200, max_events=130)
        assert len(gaps) == 100 and sum(g.seq_to - g.seq_from + 1 for g in gaps) == 130
        assert (gaps[-1].seq_from, gaps[-1].seq_to) == (400, 430)  # the last range cut to fit
        c.execute(gate_losses.insert(), [
            dict(gate_id="g1", seq_from=4, seq_to=7, event_id="a1", detail="", recorded_at=t),
            dict(gate_id="g1", seq_from=400, seq_to=4999, event_id="a2", detail="", recorded_at=t),
        ])
        gaps = event_store.update_progress(c, ["g1"], t, max_ranges=200)
        assert (gaps[0].seq_from, gaps[0].seq_to) == (8, 8) and gaps[-1].seq_to == 396 and len(gaps) == 98
    assert office.contiguous("g1") == 7


def test_scan_sequences_ignores_losses_beyond_a_limited_window():
    # seqs known only up to 10 (a LIMIT-ed read): a loss starting at 50 says nothing about 11..49
    assert event_store.scan_sequences(0, range(1, 11), [(50, 60)], window_end=10) == (10, [])
    assert event_store.scan_sequences(0, [1, 2, 5], [(3, 3)]) == (3, [(4, 4)])
    assert event_store.scan_sequences(2, [5], [(1, 4)]) == (5, [])




def test_an_office_receiving_a_quarantine_alert_stops_asking_for_the_lost_range(tmp_path, broker, office, make_gate):
    from edge.journal import Journal

    ingest = office.start(broker, gap_grace_s=0.3, replay_every_s=0.5)
    gate = make_gate("g1")
    gate.start(broker)
    for i in range(5):
        gate.journal.append(tap(i), now=now())
    gate.sync.notify()
    wait_until(lambda: office.contiguous("g1") == 5, what="1..5 in the ledger")
    wait_until(lambda: gate.journal.outbox_depth() == 0, what="1..5 marked sent")
    gate.stop()
    for i in range(5, 9):  # 6..9: journaled, never sent, then the file is corrupted
        gate.journal.append(tap(i), now=now())
    gate.journal.close()
    path = tmp_path / "g1.journal"
    tear(path)
    gate.journal = Journal(path, port="santos", gate_id="g1", key=gate.key, boot_id="boot-2")
    assert gate.journal.quarantined_to is not None
    gate.start(broker)
    wait_until(lambda: office.contiguous("g1") == 10, what="the alert (seq 10) closes the lost range")
    with office.engine.connect() as c:
        rows = c.execute(select(gate_losses.c.gate_id, gate_losses.c.seq_from, gate_losses.c.seq_to)).all()
    assert rows == [("g1", 6, 9)]
    gate.journal.append(tap(99), now=now())
    gate.sync.notify()
    wait_until(lambda: office.contiguous("g1") == 11, what="numbering goes on after the loss")
    time.sleep(1.5)  # several gap scans and replay periods (0.3 s / 0.5 s)
    assert ingest.workers[0].stats["replay_requests"] == 0
    assert gate.sync.stats["replayed"] == 0
    assert ingest.workers[0].stats["losses_recorded"] == 1
    assert sorted(r.seq for r in office.events("g1")) == [1, 2, 3, 4, 5, 10, 11]
