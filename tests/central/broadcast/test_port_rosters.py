"""Issue 37 item 4: one roster per served port (central.broadcast.port_roster). A two-port office
(``ports = ["santos", "paranagua"]``, santos home) on real SQLite and PostgreSQL and a real mosquitto: each port's
roster topic gets its port's workers only (Lei 12.815 arts. 32-33: each OGMO's registry is its own),
with a version chain of its own; a worker moved leaves the old port's roster."""

from __future__ import annotations

import collections
import datetime as dt
import threading
import uuid

import msgspec
import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion
from sqlalchemy.orm import Session

from central.broadcast.port_roster import PORT_BASE
from central.config import PublishSettings
from central.db import load_all_tables, make_engine
from central.ingest.ports import make_ingest
from central.office_key import office_key
from central.registry.changes import utcnow
from central.registry.store import save_card, save_worker
from central.registry.worker_ports import set_port
from edge.journal import Journal
from edge.sync import Sync, SyncSettings
from portgate.records import Card, CardKind, CardStatus, Worker, WorkerStatus
from tests.central.broadcast.conftest import ACTOR, control_uid, today
from tests.central.broadcast.test_registry_downlink import local_noon, present
from tests.central.ingest.conftest import Gate, Office, broker, keys_dir  # noqa: F401
from testkit.wait import wait_until
from wire.connection import MqttConfig
from wire.downlink import decode_downlink
from wire.signed_downlink import open_envelope

SERVED = ("santos", "paranagua")


class Listener:
    """A raw MQTT client on ``portgate/v1/+/down/roster/+``: every roster message per port, opened
    with the office key and decoded, in arrival order."""

    def __init__(self, broker, keys_dir):  # noqa: F811
        self.got: dict[str, list] = collections.defaultdict(list)
        self.lock = threading.Lock()
        self.keys = [office_key(keys_dir).public_key()]
        self.broker = broker
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="roster-listener")
        self.client.on_message = self._on
        self.client.connect(broker.host, broker.port)
        self.client.subscribe("portgate/v1/+/down/roster/+", qos=1)
        self.client.loop_start()

    def _on(self, client, userdata, msg):
        _p, _v, port, _d, kind, form = msg.topic.split("/")
        _issued, body = open_envelope(msg.payload, self.keys, msg.topic)
        with self.lock:
            self.got[port].append((form, decode_downlink(body, kind, form)))

    def of(self, port: str) -> list:
        with self.lock:
            return list(self.got[port])

    def held(self, port: str) -> dict[str, tuple[int, set[str]]]:
        """What a gate of ``port`` would hold after applying the messages in order as edge.sync
        does (a snapshot replaces, a delta applies only on its from_version): (version, registrations);
        fails on a delta that does not chain."""
        version, regs = None, set()
        for form, m in self.of(port):
            if form == "snapshot":
                if version is None or m.version > version:
                    version, regs = m.version, {w.registration for w in m.workers}
            elif version is not None and m.to_version > version:
                assert m.from_version == version, f"{port}: delta from {m.from_version}, held {version}"
                version = m.to_version
                regs |= {w.registration for w in m.workers_upsert}
        return version, regs

    def stop(self):
        self.client.disconnect()  # first: it wakes the network loop, which loop_stop then joins at once
        self.client.loop_stop()  # (the other way round it waits out the loop's 1 s select)


def add(s: Session, reg: str, port: str | None) -> None:
    save_worker(s, Worker(reg, f"Vigia {reg}", "vigia", WorkerStatus.ACTIVE,
                          health_exam_date=today() - dt.timedelta(days=30),
                          booklet_revalidated_year=today().year, rotation_number=int(reg[1:])),
                actor=ACTOR, now=utcnow(), action="worker.import")
    save_card(s, Card(control_uid(reg), CardKind.CONTROL, reg, CardStatus.ACTIVE), event="issued",
              actor=ACTOR, now=utcnow())
    if port is not None:
        set_port(s, reg, port, actor=ACTOR, now=utcnow(), served=SERVED)


_TABLES: dict[int, str] = {}  # a cluster's port -> its database of every table, made once per process


