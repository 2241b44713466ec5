"""Wake the screen when the gate writes its journal, instead of waiting for the next poll tick.

Linux inotify (``inotify_simple``) on the journal's directory, ``IN_MODIFY`` of the journal's WAL (``journal.db-wal``; the database file itself is written by checkpoints only): the gate's commit writes its WAL frames, then fsyncs, and only then
does the commit become visible to a reader. So a write is a hint, not the commit: after one the
screen polls every ``FAST_POLL_S`` for at most ``HOT_S`` until ``PRAGMA data_version`` moves
(``JournalFollower.changes``), then waits for the next write again. The directory (not the file)
is watched: the WAL is deleted and created again when the gate restarts.

Without inotify (another OS, the watch limit reached) ``JournalWake.open`` returns None and the
screen polls every ``poll_ms`` as before; ``poll_ms`` stays the safety net either way (a write
inotify did not report, a journal replaced by a file of another name).

Why (issue 33, ``bench/gate_display.py``): the screen's own work per read is under a millisecond;
what it added to commit -> page was the wait for its next 20 ms tick (11.9 ms at p50), and under
load a late tick (48 ms at p99).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import structlog

log = structlog.get_logger(__name__)

#: seconds between polls while a write has been seen and its commit is not visible yet
FAST_POLL_S = 0.002
#: at most this long (seconds) of fast polls after one write (a commit's fsync, even a slow one)
HOT_S = 0.25


class JournalWake:
    """An inotify watch on the journal's directory. ``fileno()`` becomes readable on a write;
    ``drain()`` reads the pending events and says whether one was the journal's."""

    def __init__(self, notify, names: frozenset[str]) -> None:
        self._notify = notify
        self._names = names

    @classmethod
    def open(cls, journal: str | Path) -> JournalWake | None:
        """A watch for ``journal`` (the gate's ``journal.db``), or None when inotify cannot be
        used here (logged once): the caller then polls only."""
        path = Path(journal)
        try:
            from inotify_simple import INotify, flags  # lazy: Linux only, the screen polls without it

            notify = INotify()
        except (ImportError, OSError) as exc:
            log.warning("display_wake_unavailable", error=str(exc))
            return None
        try:
            notify.add_watch(path.parent, flags.MODIFY)
        except OSError as exc:  # no such directory yet, the watch limit
            notify.close()
            log.warning("display_wake_unavailable", path=str(path.parent), error=str(exc))
            return None
        return cls(notify, frozenset({path.name + "-wal"}))  # the db file itself: checkpoints only

    def fileno(self) -> int:
        return self._notify.fileno()

    def drain(self) -> bool:
        """Read every pending event without blocking; True when one was a write to the journal or
        its WAL (other files of the directory: False)."""
        try:
            events = self._notify.read(timeout=0)
        except OSError:
            return False
        return any(ev.name in self._names for ev in events)

    def close(self) -> None:
        self._notify.close()


class Waiter:
    """The screen's pause between two looks at the journal (``edge.display.server``): until the
    gate writes its WAL or ``poll_s`` passes; ``FAST_POLL_S`` while a write's commit is not
    visible yet. ``follower``: the ``JournalFollower`` whose ``changes`` say a commit was seen."""

    def __init__(self, journal: str | Path, follower) -> None:
        self._journal = Path(journal)
        self._follower = follower
        self._wake: JournalWake | None = None
        self._event: asyncio.Event | None = None
        self._hot_until = 0.0
        self._changes = follower.changes

    def start(self) -> None:
        """Watch the journal's directory from the running loop (no watch: polls only)."""
        self._wake = JournalWake.open(self._journal)
        if self._wake is not None:
            self._event = asyncio.Event()
            asyncio.get_running_loop().add_reader(self._wake.fileno(), self._readable)

    @property
    def watching(self) -> bool:
        return self._wake is not None

    def _readable(self) -> None:
        if self._wake is not None and self._wake.drain():
            self._hot_until = time.monotonic() + HOT_S
            self._event.set()

    async def wait(self, poll_s: float) -> None:
        """Return when the journal should be looked at again."""
        if self._follower.changes != self._changes:  # the commit the write announced was seen
            self._changes = self._follower.changes
            self._hot_until = 0.0
            if self._wake is not None:
                self._wake.drain()  # that commit's other writes
        if time.monotonic() < self._hot_until:
            await asyncio.sleep(FAST_POLL_S)
            return
        if self._event is None:
            await asyncio.sleep(poll_s)
            return
        self._event.clear()
        try:
            await asyncio.wait_for(self._event.wait(), poll_s)
        except TimeoutError:
            pass

    def close(self) -> None:
        if self._wake is not None:
            asyncio.get_running_loop().remove_reader(self._wake.fileno())
            self._wake.close()
            self._wake = None
