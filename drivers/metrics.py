"""Reader metrics (prometheus-client) and the status reporter every driver uses.

- ``portgate_reader_up{reader_id}``: 1 while the reader is READY, 0 while ABSENT or in FAULT.
- ``portgate_reader_faults_total{reader_id,kind}``: faults by ``FaultKind`` value, every kind
  created at 0 when the reader starts (so ``increase()`` sees the first fault).

Metrics live in the default registry (``prometheus_client.REGISTRY``); the gate exposes it.
"""

from __future__ import annotations

import threading

import structlog
from prometheus_client import Counter, Gauge

from drivers.base import FaultKind, ReaderState, ReaderStatus, StatusCallback

READER_UP = Gauge("portgate_reader_up", "1 while the card reader is present and working", ["reader_id"])
READER_FAULTS = Counter(
    "portgate_reader_faults_total", "Card reader faults by kind", ["reader_id", "kind"]
)


class StatusReporter:
    """Turns a driver's state changes and faults into metrics, log lines and ``on_status`` calls.

    ``status(state, detail, fault)`` calls ``on_status`` when the state or its detail changes or a
    fault is reported (identical states repeated during back-off are not passed on). ``count(fault, detail)``
    records a fault in the metric and the log only (noise on a serial line, a mistyped number):
    those are not reader faults worth an event each.
    """

    def __init__(self, reader_id: str, on_status: StatusCallback | None, logger_name: str) -> None:
        self.reader_id = reader_id
        self._on_status = on_status
        self._state: ReaderState | None = None
        self._detail = ""
        self._lock = threading.Lock()
        self.log = structlog.get_logger(logger_name).bind(reader_id=reader_id)
        READER_UP.labels(reader_id=reader_id).set(0)
        for kind in FaultKind:
            READER_FAULTS.labels(reader_id=reader_id, kind=kind.value)

    @property
    def state(self) -> ReaderState | None:
        return self._state

    @property
    def detail(self) -> str:
        """The detail of the last status reported (empty before the first)."""
        return self._detail

    def status(self, state: ReaderState, detail: str = "", fault: FaultKind | None = None) -> None:
        with self._lock:
            changed = (state, detail) != (self._state, self._detail)
            self._state, self._detail = state, detail
        READER_UP.labels(reader_id=self.reader_id).set(1 if state is ReaderState.READY else 0)
        if fault is not None:
            READER_FAULTS.labels(reader_id=self.reader_id, kind=fault.value).inc()
        if not changed and fault is None:
            return
        log = self.log.warning if fault is not None else self.log.info
        log("reader_status", state=state.value, fault=fault.value if fault else None, detail=detail)
        if self._on_status is not None:
            self._on_status(ReaderStatus(self.reader_id, state, detail, fault))

    def count(self, fault: FaultKind, detail: str = "") -> None:
        READER_FAULTS.labels(reader_id=self.reader_id, kind=fault.value).inc()
        self.log.info("reader_input_rejected", fault=fault.value, detail=detail)


class Backoff:
    """Exponential back-off between reconnection attempts: ``initial`` doubling up to ``maximum``
    seconds; ``reset()`` after a success. ``wait(event)`` sleeps the next delay unless ``event``
    is set first (then returns True: the reader is closing)."""

    def __init__(self, initial: float = 0.1, maximum: float = 5.0) -> None:
        self.initial, self.maximum = initial, maximum
        self._next = initial

    def reset(self) -> None:
        self._next = self.initial

    def wait(self, event: threading.Event) -> bool:
        delay, self._next = self._next, min(self._next * 2, self.maximum)
        return event.wait(delay)
