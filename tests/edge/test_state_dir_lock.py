"""One gate service per state directory: a second ``portgate edge run`` on the same ``state_dir``
is refused while the first runs, even while the first writes nothing (idle: no SQLite lock shows);
it waits up to ``lock_wait_s`` like a locked ``store.db`` (docs/gate.md "Files locked by another
process"), then one line and exit 1. Real gate processes; the kernel's flock, no mock."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from edge.config import load_gate_config
from edge.indicator import RecordingIndicator
from edge.service import GateService
from edge.state_lock import StateDirLock
from portgate.errors import StoreLocked
from testkit.gate_process import kill_gate, start_gate, start_gate_and_wait, write_gate_config
from testkit.wait import wait_until

from .test_state_locked import assert_gave_up

ROOT = Path(__file__).resolve().parents[2]


def _config(tmp_path: Path, *, lock_wait_s: float) -> Path:
    toml = write_gate_config(tmp_path)
    toml.write_text(toml.read_text().replace('state_dir = "state"',
                                             f'state_dir = "state"\nlock_wait_s = {lock_wait_s}'))
    return toml


def _run_second(toml: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", "edge", "run", "--config", str(toml)],
                          capture_output=True, text=True, cwd=ROOT)


def _events(text: str, event: str) -> list[dict]:
    lines = (json.loads(x) for x in text.splitlines() if x.startswith("{"))
    return [x for x in lines if x.get("event") == event]


def test_a_second_gate_on_the_same_state_dir_is_refused_with_one_line_and_exit_1(tmp_path):
    toml = _config(tmp_path, lock_wait_s=3)
    lock = tmp_path / "state" / "gate.lock"
    first = start_gate_and_wait(toml)  # idle: no tap, so neither SQLite file is being written
    try:
        out = _run_second(toml)
        assert first.poll() is None  # the first gate runs on, untouched
    finally:
        assert kill_gate(first, signal.SIGTERM) == 0
    tries = assert_gave_up(out, "gate.lock", lock)
    assert tries[0]["file"] == str(lock) and tries[-1]["gave_up"] is True
    assert _events(out.stderr, "gate_started") == []


def test_the_second_gate_starts_once_the_first_stops_within_lock_wait_s(tmp_path):
    """The systemd restart case: the new process waits while the old one lets go."""
    toml = _config(tmp_path, lock_wait_s=600)
    first = start_gate_and_wait(toml)
    second_log = tmp_path / "second.log"
    second = start_gate(toml, log_path=second_log)
    try:
        wait_until(lambda: second_log.exists() and _events(second_log.read_text(), "state_file_locked"),
                   timeout=60, what="the second gate waiting for the lock")
        assert second.poll() is None and _events(second_log.read_text(), "gate_started") == []
        assert kill_gate(first, signal.SIGTERM) == 0
        wait_until(lambda: _events(second_log.read_text(), "gate_started"), timeout=60,
                   what="the second gate started")
    finally:
        if first.poll() is None:
            kill_gate(first)
        assert kill_gate(second, signal.SIGTERM) == 0


def test_a_gate_killed_with_sigkill_leaves_no_lock_behind(tmp_path):
    toml = _config(tmp_path, lock_wait_s=0)
    first = start_gate_and_wait(toml)
    assert kill_gate(first, signal.SIGKILL) == -signal.SIGKILL
    assert (tmp_path / "state" / "gate.lock").exists()
    StateDirLock.take(tmp_path / "state").release()  # the kernel gave it back with the process


def test_a_service_that_fails_to_start_gives_the_lock_back(tmp_path):
    cfg = load_gate_config(_config(tmp_path, lock_wait_s=0))
    GateService(cfg, indicator=RecordingIndicator()).close()
    holder = sqlite3.connect(tmp_path / "state" / "store.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process's write lock: the store cannot open
    try:
        with pytest.raises(StoreLocked) as err:
            GateService(cfg, indicator=RecordingIndicator())
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert err.value.path == tmp_path / "state" / "store.db"
    StateDirLock.take(tmp_path / "state").release()


def test_in_one_process_the_lock_is_held_until_close(tmp_path):
    cfg = load_gate_config(_config(tmp_path, lock_wait_s=0))
    service = GateService(cfg, indicator=RecordingIndicator())
    with pytest.raises(StoreLocked) as err:
        StateDirLock.take(tmp_path / "state")
    assert err.value.path == tmp_path / "state" / "gate.lock"
    service.close()
    StateDirLock.take(tmp_path / "state").release()