def _tables_template(pg) -> str:
    """A database of ``pg`` with every table (``create_all``, as ``Office`` makes them), made once per
    process and cluster: each PostgreSQL test's ledger is a copy of it (``createdb -T``; two_ports is
    also test_port_escala.py's fixture)."""
    if pg.port not in _TABLES:
        name = f"rosters_tables_{uuid.uuid4().hex[:8]}"
        engine = make_engine(pg.create_database(name))
        load_all_tables().create_all(engine)
        engine.dispose()  # nobody may be connected to a template
        _TABLES[pg.port] = name
    return _TABLES[pg.port]


@pytest.fixture(params=["sqlite", "postgresql"])
def two_ports(request, tmp_path, keys_dir, broker):  # noqa: F811
    url = None
    if request.param == "postgresql":
        pg = request.getfixturevalue("pg_cluster")
        url = pg.create_database(f"rosters_{request.node.name[5:40].lower()}", template=_tables_template(pg))
    office = Office(tmp_path, keys_dir, url=url)
    with Session(office.engine) as s, s.begin():
        add(s, "V001", None)  # home port: santos
        add(s, "V002", "santos")
        add(s, "V003", "paranagua")
    cfg = msgspec.structs.replace(office.config(broker), port="santos", ports=list(SERVED),
                                  publish=PublishSettings(source="registry", poll_s=0.1, snapshot_min_s=0.5))
    listener = Listener(broker, keys_dir)
    ingest = make_ingest(cfg, engine=office.engine).start()
    assert ingest.wait_connected()
    yield office, ingest, listener
    ingest.stop()
    listener.stop()
    office.engine.dispose()


def test_each_port_gets_its_own_workers_with_its_own_chain(two_ports):
    office, ingest, listener = two_ports
    wait_until(lambda: listener.held("santos")[1] and listener.held("paranagua")[1], what="both snapshots")
    assert listener.held("santos")[1] == {"V001", "V002"}
    assert listener.held("paranagua")[1] == {"V003"}
    snap = next(m for f, m in listener.of("paranagua") if f == "snapshot")
    assert [c.uid for c in snap.cards] == [control_uid("V003")]
    assert snap.version > PORT_BASE
    santos_v, para_v = listener.held("santos")[0], listener.held("paranagua")[0]
    with Session(office.engine) as s, s.begin():
        add(s, "V004", "paranagua")  # a worker added at paranaguá
    wait_until(lambda: "V004" in listener.held("paranagua")[1], what="V004 at paranagua")
    deltas = [m for f, m in listener.of("paranagua") if f == "delta"]
    assert deltas and deltas[0].from_version == para_v, (deltas, para_v)
    assert not any("V004" in {w.registration for w in m.workers_upsert}
                   for f, m in listener.of("santos") if f == "delta")
    assert listener.held("santos")[1] == {"V001", "V002"}  # chain unbroken (held() checks it)
    assert listener.held("santos")[0] >= santos_v
    # the snapshot an ingest answers a gate's SnapshotRequest with: the same version as the chain
    para = ingest.by_port["paranagua"].publisher
    wait_until(lambda: para.snapshot("roster", dt.datetime.now(dt.UTC)).version == listener.held("paranagua")[0],
               what="answered snapshot at the chain's version")
    assert {w.registration for w in para.snapshot("roster", dt.datetime.now(dt.UTC)).workers} == {"V003", "V004"}


def test_a_worker_moved_leaves_the_old_ports_roster(two_ports):
    office, _ingest, listener = two_ports
    wait_until(lambda: "V002" in listener.held("santos")[1] and listener.held("paranagua")[1], what="snapshots")
    before = listener.held("santos")[0]
    with Session(office.engine) as s, s.begin():
        assert set_port(s, "V002", "paranagua", actor=ACTOR, now=utcnow(), served=SERVED)
    wait_until(lambda: "V002" in listener.held("paranagua")[1], what="V002 at paranagua")
    wait_until(lambda: "V002" not in listener.held("santos")[1], what="V002 gone from santos")
    assert listener.held("santos") == (listener.held("santos")[0], {"V001"})
    assert listener.held("santos")[0] > before
    assert listener.held("paranagua")[1] == {"V002", "V003"}


def test_a_card_of_no_registered_worker_reaches_every_port(two_ports):
    office, _ingest, listener = two_ports
    wait_until(lambda: listener.held("santos")[1] and listener.held("paranagua")[1], what="snapshots")
    with Session(office.engine) as s, s.begin():
        save_card(s, Card("BB000001", CardKind.INSPECTOR, "F001", CardStatus.ACTIVE), event="issued",
                  actor=ACTOR, now=utcnow())

    def delta_cards(port):
        return {c.uid for f, m in listener.of(port) if f == "delta" for c in m.cards_upsert}

    for port in SERVED:
        wait_until(lambda port=port: "BB000001" in delta_cards(port), what=f"inspector card at {port}")
        assert listener.held(port)[0] is not None  # the chain held (held() fails on a broken one)


