"""``central.ledger.forked.Forked``: a computation in a forked child, its result read back; a child
that raises, is killed or is interrupted leaves the computation to the caller; ``close()`` kills
and reaps a child still running; a child dies with its parent (SIGKILL of the parent)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from central.ledger.forked import Forked
from testkit.wait import wait_until

ROOT = Path(__file__).resolve().parents[3]


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _where(tag: str) -> tuple[str, int, bytes]:
    return tag, os.getpid(), bytes(range(256)) * 1000  # a result larger than a pipe's buffer


def test_the_childs_result_is_read_back():
    with Forked(_where, "x") as child:
        tag, pid, blob = child.result()
    assert (tag, blob) == ("x", bytes(range(256)) * 1000)
    assert pid == child.pid != os.getpid() and not child.failed and _gone(child.pid)


def test_a_child_forked_from_a_thread_returns_its_result_too():
    got = []
    thread = threading.Thread(target=lambda: got.append(Forked(_where, "t").result()))
    thread.start()
    thread.join(180)
    assert got and got[0][0] == "t" and got[0][1] != os.getpid()


@pytest.mark.parametrize("how", ["raises", "killed", "interrupted", "terminated"])
def test_a_failed_child_leaves_the_computation_to_the_caller(how):
    parent = os.getpid()

    def work():
        if os.getpid() != parent:
            if how == "raises":
                raise ValueError("in the child")
            os.kill(os.getpid(), {"killed": signal.SIGKILL, "interrupted": signal.SIGINT,
                                  "terminated": signal.SIGTERM}[how])
        return os.getpid()

    child = Forked(work)
    assert child.result() == parent and child.failed
    child.close()
    assert _gone(child.pid)


def test_an_error_of_the_computation_is_raised_by_the_caller():
    def work():
        raise ValueError("everywhere")

    with Forked(work) as child, pytest.raises(ValueError, match="everywhere"):
        child.result()
    assert child.failed


def test_close_kills_and_reaps_a_child_still_running():
    r, w = os.pipe()
    try:
        child = Forked(os.read, r, 1)  # blocks until killed: nothing is written
        child.close()
        assert _gone(child.pid)
    finally:
        os.close(r)
        os.close(w)


def test_a_child_dies_with_its_parent():
    """The parent killed with SIGKILL while its child runs: no child left (``PR_SET_PDEATHSIG``)."""
    script = ("import os, sys\nfrom central.ledger.forked import Forked\nr, w = os.pipe()\n"
              "child = Forked(os.read, r, 1)\nprint(child.pid, flush=True)\nos.kill(os.getpid(), 9)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT,
                          timeout=180)
    assert done.returncode == -signal.SIGKILL, done.stderr
    pid = int(done.stdout.split()[0])
    wait_until(lambda: _ended(pid), timeout=180, what="the orphan child killed")


def _ended(pid: int) -> bool:
    """Gone, or a zombie waiting for init to reap it."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][0] == "Z"
    except (FileNotFoundError, ProcessLookupError):
        return True


def test_a_fork_that_fails_leaves_the_computation_to_the_caller(monkeypatch):
    def no_fork():
        raise BlockingIOError("Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", no_fork)
    with Forked(_where, "f") as child:
        assert child.result()[:2] == ("f", os.getpid())
    assert child.failed and child.pid is None
