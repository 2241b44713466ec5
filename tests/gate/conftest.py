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
