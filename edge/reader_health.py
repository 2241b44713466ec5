"""Each configured reader's health as the gate knows it: ok / fault / not reported yet, since when,
and when it last gave a read ("silent since").

The drivers report their state through ``on_status`` (``drivers.base.ReaderStatus``: READY, ABSENT,
FAULT); ``ReaderHealth.note_status`` keeps the newest one per reader, ``note_read`` the time of
its last read. The heartbeat file (``edge.heartbeat``: the watchman's screen) and the retained
status message (``edge.sync``: the office's gate card and reader alarm) carry ``snapshot()``.
Never in the decision path: a few assignments under a lock, from the reader threads.

States: ``ok`` (READY), ``fault`` (ABSENT or FAULT: device unplugged, daemon lost, silent past the
watchdog), ``unknown`` (configured, nothing reported yet: the gate is starting). A status that
reports a fault on a working reader (an unsupported card: ``fault`` set, state READY) leaves it ok.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from drivers.base import ReaderStatus

DETAIL_MAX = 160  # characters of a driver's detail kept (the heartbeat file is one page)


@dataclasses.dataclass(frozen=True, slots=True)
class ReaderView:
    """One reader's health. ``since`` and ``last_read`` are Unix seconds (system clock) or None;
    ``since``: when it entered ``state``; ``last_read``: its last card read since the gate
    started."""

    reader_id: str
    kind: str
    state: str  # ok | fault | unknown
    since: float | None = None
    last_read: float | None = None
    detail: str = ""

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


class ReaderHealth:
    """Thread-safe health of the readers ``configured`` (``(reader_id, kind)`` pairs, in order).
    ``clock``: Unix seconds (``time.time``). ``version`` changes when a state changes (not on a
    read), so a publisher can tell a change cheaply."""

    def __init__(self, configured: Iterable[tuple[str, str]], clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._views = {rid: ReaderView(rid, str(kind), "unknown") for rid, kind in configured}
        self.version = 0

    def note_status(self, status: ReaderStatus) -> None:
        """A driver's status (see module doc). A reader not configured is added (kind "?")."""
        from drivers.base import ReaderState  # lazy: the screen reads ReaderView only (portgate.records)

        state = "ok" if status.state is ReaderState.READY else "fault"
        with self._lock:
            old = self._views.get(status.reader_id) or ReaderView(status.reader_id, "?", "unknown")
            if state == old.state and state == "ok":
                return  # a fault counted on a working reader: it stays ok, since unchanged
            since = old.since if state == old.state else self._clock()
            self._views[status.reader_id] = dataclasses.replace(
                old, state=state, since=since, detail=status.detail[:DETAIL_MAX])
            self.version += 1

    def note_read(self, reader_id: str) -> None:
        """A card read came from ``reader_id`` now."""
        with self._lock:
            old = self._views.get(reader_id)
            if old is not None:
                self._views[reader_id] = dataclasses.replace(old, last_read=self._clock())

    def snapshot(self) -> list[ReaderView]:
        """Every reader's health, in configured order."""
        with self._lock:
            return list(self._views.values())

    def mark(self) -> tuple:
        """What a status message must follow: each reader's (id, state, since)."""
        with self._lock:
            return tuple((v.reader_id, v.state, v.since) for v in self._views.values())
