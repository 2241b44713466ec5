"""kill -9 of a real gate process at random moments during a burst of reads: every read that was
shown a decision is in the journal exactly once; none is lost, none doubled (DESIGN.md)."""

from __future__ import annotations

import fcntl
import json
import os
import random
import signal
import sqlite3
import struct
import termios
import time

import msgspec
import pytest

from edge.loop import INBOX_SIZE
from testkit.gate_process import kill_gate, start_gate, start_gate_and_wait, write_gate_config
from wire.events import Event, verify

pytestmark = pytest.mark.slow


def shown_lines(root) -> int:
    path = root / "shown.jsonl"
    return path.read_bytes().count(b"\n") if path.exists() else 0


def read_journal(path):
    conn = sqlite3.connect(path)
    rows = conn.execute("SELECT seq, event_id, body FROM journal ORDER BY seq").fetchall()
    conn.close()
    return [(seq, eid, msgspec.json.decode(body, type=Event)) for seq, eid, body in rows]


def test_sigkill_during_a_burst_loses_and_doubles_no_shown_decision(tmp_path):
    rng = random.Random(int(os.environ.get("CRASH_SEED", "20260315")))
    cfg = write_gate_config(tmp_path, key=b"crash-key")
    fifo = os.open(tmp_path / "reads.fifo", os.O_RDWR)  # keeps unread lines alive across restarts
    # unique UIDs (no debounce), a few known control cards, and some garbage lines
    script = [f"F1{i:06X}" for i in range(240)]
    script[::20] = [f"0A04A100{i:02X}" for i in range(1, 13)]
    script[7::50] = ["not-a-uid-%d" % i for i in range(len(script[7::50]))]
    kills = 0
    sent = 0
    try:
        while sent < len(script):
            proc = start_gate(cfg)
            chunk = script[sent:sent + rng.randint(20, 60)]
            sent += len(chunk)
            before = shown_lines(tmp_path)
            os.write(fifo, "".join(line + "\n" for line in chunk).encode())
            deadline = time.monotonic() + 30
            while shown_lines(tmp_path) == before and time.monotonic() < deadline:
                time.sleep(0.005)  # wait for the burst to start being decided...
            time.sleep(rng.uniform(0.0, 0.12))  # ...then kill somewhere inside it
            kill_gate(proc, signal.SIGKILL)
            kills += 1
        proc = start_gate_and_wait(cfg)  # a last clean run drains whatever is left in the pipe
        deadline = time.monotonic() + 60
        shown_count = -1
        while time.monotonic() < deadline:  # wait until the gate goes quiet
            time.sleep(1.0)
            count = len((tmp_path / "shown.jsonl").read_text().splitlines())
            if count == shown_count and _unread(fifo) == 0:
                break
            shown_count = count
        assert kill_gate(proc, signal.SIGTERM) == 0  # graceful stop exits 0
    finally:
        os.close(fifo)

    shown = [json.loads(line) for line in (tmp_path / "shown.jsonl").read_text().splitlines()]
    journal = read_journal(tmp_path / "state" / "journal.db")
    seqs = [s for s, _, _ in journal]
    assert seqs == list(range(1, len(seqs) + 1))  # gapless across every kill
    ids = [eid for _, eid, _ in journal]
    assert len(set(ids)) == len(ids)
    assert all(verify(ev, b"crash-key") for _, _, ev in journal)
    by_id = {eid: ev for _, eid, ev in journal}
    taps = [ev for _, _, ev in journal if ev.payload.__struct_config__.tag == "tap"]

    assert kills >= 5 and len(shown) > 0
    for line in shown:  # every decision shown is journaled, exactly once, with what was shown
        ev = by_id[line["event_id"]]
        assert ids.count(line["event_id"]) == 1
        assert ev.seq == line["seq"] and ev.payload.decision == line["outcome"]
    tap_uids = [ev.payload.uid for ev in taps]
    assert len(tap_uids) == len(set(tap_uids))  # no read journaled twice
    shown_ids = {line["event_id"] for line in shown}
    unshown = [ev for ev in taps if ev.event_id not in shown_ids]
    assert len(unshown) <= kills * INBOX_SIZE  # at most the batch in flight at each kill (group commit)
    # reads waiting in the gate's bounded inbox when a kill came were never shown (like a tap that
    # got no light: the worker taps again); everything else was decided
    assert len(taps) >= len(script) - kills * (INBOX_SIZE + 2)
    print(f"kills={kills} reads={len(script)} journaled={len(taps)} shown={len(shown)} "
          f"journaled_not_shown={len(unshown)}")
    # Distinct boot ids: one per process start that got to journal something
    assert len({ev.boot_id for _, _, ev in journal}) >= 2


