"""One live ``central run`` per home port and ``--instance`` (``central.ledger.instance_claim``, 0037),
through ``Liveness`` as ``portgate central run`` enters it, on real SQLite and PostgreSQL: a fresh row
of another host blocks until its heartbeat is older than ``STALE_S``; a row of this host whose pid is
gone, a zombie or another process now (pid reused) is taken over at once (systemd's quick restart); a
live process of this host blocks; other instances, ports and ``office serve`` rows never block; a
row whose ``seen_at`` is not a time is taken over; two claims at once give one holder; a process
whose instance another took over meanwhile stops. The real
command against real brokers: tests/ops/test_office_instance.py."""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
import threading

import pytest
from sqlalchemy import insert, select, text

from central.db import make_engine
from central.ledger.instance_claim import OfficeRunning, proc_start, this_host
from central.ledger.liveness import STALE_S, Liveness
from central.ledger.migrate import upgrade
from central.ledger.schema import office_processes
from testkit.wait import wait_until


@pytest.fixture
def ledger(db_url):
    upgrade(db_url)
    engine = make_engine(db_url)
    yield db_url, engine
    engine.dispose()


def _row(engine, *, host: str, pid: int, seen_ago_s: float = 2, instance: str = "", port: str = "santos",
         kind: str = "central run", start: int | None = None, rid: str = "old") -> None:
    seen = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=seen_ago_s)
    with engine.begin() as c:
        c.execute(insert(office_processes).values(id=rid, kind=kind, home_port=port, instance=instance, host=host,
                                                  pid=pid, proc_start=start, started_at=seen, seen_at=seen))


def _ids(engine) -> list[str]:
    with engine.connect() as c:
        return sorted(c.execute(select(office_processes.c.id)).scalars())


def _start(url: str, instance: str = "") -> Liveness:
    return Liveness(url, "central run", "santos", instance=instance, refresh_s=3600)


def test_a_fresh_row_of_another_host_blocks_until_it_is_stale(ledger):
    url, engine = ledger
    _row(engine, host="escritorio-2", pid=4242, instance="a", seen_ago_s=5)
    with pytest.raises(OfficeRunning) as refused:
        _start(url, "a").__enter__()
    assert str(refused.value) == (
        "another office 'a' of port santos (pid 4242 on host escritorio-2, heartbeat 5 s ago) is running on this "
        "ledger: start this one with another --instance NAME or stop that one (an office that died stops counting "
        f"{STALE_S:.0f} s after its last heartbeat)")
    assert _ids(engine) == ["old"]  # nothing written
    with engine.begin() as c:
        c.execute(text("UPDATE office_processes SET seen_at = :t"),
                  {"t": dt.datetime.now(dt.UTC) - dt.timedelta(seconds=STALE_S + 5)})
    with _start(url, "a") as me:
        assert _ids(engine) == [me.id]  # the stale row taken over


def test_other_instances_ports_and_web_processes_do_not_block(ledger):
    url, engine = ledger
    _row(engine, host="h2", pid=1, instance="a", rid="r1")
    _row(engine, host="h2", pid=2, instance="", port="rio", rid="r2")
    _row(engine, host="h2", pid=3, instance="", kind="office serve", rid="r3")
    with _start(url) as me, _start(url, "b") as other:
        assert _ids(engine) == sorted(["r1", "r2", "r3", me.id, other.id])
    with pytest.raises(OfficeRunning, match="another office 'a' of port santos \\(pid 1 on host h2"):
        _start(url, "a").__enter__()


def test_a_dead_process_of_this_host_is_taken_over_at_once(ledger):
    """The row's heartbeat is 1 s old (systemd restarts 2 s after a crash): a pid that runs no more
    (reaped), a zombie (killed, not yet reaped) and a pid now of another process are dead."""
    url, engine = ledger
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    start = proc_start(child.pid)
    assert start is not None
    _row(engine, host=this_host(), pid=child.pid, start=start, seen_ago_s=1)
    with pytest.raises(OfficeRunning, match=f"without --instance of port santos \\(pid {child.pid} on host"):
        _start(url).__enter__()  # it runs
    child.send_signal(signal.SIGKILL)
    assert child.pid and os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # a zombie now
    with _start(url) as me:
        assert _ids(engine) == [me.id]
    child.wait()  # reaped: no such pid
    _row(engine, host=this_host(), pid=child.pid, start=start, seen_ago_s=1)
    with _start(url) as me:
        assert _ids(engine) == [me.id]
    _row(engine, host=this_host(), pid=os.getppid(), start=start, seen_ago_s=1)  # a pid reused by another process
    with _start(url) as me:
        assert _ids(engine) == [me.id]


def test_a_live_process_of_this_host_blocks_and_an_unknown_start_is_taken_as_alive(ledger):
    url, engine = ledger
    parent = os.getppid()
    _row(engine, host=this_host(), pid=parent, start=proc_start(parent), rid="r1")
    _row(engine, host=this_host(), pid=parent, start=None, instance="b", rid="r2")  # a row made before 0037
    for instance in ("", "b"):
        with pytest.raises(OfficeRunning, match=f"\\(pid {parent} on host {this_host()}, heartbeat 2 s ago\\)"):
            _start(url, instance).__enter__()
    assert _ids(engine) == ["r1", "r2"]


def test_an_unreadable_row_is_taken_over(tmp_path):
    """SQLite only: its untyped column can hold a heartbeat that is not a time (PostgreSQL's
    timestamptz column cannot)."""
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    upgrade(url)
    engine = make_engine(url)
    _row(engine, host="h2", pid=1)
    with engine.begin() as c:
        c.execute(text("UPDATE office_processes SET seen_at = 'garbage'"))
    with _start(url) as me:
        assert _ids(engine) == [me.id]


def test_two_claims_at_once_give_one_holder(ledger):
    """Four starts of one instance at once (threads of one process: each sees the others' rows as
    this host's live pid): exactly one runs, the others are refused, on both databases."""
    url, engine = ledger
    barrier = threading.Barrier(4)
    won, refused, failed = [], [], []

    def one() -> None:
        me = _start(url, "a")
        barrier.wait()
        try:
            me.__enter__()
            won.append(me)
        except OfficeRunning:
            refused.append(me)
        except Exception as exc:  # a lock given up would show here
            failed.append(exc)

    threads = [threading.Thread(target=one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failed == [] and len(won) == 1 and len(refused) == 3
    assert _ids(engine) == [won[0].id]
    won[0].__exit__(None, None, None)
    assert _ids(engine) == []


def test_a_process_whose_instance_was_taken_over_stops_refreshing_and_says_so(ledger):
    """Its row gone (deleted by hand): written again, it runs on. Its row gone and another host's
    live process of its instance there (started while this one could not reach the ledger for
    ``STALE_S``): ``on_lost`` is called and the refreshes end; the other's row stays."""
    url, engine = ledger
    lost = threading.Event()
    me = Liveness(url, "central run", "santos", instance="a", refresh_s=0.2, on_lost=lost.set)
    with me:
        with engine.begin() as c:
            c.execute(office_processes.delete())
        wait_until(lambda: _ids(engine) == [me.id], timeout=120, what="the row written again")
        assert not lost.is_set()
        with engine.begin() as c:
            c.execute(office_processes.delete())
        _row(engine, host="escritorio-2", pid=4242, instance="a", seen_ago_s=0, rid="other")
        wait_until(lost.is_set, timeout=120, what="on_lost")
        assert _ids(engine) == ["other"]
    assert _ids(engine) == ["other"]
