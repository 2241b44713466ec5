"""Fixtures for the MQTT tests: a real private mosquitto per test, gates (journal + Sync) and the
office ingest writing to a real SQLite ledger; for the add-gate tests, a ledger that knows rio's gate."""

from __future__ import annotations

import datetime as dt
import time
import uuid
from pathlib import Path

import pytest
from sqlalchemy import select

from central.config import CentralConfig, IngestSettings
from central.db import load_all_tables, make_engine
from central.ingest.event_store import update_progress, write_batch
from central.ingest.keys import add_gate
from central.ingest.service import Ingest
from central.ledger.schema import dead_letters, events
from edge.rules.model import Now
from edge.sync import Sync, SyncSettings
from portgate.config import read_secret
from app.demo.mosquitto import Mosquitto
from testkit.sqlite_copies import copy_made_once
from testkit.wait import wait_until
from edge.journal import Journal
from edge.store import Store
from wire.connection import MqttConfig
from tests.central.web.test_ports_web import RIO, _tap

PORT = "santos"


def process_alive(pid: int) -> bool:
    """True while process ``pid`` exists and is not a zombie (from /proc)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def now() -> Now:
    return Now(wall=dt.datetime.now(dt.UTC), mono_ns=time.monotonic_ns(), clock_trusted=True)


@pytest.fixture
def broker(tmp_path):
    m = Mosquitto(tmp_path / "broker")
    m.start()
    yield m
    m.kill()


@pytest.fixture
def keys_dir(tmp_path):
    d = tmp_path / "keys"
    d.mkdir()
    return d


def every_table(path: Path) -> None:
    """A new SQLite ledger at ``path`` with every table (``create_all``; the office-tables copies)."""
    engine = make_engine(f"sqlite:///{path}")
    load_all_tables().create_all(engine)
    engine.dispose()


class Office:
    """The ledger database and helpers to start ingest workers against a broker. Without ``url``: a
    SQLite ledger in ``tmp_path`` with every table (a copy of one made once per process,
    ``testkit.sqlite_copies``; an existing file gets the missing tables, as before)."""

    def __init__(self, tmp_path, keys_dir, url=None):
        if url is None and not (Path(tmp_path) / "ledger.db").exists():
            copy_made_once("office-tables", every_table, Path(tmp_path) / "ledger.db")
        self.url = url or f"sqlite:///{tmp_path / 'ledger.db'}"
        self.engine = make_engine(self.url)
        load_all_tables().create_all(self.engine)
        self.keys_dir = keys_dir
        self.running: list[Ingest] = []

    def config(self, broker, *, workers=1, mqtt=None, **ingest) -> CentralConfig:
        ingest.setdefault("gap_grace_s", 0.5)
        ingest.setdefault("replay_every_s", 2.0)
        return CentralConfig(
            database_url=self.url, port=PORT, keys_dir=str(self.keys_dir), workers=workers,
            mqtt=mqtt or MqttConfig(host=broker.host, port=broker.port),
            ingest=IngestSettings(**ingest),
        )

    def start(self, broker, **kw) -> Ingest:
        ingest = Ingest(self.config(broker, **kw), engine=self.engine).start()
        assert ingest.wait_connected()
        self.running.append(ingest)
        return ingest

    def stop_all(self):
        for i in self.running:
            i.stop()
        self.running.clear()

    def events(self, gate_id=None):
        q = select(events.c.gate_id, events.c.seq, events.c.event_id).order_by(events.c.id)
        if gate_id:
            q = q.where(events.c.gate_id == gate_id)
        with self.engine.connect() as c:
            return c.execute(q).all()

    def wait_all_of(self, gate, last: int, timeout: float = 30.0) -> None:
        """Wait until the ledger holds ``last`` events of ``gate``; on timeout fail with what is
        missing and the gate's uplink state (a bare count says nothing about why)."""
        try:
            wait_until(lambda: len(self.events(gate.gate_id)) == last, timeout=timeout, what=f"all of {gate.gate_id}")
        except AssertionError:
            have = [r.seq for r in self.events(gate.gate_id)]
            missing = sorted(set(range(1, last + 1)) - set(have))
            sync = gate.sync
            raise AssertionError(
                f"{gate.gate_id}: {len(have)} of {last} events in the ledger after {timeout} s; missing "
                f"{missing[:20]}{'...' if len(missing) > 20 else ''} ({len(missing)}), duplicates "
                f"{len(have) - len(set(have))}; gate outbox depth {gate.journal.outbox_depth()}, connected "
                f"{sync.connected.is_set() if sync else None}, in flight {sync.inflight if sync else None}, "
                f"uplink stats {dict(sync.stats) if sync else None}; dead letters {self.dead()}"
            ) from None

    def contiguous(self, gate_id):
        """The gate's gapless prefix as the office knows it (gate_progress.contiguous_seq)."""
        from central.ledger.schema import gate_progress

        with self.engine.connect() as c:
            return c.execute(select(gate_progress.c.contiguous_seq)
                             .where(gate_progress.c.gate_id == gate_id)).scalar()

    def dead(self):
        with self.engine.connect() as c:
            return c.execute(select(dead_letters.c.reason, dead_letters.c.gate_id)).all()


@pytest.fixture
def office(tmp_path, keys_dir):
    o = Office(tmp_path, keys_dir)
    yield o
    o.stop_all()
    o.engine.dispose()


class Gate:
    def __init__(self, tmp_path, keys_dir, gate_id):
        self.gate_id = gate_id
        key_file = add_gate(keys_dir, gate_id)
        self.key = read_secret(key_file)
        self.journal = Journal(
            tmp_path / f"{gate_id}.journal", port=PORT, gate_id=gate_id, key=self.key, boot_id=str(uuid.uuid4())
        )
        self.store = Store(tmp_path / f"{gate_id}.store", gate_id=gate_id)
        self.sync: Sync | None = None

    def start(self, broker, store=None, *, mqtt=None, office_key=None, **settings) -> Sync:
        """``office_key``: the office's public key the gate checks receipts against (None: none kept)."""
        settings.setdefault("check_every_s", 0.2)
        self.sync = Sync(
            mqtt or MqttConfig(host=broker.host, port=broker.port, reconnect_min_s=0.2, reconnect_max_s=1),
            self.journal, store, port=PORT, gate_id=self.gate_id, settings=SyncSettings(**settings),
            office_key=office_key,
        ).start()
        return self.sync

    def stop(self):
        if self.sync:
            self.sync.stop()
            self.sync = None


@pytest.fixture
def make_gate(tmp_path, keys_dir):
    gates: list[Gate] = []

    def make(gate_id="g1"):
        g = Gate(tmp_path, keys_dir, gate_id)
        gates.append(g)
        return g

    yield make
    for g in gates:
        g.stop()


@pytest.fixture
def rio_ledger(migrated_url) -> str:
    """``migrated_url`` (SQLite and PostgreSQL) holding one tap of rio's gate ``RIO["gate"]``
    (tests/central/web/test_ports_web.py) at port rio, with its progress: a gate the ledger knows at a
    port, as the add-gate tests (test_add_gate_case.py, test_add_gate_ledger.py) need it."""
    at = dt.datetime(2026, 3, 10, 12, tzinfo=dt.UTC)
    engine = make_engine(migrated_url)
    try:
        with engine.begin() as conn:
            write_batch(conn, [_tap("rio", RIO, 1, at, [])], [], at)
            update_progress(conn, [RIO["gate"]], at)
    finally:
        engine.dispose()
    return migrated_url