def _unread(fd: int) -> int:
    """Bytes still waiting in the pipe (FIONREAD): 0 once the gate has read every line."""
    return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]


def _committed(root):
    """(seq, event_id, event) of every row committed in the gate's journal (read with the gate dead)."""
    return read_journal(root / "state" / "journal.db")


def test_sigkill_in_the_middle_of_group_commits_shows_nothing_uncommitted_and_loses_no_event(tmp_path):
    """Bursts written at once fill the inbox, so the gate decides them in batches (one journal
    transaction each); a kill lands inside one. At each kill: every decision shown is in the
    committed journal (no light before its commit). After a clean restart: the store has applied
    every committed event, once (applied_seq = last seq; each flagged tap's pending flag is there)."""
    rng = random.Random(int(os.environ.get("CRASH_SEED", "20261201")))
    cfg = write_gate_config(tmp_path, key=b"crash-key")
    fifo = os.open(tmp_path / "reads.fifo", os.O_RDWR)
    known = [f"0A04A100{i:02X}" for i in range(1, 13)]  # demo control cards (denied: not today's escala)
    kills, sent, batched = 0, 0, []
    try:
        for burst in range(8):
            proc = start_gate(cfg)
            chunk = [f"F2{burst:02X}{i:04X}" if i % 4 else known[(burst * 3 + i // 4) % len(known)]
                     for i in range(rng.randint(40, 80))]
            sent += len(chunk)
            before = shown_lines(tmp_path)
            os.write(fifo, "".join(line + "\n" for line in chunk).encode())
            deadline = time.monotonic() + 30
            while shown_lines(tmp_path) == before and time.monotonic() < deadline:
                time.sleep(0.002)
            time.sleep(rng.uniform(0.0, 0.05))
            kill_gate(proc, signal.SIGKILL)
            kills += 1
            committed = {eid for _s, eid, _e in _committed(tmp_path)}
            shown = [json.loads(line) for line in (tmp_path / "shown.jsonl").read_text().splitlines()]
            assert all(line["event_id"] in committed for line in shown)  # nothing shown uncommitted
        proc = start_gate_and_wait(cfg)  # a clean run: re-applies the journal, drains the rest of the pipe
        deadline, count = time.monotonic() + 60, -1
        while time.monotonic() < deadline:
            time.sleep(1.0)
            now_count = shown_lines(tmp_path)
            if now_count == count and _unread(fifo) == 0:
                break
            count = now_count
        assert kill_gate(proc, signal.SIGTERM) == 0
    finally:
        os.close(fifo)

    for line in (tmp_path / "gate.log").read_text().splitlines():
        if line.startswith("{") and '"gate_decision"' in line:
            batched.append(json.loads(line).get("batch", 1))
    journal = _committed(tmp_path)
    assert [s for s, _e, _v in journal] == list(range(1, len(journal) + 1))
    assert all(verify(ev, b"crash-key") for _s, _e, ev in journal)
    shown = [json.loads(line) for line in (tmp_path / "shown.jsonl").read_text().splitlines()]
    by_id = {eid: ev for _s, eid, ev in journal}
    assert all(by_id[line["event_id"]].seq == line["seq"] for line in shown)
    taps = [ev for _s, _e, ev in journal if ev.payload.__struct_config__.tag == "tap"]
    unique = [ev.payload.uid for ev in taps if ev.payload.uid.startswith("F2")]
    assert unique and len(set(unique)) == len(unique)  # no read journaled twice
    assert max(batched) > 1  # the reads were decided in group commits
    conn = sqlite3.connect(tmp_path / "state" / "store.db")
    applied = int(conn.execute("SELECT value FROM meta WHERE key = 'applied_seq'").fetchone()[0])
    flags = set(conn.execute("SELECT uid, flag FROM pending_flags").fetchall())
    conn.close()
    assert applied == journal[-1][0]  # every committed event is in the store
    expected = {(ev.payload.uid, f) for ev in taps for f in ev.payload.flags if f == "NOT_DISPATCHED"}
    assert expected and expected <= flags  # each committed tap's effect is there, kills or not
    print(f"kills={kills} reads={sent} journaled={len(taps)} shown={len(shown)} "
          f"largest_batch={max(batched)}")
