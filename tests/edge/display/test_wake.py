"""The screen is woken by the gate's journal writes (inotify on the real journal's WAL), not by its
next poll tick: a commit ends a wait of an hour; writes to other files of the state directory do
not count; without inotify it polls as before; after a write it polls fast until the commit shows."""

from __future__ import annotations

import asyncio
import datetime as dt
import sqlite3

from edge.display import wake
from edge.display.follower import JournalFollower
from edge.display.wake import JournalWake, Waiter
from edge.journal import Journal
from edge.rules.model import Now
from wire.events import TapPayload

NOW = Now(wall=dt.datetime(2026, 3, 15, 4, 20, tzinfo=dt.UTC), mono_ns=1, clock_trusted=True)
HOUR = 3600.0
GUARD_S = 60  # a hang guard only: a working wake returns at once


def _tap(reg: str) -> TapPayload:
    return TapPayload(uid="0A04A10001", reader_id="r", reader_kind="control", decision="admit", registration=reg)


def _journal(path) -> Journal:
    return Journal(path, port="santos", gate_id="g1", key=b"k" * 16, boot_id="b")


def test_a_commit_wakes_a_wait_of_an_hour_and_the_read_is_there(tmp_path) -> None:
    path = tmp_path / "journal.db"
    j = _journal(path)
    j.append(_tap("V001"), now=NOW)
    follower = JournalFollower(path)
    follower.tail(10)

    async def run() -> list[str]:
        waiter = Waiter(path, follower)
        waiter.start()
        assert waiter.watching
        try:
            asyncio.get_running_loop().call_later(0.05, lambda: j.append(_tap("V002"), now=NOW))
            seen: list[str] = []
            while not seen:  # woken by the write, then fast polls until the commit shows
                await asyncio.wait_for(waiter.wait(HOUR), GUARD_S)
                seen = [e.payload.registration for e in follower.poll()]
            return seen
        finally:
            waiter.close()

    assert asyncio.run(run()) == ["V002"]
    j.close()
    follower.close()


def test_only_the_journals_wal_counts(tmp_path) -> None:
    path = tmp_path / "journal.db"
    j = _journal(path)
    w = JournalWake.open(path)
    assert w is not None
    try:
        other = sqlite3.connect(tmp_path / "store.db")  # the gate's roster copy beside the journal
        other.execute("PRAGMA journal_mode=WAL")
        other.execute("CREATE TABLE t (x)")
        other.commit()
        (tmp_path / "alive.json").write_text("{}")
        assert w.drain() is False
        j.append(_tap("V001"), now=NOW)
        assert w.drain() is True
        assert w.drain() is False  # read once
        other.close()
    finally:
        w.close()
        j.close()


def test_without_a_watch_it_polls_every_poll_s(tmp_path) -> None:
    path = tmp_path / "no-such-dir" / "journal.db"
    assert JournalWake.open(path) is None
    follower = JournalFollower(path)

    async def run() -> bool:
        waiter = Waiter(path, follower)
        waiter.start()
        await asyncio.wait_for(waiter.wait(0.01), GUARD_S)  # returns after poll_s, not never
        waiter.close()
        return waiter.watching

    assert asyncio.run(run()) is False


def test_fast_polls_after_a_write_end_when_the_commit_shows(tmp_path, monkeypatch) -> None:
    """A write seen, its commit not yet (the gate's fsync): the wait is FAST_POLL_S, not poll_s;
    once the follower saw the commit (``changes`` moved) the wait is for the next write again."""
    path = tmp_path / "journal.db"
    j = _journal(path)
    follower = JournalFollower(path)
    sleeps: list[float] = []
    real_sleep = asyncio.sleep

    async def sleep(s: float) -> None:
        sleeps.append(s)
        await real_sleep(0)

    monkeypatch.setattr(wake.asyncio, "sleep", sleep)

    async def run() -> None:
        waiter = Waiter(path, follower)
        waiter.start()
        try:
            j.append(_tap("V001"), now=NOW)
            await asyncio.wait_for(waiter.wait(HOUR), GUARD_S)  # woken by the write
            await waiter.wait(HOUR)  # the commit not looked at yet: a fast poll
            assert sleeps == [wake.FAST_POLL_S]
            assert [e.payload.registration for e in follower.poll()] == ["V001"]
            with_timeout = asyncio.ensure_future(waiter.wait(HOUR))  # seen: waits for a write again
            await real_sleep(0.05)
            assert not with_timeout.done() and sleeps == [wake.FAST_POLL_S]
            j.append(_tap("V002"), now=NOW)
            await asyncio.wait_for(with_timeout, GUARD_S)
        finally:
            waiter.close()

    asyncio.run(run())
    j.close()
    follower.close()
