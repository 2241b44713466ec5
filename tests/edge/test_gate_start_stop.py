"""A stop asked while the gate starts is a clean stop (docs/gate.md, "Start-up"): SIGINT or SIGTERM
before ``gate_started`` ends ``portgate edge run`` with exit status 0, one log line
(``gate_stopped_before_start``), no traceback and no "aborted" (the tester's finding: Ctrl-C in the
first half second printed a KeyboardInterrupt traceback, SIGTERM there ended it silently with 143,
later Ctrl-C printed "aborted" and 130). And a gate run by hand (umask 022) makes its state 0700 and
its files 0600 (``portgate.startup_stop``: umask 0o077).

Real gate processes (``python -m app.cli edge run``); the signal is sent when the process has
reached a named point of its start-up, seen in its stderr: Python's ``-X importtime`` line of a
module the start-up imports (``click``: inside ``app.cli``'s imports; ``edge.service``: inside
``edge run``), or the gate's first log line (``roster_replaced``: the seed, inside the service's
start), never after a sleep."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from testkit.gate_process import start_gate_and_wait, write_gate_config
from testkit.wait import wait_until

ROOT = Path(__file__).resolve().parents[2]


def _start(cfg: Path, err: Path) -> subprocess.Popen:
    """``edge run`` with ``-X importtime`` (each import's line on stderr), stderr to ``err``, umask 022."""
    return subprocess.Popen([sys.executable, "-X", "importtime", "-m", "app.cli", "edge", "run", "--config",
                             str(cfg)], stdout=subprocess.DEVNULL, stderr=err.open("wb"), cwd=ROOT,
                            start_new_session=True, umask=0o022)


def _reached(proc: subprocess.Popen, err: Path, point: str) -> bool:
    """The process's stderr has a line for ``point``: an import's ``| <module>`` or a log event."""
    if proc.poll() is not None:
        raise AssertionError(f"the gate exited {proc.returncode} before {point}: {err.read_text()[-2000:]}")
    for line in err.read_text(errors="replace").splitlines():
        if line.startswith("import time:") and line.rsplit("|", 1)[-1].strip() == point:
            return True
        if line.startswith("{") and f'"event": "{point}"' in line:
            return True
    return False


def _events(err: Path) -> list[dict]:
    return [json.loads(x) for x in err.read_text().splitlines() if x.startswith("{")]


@pytest.mark.parametrize("point", ["click", "edge.service", "roster_replaced"])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_during_start_up_is_a_clean_stop_with_exit_0(tmp_path, point, sig):
    cfg = write_gate_config(tmp_path)
    err = tmp_path / "gate.err"
    proc = _start(cfg, err)
    try:
        wait_until(lambda: _reached(proc, err, point), timeout=120, interval=0.005, what=point)
        proc.send_signal(sig)
        code = proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(60)
    text = err.read_text()
    assert code == 0, text[-2000:]
    assert "Traceback" not in text and "aborted" not in text and "abortado" not in text
    said = [e["event"] for e in _events(err)]
    if point == "roster_replaced" and "gate_started" in said:  # the rest of the start-up (a few ms) ran
        assert "gate_stopped" in said and "gate_stopped_before_start" not in said, said  # before the
    else:  # signal was delivered (a loaded machine): then it is the running gate's clean stop, exit 0
        assert "gate_started" not in said
        assert said.count("gate_stopped_before_start") + said.count("gate_start_cancelled") == 1, said
    # nothing journaled lost: the same state starts again and stops cleanly
    gate = start_gate_and_wait(cfg)
    gate.send_signal(signal.SIGTERM)
    assert gate.wait(timeout=120) == 0


def test_a_gate_run_by_hand_keeps_its_state_to_its_user(tmp_path):
    """umask 022 (a shell's): the state directory 0700, journal, store and their -wal/-shm 0600."""
    cfg = write_gate_config(tmp_path)
    err = tmp_path / "gate.err"
    proc = _start(cfg, err)
    try:
        wait_until(lambda: _reached(proc, err, "gate_started"), timeout=180, what="gate_started")
        state = tmp_path / "state"
        modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in state.iterdir() if p.is_file()}
        assert stat.S_IMODE(state.stat().st_mode) == 0o700
        for name in ("journal.db", "store.db", "journal.db-wal", "journal.db-shm", "store.db-wal"):
            assert modes.get(name) == 0o600, (name, {k: oct(v) for k, v in modes.items()})
        assert all(mode & 0o077 == 0 for mode in modes.values()), {k: oct(v) for k, v in modes.items()}
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=120) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(60)
    assert os.stat(tmp_path / "state").st_mode & 0o077 == 0
