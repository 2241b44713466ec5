"""A first close on PostgreSQL digests its inputs in a forked child (``central.ledger.close_inputs``,
``BESIDE_MIN_WORKERS`` lowered here so that a small month takes that path): it stores what the
close without the child stores (shifts, statements, lines, input digests, counts; a first close
and a re-close), also when the child raises or is killed (the digests are then computed in the
close's own process), and leaves no child behind. SQLite and a re-close never fork."""

from __future__ import annotations

import os
import signal

import pytest

import central.ledger.close_inputs as close_inputs
from central.ledger.forked import Forked
from tests.central.pay.test_close_same_on_both import _closed


@pytest.fixture
def forks(monkeypatch) -> list[Forked]:
    """Every ``Forked`` the close makes, once made; the threshold lowered to one worker."""
    made: list[Forked] = []

    class Counted(Forked):
        def __init__(self, *args) -> None:
            super().__init__(*args)
            made.append(self)

    monkeypatch.setattr(close_inputs, "Forked", Counted)
    monkeypatch.setattr(close_inputs, "BESIDE_MIN_WORKERS", 1)
    return made


def _inline(pg_cluster, monkeypatch, name: str) -> dict:
    with monkeypatch.context() as m:
        m.setattr(close_inputs, "BESIDE_MIN_WORKERS", 10**9)
        return _closed(pg_cluster.create_database(name), m)


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_a_first_close_with_its_digests_in_a_child_stores_what_the_close_without_one_does(
        pg_cluster, monkeypatch, forks):
    beside = _closed(pg_cluster.create_database("beside_child"), monkeypatch)
    assert len(forks) == 1 and not forks[0].failed  # the first close only; its child's result used
    assert forks[0].pid != os.getpid() and _gone(forks[0].pid)  # reaped
    inline = _inline(pg_cluster, monkeypatch, "beside_inline")
    assert len(forks) == 1  # above the threshold: no child
    assert beside["inputs"] and beside["counts"][0][1] > 0
    for key in ("counts", "shifts", "statements", "lines", "inputs"):
        assert beside[key] == inline[key], key


@pytest.mark.parametrize("how", ["raises", "killed"])
def test_a_child_that_fails_leaves_the_digests_to_the_close_itself(pg_cluster, monkeypatch, forks, how):
    parent, digest = os.getpid(), close_inputs.digest_inputs

    def failing(*args):
        if os.getpid() != parent:  # in the child only
            if how == "killed":
                os.kill(os.getpid(), signal.SIGKILL)
            raise RuntimeError("the child fails")
        return digest(*args)

    monkeypatch.setattr(close_inputs, "digest_inputs", failing)
    beside = _closed(pg_cluster.create_database(f"beside_{how}"), monkeypatch)
    assert len(forks) == 1 and forks[0].failed and _gone(forks[0].pid)
    inline = _inline(pg_cluster, monkeypatch, f"beside_{how}_inline")
    for key in ("counts", "shifts", "statements", "lines", "inputs"):
        assert beside[key] == inline[key], key


def test_sqlite_does_not_fork(tmp_path, monkeypatch, forks):
    out = _closed(f"sqlite:///{tmp_path / 'ledger.db'}", monkeypatch)
    assert out["inputs"] and forks == []
