"""Fixtures of the drivers tests: a private pcscd with vpcd readers (one per test session; tests
that restart or reconfigure it put it back), virtual cards, a pseudo-terminal reader, and a
helper that runs a reader's ``reads()`` in a thread."""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Iterator

import pytest

from drivers.base import CardRead, ReaderStatus
from app.demo.pcsc import PcscDaemon
from app.demo.pty_reader import PtyReader
from app.demo.vicc import VirtualCard

WAIT = 15.0
POLL_S = 0.5  # pcscd polls vpcd for card presence every 400 ms  # safety net against a hung test, not a performance limit


class Running:
    """A reader whose ``reads()`` runs in a thread; reads and statuses land in queues."""

    def __init__(self, make_reader) -> None:  # type: ignore[no-untyped-def]
        self.statuses: queue.Queue[ReaderStatus] = queue.Queue()
        self.all_statuses: list[ReaderStatus] = []
        self.reads: queue.Queue[CardRead] = queue.Queue()
        self.reader = make_reader(self._on_status)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _on_status(self, status: ReaderStatus) -> None:
        self.all_statuses.append(status)
        self.statuses.put(status)

    def _run(self) -> None:
        for read in self.reader.reads():
            self.reads.put(read)

    def next_read(self) -> CardRead:
        return self.reads.get(timeout=WAIT)

    def no_read(self, seconds: float) -> bool:
        """True when no read arrives within ``seconds`` (used after inputs that must not read)."""
        try:
            self.reads.get(timeout=seconds)
        except queue.Empty:
            return True
        return False

    def wait_status(self, predicate) -> ReaderStatus:  # type: ignore[no-untyped-def]
        while True:
            status = self.statuses.get(timeout=WAIT)
            if predicate(status):
                return status

    def stop(self) -> None:
        self.reader.close()
        self.thread.join(WAIT)
        assert not self.thread.is_alive(), "reads() did not return after close()"


@pytest.fixture
def run_reader() -> Iterator:
    started: list[Running] = []

    def start(make_reader):  # type: ignore[no-untyped-def]
        running = Running(make_reader)
        started.append(running)
        return running

    yield start
    for running in started:
        running.reader.close()
        running.thread.join(WAIT)


@pytest.fixture(scope="session")
def pcscd_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PcscDaemon]:
    daemon = PcscDaemon(tmp_path_factory.mktemp("pcscd"))
    os.environ.update(daemon.client_env())  # libpcsclite reads it once per process
    daemon.start()
    default = list(daemon.entries)
    daemon.default_entries = default  # type: ignore[attr-defined]
    yield daemon
    daemon.stop()


@pytest.fixture
def pcscd(pcscd_session: PcscDaemon) -> Iterator[PcscDaemon]:
    """The session's pcscd, running with its default readers ("Virtual PCD 00 00" and "... 00 01")."""
    if not pcscd_session.running:
        pcscd_session.start()
    yield pcscd_session
    default = pcscd_session.default_entries  # type: ignore[attr-defined]
    if pcscd_session.entries != default or not pcscd_session.running:
        pcscd_session.set_entries(default)
        pcscd_session.restart()


@pytest.fixture
def card(pcscd: PcscDaemon) -> Iterator[VirtualCard]:
    """A virtual card for slot 0 (reader "Virtual PCD 00 00"), not inserted yet."""
    with VirtualCard(pcscd.port) as vc:
        yield vc
    time.sleep(POLL_S)  # let pcscd see the removal before the next test inserts a card


@pytest.fixture
def card2(pcscd: PcscDaemon) -> Iterator[VirtualCard]:
    """A virtual card for slot 1 (reader "Virtual PCD 00 01")."""
    with VirtualCard(pcscd.port + 1) as vc:
        yield vc
    time.sleep(POLL_S)


@pytest.fixture
def pty_device(tmp_path) -> Iterator[PtyReader]:  # type: ignore[no-untyped-def]
    with PtyReader(tmp_path / "ttyRFID") as dev:
        yield dev
