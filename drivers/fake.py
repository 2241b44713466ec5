"""A scripted reader for tests and the demo: yields ``CardRead`` values from a list or a queue.

``FakeReader("gate1-control", ReaderKind.CONTROL, ["04A1B2C3"])`` yields one read per UID, then
ends (``close_when_done=True``) or waits for ``push()`` until ``close()``. Items may be UIDs (any
form ``canonical_uid`` accepts) or ready-made ``CardRead`` values (kept as they are, for scripted
times). ``status()`` sends a ``ReaderStatus`` through the callback, to script faults.
"""

from __future__ import annotations

import datetime as dt
import queue
import time
from collections.abc import Callable, Iterable, Iterator

from drivers.base import CardRead, FaultKind, ReaderState, StatusCallback
from drivers.metrics import StatusReporter
from portgate.records import ReaderKind
from portgate.uid import canonical_uid

_END = object()


class FakeReader:
    """Scripted ``Reader``. ``clock``: returns ``(mono_ns, wall)`` for reads built from UIDs."""

    def __init__(
        self,
        reader_id: str,
        kind: ReaderKind,
        script: Iterable[str | CardRead] = (),
        *,
        close_when_done: bool = False,
        on_status: StatusCallback | None = None,
        clock: Callable[[], tuple[int, dt.datetime]] | None = None,
    ) -> None:
        self.reader_id, self.kind = reader_id, ReaderKind(kind)
        self._queue: queue.Queue[object] = queue.Queue()
        self._clock = clock or (lambda: (time.monotonic_ns(), dt.datetime.now(dt.UTC)))
        self._reporter = StatusReporter(reader_id, on_status, "drivers.fake")
        for item in script:
            self.push(item)
        if close_when_done:
            self._queue.put(_END)
        self._reporter.status(ReaderState.READY)

    def push(self, item: str | CardRead) -> None:
        """Queue one more read (a UID or a ``CardRead``). Raises ``BadInput`` for a bad UID."""
        if isinstance(item, str):
            item = canonical_uid(item)
        self._queue.put(item)

    def status(self, state: ReaderState, detail: str = "", fault: FaultKind | None = None) -> None:
        """Report a scripted state change or fault through the callback and the metrics."""
        self._reporter.status(state, detail, fault)

    def reads(self) -> Iterator[CardRead]:
        while True:
            item = self._queue.get()
            if item is _END:
                return
            if isinstance(item, CardRead):
                yield item
                continue
            mono_ns, wall = self._clock()
            yield CardRead(str(item), self.reader_id, self.kind, mono_ns, wall)

    def close(self) -> None:
        self._queue.put(_END)

    def __enter__(self) -> FakeReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
