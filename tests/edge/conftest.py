"""Fixtures for the gate tests: a real SQLite store and journal in a temporary state dir, seeded
from the demo data files, and a fake clock."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from edge.clock import FakeClock
from edge.journal import Journal
from edge.store import Store

DEMO = Path(__file__).resolve().parents[2] / "config" / "demo"
KEY = b"test-gate-key-0123456789"
GATE = "g-aurora"
SHIP = "9300001"
# 2026-03-15 01:20 local (America/Sao_Paulo, UTC-3) = 04:20 UTC: inside period 01-07 of the demo escala
T0 = dt.datetime(2026, 3, 15, 4, 20, tzinfo=dt.UTC)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(T0)


@pytest.fixture
def store(tmp_path) -> Store:
    s = Store(tmp_path / "store.db", gate_id=GATE, ship=SHIP, boot_id="boot-1")
    s.load_csv_files(DEMO / "workers.csv", DEMO / "cards.csv", DEMO / "escala.csv", at=T0)
    yield s
    s.close()


@pytest.fixture
def journal(tmp_path) -> Journal:
    j = Journal(tmp_path / "journal.db", port="santos", gate_id=GATE, key=KEY, boot_id="boot-1")
    yield j
    j.close()


class QueueReader:
    """A tiny ``drivers.base.Reader`` fed from a queue by the test (None ends ``reads()``)."""

    def __init__(self, reader_id: str = "r-control", kind: str = "control") -> None:
        import queue

        from portgate.records import ReaderKind

        self.reader_id = reader_id
        self.kind = ReaderKind(kind)
        self.q: queue.Queue = queue.Queue()

    def reads(self):
        while (item := self.q.get()) is not None:
            yield item

    def close(self) -> None:
        self.q.put(None)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def card_read(uid: str, clock: FakeClock, *, kind: str = "control", reader_id: str | None = None):
    from drivers.base import CardRead
    from portgate.records import ReaderKind

    return CardRead(uid=uid, reader_id=reader_id or f"r-{kind}", kind=ReaderKind(kind),
                    mono_ns=clock.mono_ns(), wall=clock.wall())


@pytest.fixture
def make_loop(store, journal, clock):
    from edge.clock import GuardedClock
    from edge.indicator import RecordingIndicator
    from edge.loop import GateLoop
    from edge.rules.rulebook import default_gate_rulebook

    def make(rulebook=None, **kw):
        return GateLoop(readers=kw.pop("readers", []), store=store, journal=journal,
                        clock=GuardedClock(clock), indicator=kw.pop("indicator", RecordingIndicator()),
                        rulebook=rulebook or default_gate_rulebook(), **kw)

    return make
