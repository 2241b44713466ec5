"""A gate's stop (SIGTERM) never waits for a reader of its files, loses nothing journaled and logs
each of its steps (edge.service ``close``; docs/operations.md, "Stopping a gate").

The cause found (a fresh-clone CI run, 2026-12-07: a field gate took over 30 s to end after
SIGTERM): the journal's and the store's close ran ``wal_checkpoint(TRUNCATE)``, which waits for
every reader on an older snapshot (the watchman's screen follows the journal, ``verify-journal``,
a backup) for the connection's whole busy timeout, 30 s, silently."""

from __future__ import annotations

import json
import signal
import sqlite3
import threading
from contextlib import closing

import pytest

from edge import journal as journal_module
from edge import store_file
from edge.journal import Journal
from edge.rules.model import Now
from edge.store import Store
from testkit.gate_process import start_gate_and_wait, write_gate_config
from testkit.wait import wait_until
from wire.events import TapPayload

from .conftest import DEMO, GATE, KEY, SHIP, T0

NOW = Now(wall=T0, mono_ns=5, clock_trusted=True)


def _hold_snapshot(path) -> sqlite3.Connection:
    """A reader on ``path`` inside a read transaction: its snapshot stays until it ends."""
    reader = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM sqlite_master").fetchone()
    return reader


def _close_beside(close, reader: sqlite3.Connection) -> bool:
    """Run ``close`` in a thread while ``reader`` holds its snapshot; True when it returned with the
    snapshot still held (a bounded wait of 180 s, not a time limit: the old close waited for the
    reader for the busy timeout, made an hour here, so it returned only once the reader ended)."""
    done = threading.Event()
    thread = threading.Thread(target=lambda: (close(), done.set()), daemon=True)
    thread.start()
    returned = done.wait(180)
    reader.execute("COMMIT")
    reader.close()
    thread.join(180)
    return returned


def test_the_journal_s_close_does_not_wait_for_a_reader_and_keeps_every_event(tmp_path, monkeypatch):
    monkeypatch.setattr(journal_module, "BUSY_TIMEOUT_S", 3600.0)  # a held reader would hold the close
    path = tmp_path / "journal.db"
    j = Journal(path, port="santos", gate_id=GATE, key=KEY, boot_id="boot-1")
    first = j.append(TapPayload(uid="0A04A10001", reader_id="r1", reader_kind="control", decision="admit"),
                     now=NOW)
    reader = _hold_snapshot(path)
    second = j.append(TapPayload(uid="0A04A10002", reader_id="r1", reader_kind="control", decision="deny"),
                      now=NOW)
    assert _close_beside(j.close, reader)
    again = Journal(path, port="santos", gate_id=GATE, key=KEY, boot_id="boot-2")
    try:
        assert [e.event_id for e in again.events_between(1, 2)] == [first.event_id, second.event_id]
        assert again.outbox_depth() == 2  # unacknowledged: both still to send at the next start
    finally:
        again.close()


def test_the_store_s_close_does_not_wait_for_a_reader_and_keeps_its_copy(tmp_path, monkeypatch):
    monkeypatch.setattr(store_file, "BUSY_TIMEOUT_S", 3600.0)
    path = tmp_path / "store.db"
    s = Store(path, gate_id=GATE, ship=SHIP, boot_id="boot-1")
    reader = _hold_snapshot(path)
    s.load_csv_files(DEMO / "workers.csv", DEMO / "cards.csv", DEMO / "escala.csv", at=T0)
    assert _close_beside(s.close, reader)
    again = Store(path, gate_id=GATE, ship=SHIP, boot_id="boot-2")
    try:
        assert again.versions()["roster"][0] > 0 and again.card("0A04A10001") is not None
    finally:
        again.close()


def _log_events(log_path) -> list[dict]:
    out = []
    for line in log_path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


@pytest.mark.parametrize("held", [False, True], ids=["alone", "screen_reading"])
def test_a_sigterm_d_gate_logs_each_stop_step_in_order_and_a_reader_does_not_hold_it(tmp_path, held):
    config = write_gate_config(tmp_path)
    proc = start_gate_and_wait(config)
    journal_db = tmp_path / "state" / "journal.db"
    reader = _hold_snapshot(journal_db) if held else None
    with open(tmp_path / "reads.fifo", "w") as fifo:  # a read journaled after the reader's snapshot
        fifo.write("0A04A10001\n")
    shown = tmp_path / "shown.jsonl"
    wait_until(lambda: shown.exists() and shown.read_text().strip(), timeout=120, what="the read shown")
    proc.send_signal(signal.SIGTERM)
    try:
        assert proc.wait(180) == 0  # a bounded wait, not a time limit (the reader still holds)
    finally:
        if reader is not None:
            reader.execute("COMMIT")
            reader.close()
    events = _log_events(tmp_path / "gate.log")
    names = [e["event"] for e in events]
    stopping = names.index("gate_stopping")
    steps = [e["step"] for e in events[stopping:] if e["event"] == "gate_stop_step"]
    assert steps == ["heartbeat", "journal", "store", "state_lock"]  # no [mqtt]: no link to stop
    assert names[-1] == "gate_stopped"
    assert events[stopping]["signal"] == "SIGTERM"
    assert events[stopping]["readers_closed_s"] <= events[stopping]["loop_ended_s"]  # closed, then the loop ended
    left = [e for e in events[stopping:] if e["event"] == "sqlite_checkpoint_left"]
    assert [e["path"] for e in left] == ([str(journal_db)] if held else [])
    with closing(sqlite3.connect(f"file:{journal_db}?mode=ro", uri=True)) as db:  # nothing lost
        kinds = [r[0] for r in db.execute("SELECT kind FROM journal ORDER BY seq")]
    assert "tap" in kinds
