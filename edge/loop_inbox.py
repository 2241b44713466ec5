"""The gate loop's inbox (``edge.loop``): one thread per reader putting its reads on it
(``start_readers``, ``_pump``), reader statuses (``on_status``, journaled by ``_journal_status``),
taking a turn's batch (``take_batch``) and stopping (``stop``).
A mixin of ``edge.loop.GateLoop``: it works on the loop's inbox, readers and journal.
"""

from __future__ import annotations

import queue
import threading
import time

import structlog

from drivers.base import Reader, ReaderState, ReaderStatus
from edge.journal import PRIORITY_HIGH
from portgate.errors import StoreError
from wire.events import ReaderPayload

log = structlog.get_logger("edge.loop")

_STOP = object()
INBOX_SIZE = 16


class ReaderInbox:
    """The inbox side of ``edge.loop.GateLoop`` (see there for the attributes it shares)."""

    def start_readers(self) -> None:
        """Start one daemon thread per reader, each putting reads on ``inbox``."""
        for reader in self.readers:
            th = threading.Thread(target=self._pump, args=(reader,), name=f"reader-{reader.reader_id}",
                                  daemon=True)
            th.start()
            self._threads.append(th)

    def on_status(self, status: ReaderStatus) -> None:
        """Status callback for the readers' constructors: faults become journal events. Waits at
        most 1 s for room in the inbox; a status that still finds it full is only logged. The
        reader's health (``reader_health``) follows at once, journaled or not."""
        if self.reader_health is not None:
            self.reader_health.note_status(status)
        try:
            self.inbox.put(status, timeout=1.0)
        except queue.Full:
            log.warning("reader_status_dropped", reader_id=status.reader_id, state=status.state.value)

    def take_batch(self, timeout: float | None = None) -> tuple[list, bool]:
        """Wait at most ``timeout`` seconds (default ``tick_s``) for an inbox item, then take
        every item already waiting behind it, at most ``INBOX_SIZE`` in all. Returns ``(items,
        stop)``: ``[None]`` (a tick) when nothing came; ``stop`` when ``stop()`` was called."""
        try:
            item = self.inbox.get(timeout=self.tick_s if timeout is None else timeout)
        except queue.Empty:
            return [None], False
        if item is _STOP:
            return [], True
        items = [item]
        while len(items) < INBOX_SIZE:
            try:
                more = self.inbox.get_nowait()
            except queue.Empty:
                break
            if more is _STOP:
                return items, True
            items.append(more)
        return items, False

    def stop(self) -> None:
        """Ask the loop and the readers to stop (callable from any thread or a signal handler)."""
        self._stopping.set()
        try:
            self.inbox.put_nowait(_STOP)
        except queue.Full:
            pass  # the loop sees _stopping at its next item
        for reader in self.readers:
            try:
                reader.close()
            except Exception:  # a reader failing to close must not stop the others
                log.exception("reader_close_failed", reader_id=reader.reader_id)

    def _journal_status(self, status: ReaderStatus) -> None:
        payload = ReaderPayload(reader_id=status.reader_id, state=status.state.value,
                                detail=status.detail[:500])
        try:
            ev = self.journal.append(payload, now=self.clock.now(), priority=PRIORITY_HIGH)
        except StoreError:
            log.exception("journal_append_failed", reader_id=status.reader_id)
            return
        self._apply(ev)
        level = log.info if status.state is ReaderState.READY else log.warning
        level("reader_status", reader_id=status.reader_id, state=status.state.value, detail=status.detail)

    def _pump(self, reader: Reader) -> None:
        backoff = 0.5
        while not self._stopping.is_set():
            try:
                for read in reader.reads():
                    if self.reader_health is not None:
                        self.reader_health.note_read(reader.reader_id)
                    while not self._stopping.is_set():
                        try:
                            self.inbox.put(read, timeout=0.5)
                            break
                        except queue.Full:
                            continue
                    backoff = 0.5
                return  # reads() returned: the reader was closed
            except Exception as exc:  # the Reader contract says never; a bug must not kill the gate
                log.exception("reader_crashed", reader_id=reader.reader_id)
                crashed = ReaderStatus(reader.reader_id, ReaderState.FAULT, f"reader crashed: {exc}")
                if self.reader_health is not None:
                    self.reader_health.note_status(crashed)
                self.inbox.put(crashed)
                time.sleep(backoff)
                backoff = min(backoff * 2, 10.0)