class ParanaguaGate(Gate):
    """The MQTT tests' gate (real ``edge.store.Store`` and ``edge.sync.Sync``) at paranaguá."""

    def __init__(self, tmp_path, keys_dir, gate_id):  # noqa: F811
        super().__init__(tmp_path, keys_dir, gate_id)
        self.journal = Journal(tmp_path / f"{gate_id}-p.journal", port="paranagua", gate_id=gate_id,
                               key=self.key, boot_id=str(uuid.uuid4()))

    def start(self, broker, store=None, **settings):  # noqa: F811
        self.sync = Sync(MqttConfig(host=broker.host, port=broker.port, reconnect_min_s=0.2, reconnect_max_s=1),
                         self.journal, store, port="paranagua", gate_id=self.gate_id,
                         settings=SyncSettings(check_every_s=0.2)).start()
        return self.sync


def test_a_paranagua_gate_denies_a_santos_registered_worker(two_ports, tmp_path, keys_dir):  # noqa: F811
    office, _ingest, listener = two_ports
    gate = ParanaguaGate(tmp_path, keys_dir, "p-g1")
    try:
        gate.start(listener.broker, store=gate.store)
        wait_until(lambda: gate.store.worker("V003") is not None, what="paranagua roster at the gate")
        assert gate.store.worker("V002") is None and gate.store.worker("V001") is None
        santos = present(gate.store, control_uid("V002"), local_noon(today()))
        assert "G1.unknown" in santos.reasons, santos.reasons  # registered at santos: no card here
        ours = present(gate.store, control_uid("V003"), local_noon(today()))
        assert "G1.unknown" not in ours.reasons, ours.reasons
        with Session(office.engine) as s, s.begin():  # santos hands V002 over to paranaguá
            set_port(s, "V002", "paranagua", actor=ACTOR, now=utcnow(), served=SERVED)
        wait_until(lambda: gate.store.worker("V002") is not None, what="V002 at the paranagua gate")
        assert "G1.unknown" not in present(gate.store, control_uid("V002"), local_noon(today())).reasons
    finally:
        gate.stop()


def test_change_rows_carry_their_workers_port_and_a_move_writes_both_ports(tmp_path, keys_dir):  # noqa: F811
    from sqlalchemy import select

    from central.registry.schema import downlink_changes as dc

    office = Office(tmp_path, keys_dir)
    try:
        with Session(office.engine) as s, s.begin():
            add(s, "V001", None)
            add(s, "V002", "paranagua")
            save_card(s, Card("BB000001", CardKind.INSPECTOR, "F001", CardStatus.ACTIVE), event="issued",
                      actor=ACTOR, now=utcnow())
            first = s.execute(select(dc.c.id).order_by(dc.c.id.desc())).scalar()
            assert not set_port(s, "V002", "paranagua", actor=ACTOR, now=utcnow(), served=SERVED)  # no move
            assert s.execute(select(dc.c.id).order_by(dc.c.id.desc())).scalar() == first  # nothing written
            assert set_port(s, "V002", "santos", actor=ACTOR, now=utcnow(), served=SERVED)
        with office.engine.connect() as c:
            rows = c.execute(select(dc.c.kind, dc.c.op, dc.c.key, dc.c.port).order_by(dc.c.id)).all()
        assert [tuple(r) for r in rows] == [
            ("roster", "upsert", "V001", None), ("cards", "upsert", control_uid("V001"), None),
            # V002: saved at the home port, then moved to paranaguá, then back to santos
            ("roster", "upsert", "V002", None), ("cards", "upsert", control_uid("V002"), None),
            ("roster", "delete", "V002", None), ("roster", "upsert", "V002", "paranagua"),
            ("cards", "upsert", control_uid("V002"), "paranagua"),
            ("cards", "upsert", "BB000001", "*"),  # no registered holder: every port
            ("roster", "delete", "V002", "paranagua"), ("roster", "upsert", "V002", "santos"),
            ("cards", "upsert", control_uid("V002"), "santos"),
        ]
    finally:
        office.engine.dispose()
