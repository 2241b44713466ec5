"""A gate whose ``store.db`` or ``journal.db`` is locked by another process at start: the lock is
logged at once (one line naming the file and what to do), tried again every ``LOCK_RETRY_S`` and
logged each time, SIGTERM ends the wait at once (exit 0), a lock that never clears is one line and
exit 1 after ``lock_wait_s``; no tap is decided while the files are not open (docs/gate.md "Files
locked by another process"). Real ``portgate edge run`` processes, a real second SQLite connection
holding the write lock (``BEGIN EXCLUSIVE``)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from edge.config import load_gate_config
from edge.indicator import RecordingIndicator
from edge.service import GateService
from edge.store import Store
from portgate.errors import StoreLocked
from testkit.gate_process import kill_gate, start_gate, write_gate_config
from testkit.wait import wait_until

from .conftest import GATE

ROOT = Path(__file__).resolve().parents[2]


def assert_gave_up(out: subprocess.CompletedProcess, name: str, path: Path) -> list[dict]:
    """A gate start that gave up on a locked ``name`` (``path``): exit 1, one ``portgate:`` line
    naming the file and how to find its holder, no traceback; returns its ``state_file_locked``
    log events (at least two: logged at once, tried again)."""
    assert out.returncode == 1, out.stderr
    assert "Traceback" not in out.stderr
    lines = [x for x in out.stderr.splitlines() if x.startswith("portgate:")]
    assert len(lines) == 1
    assert lines[0].startswith(f"portgate: {name} is locked by another process (another gate service running?): "
                               f"{path}; still locked after ")
    assert lines[0].endswith(f"s, gave up; stop that process (fuser -v {path} names it)")
    tries = [json.loads(x) for x in out.stderr.splitlines() if '"state_file_locked"' in x]
    assert len(tries) >= 2
    return tries


def _gate(tmp_path: Path, *, lock_wait_s: float) -> Path:
    """A standalone gate.toml whose store and journal exist (one start and stop in process)."""
    toml = write_gate_config(tmp_path)
    toml.write_text(toml.read_text().replace('state_dir = "state"',
                                             f'state_dir = "state"\nlock_wait_s = {lock_wait_s}'))
    GateService(load_gate_config(toml), indicator=RecordingIndicator()).close()
    return toml


@contextlib.contextmanager
def _locked(path: Path):
    """Another process's write transaction on ``path`` (``BEGIN EXCLUSIVE``) until the block ends."""
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        yield holder
    finally:
        if holder.in_transaction:
            holder.execute("ROLLBACK")
        holder.close()


def _log_events(log: Path, event: str) -> list[dict]:
    if not log.exists():
        return []
    lines = (json.loads(x) for x in log.read_text().splitlines() if x.startswith("{"))
    return [x for x in lines if x.get("event") == event]


def test_a_locked_store_is_logged_at_once_retried_and_the_gate_starts_when_it_clears(tmp_path):
    toml = _gate(tmp_path, lock_wait_s=600)
    store = tmp_path / "state" / "store.db"
    log = tmp_path / "gate.log"
    fifo = os.open(tmp_path / "reads.fifo", os.O_RDWR)
    try:
        with _locked(store):
            proc = start_gate(toml)
            retries = wait_until(lambda: len(_log_events(log, "state_file_locked")) >= 2 and
                                 _log_events(log, "state_file_locked"), timeout=60, what="two retries logged")
            os.write(fifo, b"0A04A10001\n")  # a tap waiting for the gate: not decided while locked
            assert proc.poll() is None
            assert not (tmp_path / "shown.jsonl").exists()
            assert _log_events(log, "gate_started") == []
        assert [r["attempt"] for r in retries[:2]] == [1, 2]
        assert retries[0]["file"] == str(store) and retries[0]["level"] == "warning"
        assert retries[0]["problem"].startswith(
            f"store.db is locked by another process (another gate service running?): {store}; stop that process")
        assert retries[0]["retry_in_s"] == 2.0 and 0 < retries[0]["gives_up_in_s"] <= 600
        wait_until(lambda: _log_events(log, "gate_started"), timeout=60, what="gate_started")
        shown = tmp_path / "shown.jsonl"
        wait_until(lambda: shown.exists() and b'"V001"' in shown.read_bytes(), timeout=60, what="the tap decided")
        assert kill_gate(proc, signal.SIGTERM) == 0
    finally:
        os.close(fifo)
    decided = [json.loads(x) for x in shown.read_text().splitlines()]
    assert [d.get("registration") for d in decided if d.get("registration")] == ["V001"]
    assert list((tmp_path / "state").glob("*.corrupt-*")) == []


@pytest.mark.parametrize("name", ["store.db", "journal.db"])
def test_sigterm_while_waiting_for_a_locked_file_stops_the_gate_at_once(tmp_path, name):
    toml = _gate(tmp_path, lock_wait_s=600)
    log = tmp_path / "gate.log"
    with _locked(tmp_path / "state" / name):
        proc = start_gate(toml)
        wait_until(lambda: _log_events(log, "state_file_locked"), timeout=60, what="the lock logged")
        proc.send_signal(signal.SIGTERM)
        # 600 s of lock_wait_s left: an exit within the generous deadline is the SIGTERM's doing
        assert proc.wait(timeout=60) == 0
    assert [e["file"] for e in _log_events(log, "gate_start_cancelled")] == [str(tmp_path / "state" / name)]
    assert _log_events(log, "gate_started") == []
    assert "Traceback" not in log.read_text()


@pytest.mark.parametrize("name", ["store.db", "journal.db"])
def test_a_lock_that_never_clears_exits_1_with_one_line_naming_the_file(tmp_path, name):
    toml = _gate(tmp_path, lock_wait_s=3)
    path = tmp_path / "state" / name
    with _locked(path):
        out = subprocess.run([sys.executable, "-m", "app.cli", "edge", "run", "--config", str(toml)],
                             capture_output=True, text=True, cwd=ROOT)
    tries = assert_gave_up(out, name, path)
    assert tries[-1]["gave_up"] is True
    assert list((tmp_path / "state").glob("*.corrupt-*")) == []


def test_a_locked_rollback_journal_file_is_refused_as_locked_not_quarantined(tmp_path):
    """A file in rollback-journal mode in another process's write transaction locks even readers
    out: the integrity check says "locked", never "corrupt"."""
    path = tmp_path / "store.db"
    other = sqlite3.connect(path)
    other.execute("CREATE TABLE notes (x)")
    other.commit()
    other.close()
    with _locked(path) as holder:
        holder.execute("INSERT INTO notes VALUES (1)")
        with pytest.raises(StoreLocked) as err:
            Store(path, gate_id=GATE)
    assert err.value.path == path and str(err.value).startswith("store.db is locked by another process")
    assert list(tmp_path.glob("*.corrupt-*")) == []
    assert sqlite3.connect(path).execute("SELECT count(*) FROM notes").fetchone() == (0,)
