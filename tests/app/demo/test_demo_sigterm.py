"""``kill -TERM`` of a plain ``portgate demo`` (no ``--cluster``) mid-day, while its broker is
stopped for the outage: the demo stops every process it started, as on Ctrl-C, and exits 130.
Before, SIGTERM ended the demo alone (exit 143) and left ``central run``, both ``edge run``,
``pcscd`` and ``edge display`` running under PID 1."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from app.demo.gate import pcsc_available
from portgate.i18n import gettext
from tests.app.demo.test_demo_cluster import _alive, _children


def _output(path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_sigterm_mid_day_stops_every_process_the_demo_started(tmp_path):
    log = tmp_path / "demo.out"
    outage = gettext("pt", "cli.demo.broker_stopped").split("{")[0]  # the broker is stopped from here
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "app.cli", "demo", "--run-dir", str(tmp_path / "run")],
                                stdout=out, stderr=subprocess.STDOUT)
    seen: dict[int, tuple[str, str]] = {}
    try:
        deadline = time.monotonic() + 900
        while outage not in _output(log):
            assert proc.poll() is None and time.monotonic() < deadline, _output(log)[-4000:]
            time.sleep(0.2)
        seen = _children(proc.pid)
        commands = " ".join(cmd for _start, cmd in seen.values())
        programs = ("central run", "edge run", "edge display", *(("pcscd",) if pcsc_available() else ()))
        for program in programs:
            assert program in commands, (program, seen)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(300) == 130, _output(log)[-4000:]
        # the office's multiprocessing forkserver ends on its own once its parent's pipe closes:
        # on a loaded machine a moment after the demo's exit (an upper bound, returns at once)
        deadline = time.monotonic() + 60
        while (left := {pid: cmd for pid, (start, cmd) in seen.items() if _alive(pid, start)}) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not left, left
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid, (start, _cmd) in seen.items():  # a failed run leaves nothing behind either
            if _alive(pid, start):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
