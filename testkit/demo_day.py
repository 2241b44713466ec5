"""One played ``portgate demo`` day shared by the tests that only read it (a session fixture,
``demo_day`` in ``tests/conftest.py``): the whole default scenario with the broker outage, run with
``--keep-serving`` so the office web application stays up on the day's ledger until ``stop()``.

    day = DemoDay(tmp_dir).start()     # blocks until "Ctrl-C to stop" (or the demo exits)
    day.out                            # everything the demo printed so far (str)
    day.run_dir / "ledger.db"          # the day's ledger, gate state, evidence bundle ...
    day.url                            # "http://127.0.0.1:<port>/" of the office web application
    day.stop()                         # Ctrl-C (SIGINT); returns the exit status (int), idempotent

A test that changes the run directory or the ledger must not use it: it plays its own day.
``start()`` raises ``AssertionError`` with the tail of the output when the demo ends before it
serves, or does not serve within ``timeout`` seconds.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

# the last line of a --keep-serving demo before it serves on, in the run's language (cli.demo.keep_serving)
READY = ("Ctrl-C para parar", "Ctrl-C to stop")
WEB_LINE = re.compile(r"^web +(http://127\.0\.0\.1:\d+/) +login ", re.M)


def _hear_ctrl_c() -> None:
    """In the demo's process before it runs: SIGINT back to its default action, so Python makes it
    the KeyboardInterrupt ``stop()`` relies on. A suite started as a background job of a
    non-interactive shell (``bash .ci/run &``, ``nohup ... &``) inherits SIGINT ignored, and Python
    leaves an ignored SIGINT ignored: the demo then served on, and ``stop()`` failed after 30 s
    ("the demo did not stop on Ctrl-C")."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class DemoDay:
    def __init__(self, root: Path, *args: str) -> None:
        self.root = root
        self.run_dir = root / "run"
        self.log = root / "demo.out"
        self.args = ("--keep-serving", *args)
        self.proc: subprocess.Popen | None = None
        self.returncode: int | None = None

    @property
    def out(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    @property
    def url(self) -> str:
        m = WEB_LINE.search(self.out)
        assert m, "the demo printed no web line:\n" + self.out[-3000:]
        return m.group(1)

    @property
    def serving(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self, timeout: float = 900.0) -> DemoDay:
        with self.log.open("w") as log:
            self.proc = subprocess.Popen([sys.executable, "-m", "app.cli", "demo", "--run-dir", str(self.run_dir),
                                          *self.args], stdout=log, stderr=subprocess.STDOUT, preexec_fn=_hear_ctrl_c)
        deadline = time.monotonic() + timeout
        while not any(ready in self.out for ready in READY):
            assert self.proc.poll() is None, f"the demo ended ({self.proc.returncode}):\n" + self.out[-4000:]
            assert time.monotonic() < deadline, "the demo did not serve in time:\n" + self.out[-4000:]
            time.sleep(0.2)
        return self

    def stop(self, timeout: float = 30.0) -> int:
        """Ctrl-C the serving demo (once) and return its exit status."""
        if self.returncode is None and self.proc is not None:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGINT)
            try:
                self.returncode = self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError("the demo did not stop on Ctrl-C:\n" + self.out[-3000:]) from None
        return self.returncode
