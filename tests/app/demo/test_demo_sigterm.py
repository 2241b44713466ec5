"""``kill -TERM`` of a plain ``portgate demo`` (no ``--cluster``) mid-day, while its broker is
stopped for the outage: the demo stops every process it started, as on Ctrl-C, and exits 130.
Before, SIGTERM ended the demo alone (exit 143) and left ``central run``, both ``edge run``,
``pcscd`` and ``edge display`` running under PID 1. The day is the demo's own scenario with the
outage moved to its third tap (a copy): every process is started and two taps are decided before
the broker stops, without the 20 taps before the shipped outage (~20-45 s of the suite's time)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from app.demo.gate import pcsc_available
from app.demo.scenario import DEFAULT_DIR
from portgate.i18n import gettext
from tests.app.demo.test_demo_cluster import _alive, _children


def _output(path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def _early_outage(root):
    """A copy of the demo's scenario whose broker outage starts before the day's third tap."""
    scenario = root / "scenario"
    shutil.copytree(DEFAULT_DIR, scenario)
    toml = scenario / "scenario.toml"
    text = toml.read_text(encoding="utf-8")
    assert "\nfrom_line = 23\n" in text, text  # the shipped outage, moved
    toml.write_text(text.replace("\nfrom_line = 23\n", "\nfrom_line = 4\n"), encoding="utf-8")
    return scenario


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_sigterm_mid_day_stops_every_process_the_demo_started(tmp_path):
    log = tmp_path / "demo.out"
    outage = gettext("pt", "cli.demo.broker_stopped").split("{")[0]  # the broker is stopped from here
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "app.cli", "demo", "--run-dir", str(tmp_path / "run"),
                                 "--scenario", str(_early_outage(tmp_path))], stdout=out, stderr=subprocess.STDOUT)
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
