"""Scale-out: several office processes (``portgate central run --instance a|b``, as
``portgate-central@.service`` runs them, two worker threads each) on one PostgreSQL ledger behind
mosquitto's shared subscription. Three gates publish; one office process is SIGKILLed mid-stream and
restarted with the same instance name (its persistent sessions get back what mosquitto had already
handed them). Every event is in the ledger exactly once, in per-gate order without gaps."""

from __future__ import annotations

import datetime as dt
import signal
import time
import uuid

import pytest
from sqlalchemy import func, select

from central.db import load_all_tables, make_engine
from central.ingest.keys import add_gate
from central.ledger.schema import dead_letters, events
from edge.journal import Journal
from edge.rules.model import Now
from edge.sync import Sync
from portgate.config import read_secret
from testkit.postgres import PostgresCluster
from tests.ops.conftest import free_port, scrape
from testkit.wait import wait_until
from tests.ops.test_central_service import central_toml
from wire.connection import MqttConfig
from wire.events import TapPayload

pytestmark = pytest.mark.slow
GATES = ("g1", "g2", "g3")
PER_GATE = 120


@pytest.fixture
def pg():
    cluster = PostgresCluster()  # scripts/setup.sh installs PostgreSQL: a missing server fails here
    cluster.start()
    yield cluster
    cluster.stop()


def now() -> Now:
    return Now(wall=dt.datetime.now(dt.UTC), mono_ns=time.monotonic_ns(), clock_trusted=True)


def tap(i: int) -> TapPayload:
    return TapPayload(uid=f"F1{i:06X}", reader_id="r-control", reader_kind="control", decision="deny",
                      rules_failed=["G1"], message="Cartão desconhecido")


def test_two_office_processes_on_postgresql_share_the_stream(tmp_path, broker, pg, notify_socket,
                                                            start_service):
    engine = make_engine(pg.url)
    load_all_tables().create_all(engine)  # migrations run once, before the workers start
    keys = tmp_path / "keys"
    keys.mkdir()
    for g in GATES:
        add_gate(keys, g)
    cfg = central_toml(tmp_path, broker, workers=2, url=pg.url)
    ports = {"a": free_port(), "b": free_port()}
    procs = {}
    for inst in ("a", "b"):
        procs[inst] = start_service(["central", "run", "--config", str(cfg), "--instance", inst],
                                    notify=notify_socket, extra_env={"PORTGATE_METRICS_PORT": str(ports[inst])})
        wait_until(lambda: notify_socket.seen("READY=1") >= len(procs) or not procs[inst].alive(),
                   what=f"READY=1 from {inst}")
        assert procs[inst].alive(), procs[inst].output()

    mqtt = MqttConfig(host=broker.host, port=broker.port, reconnect_min_s=0.2, reconnect_max_s=1)
    gates = []
    for g in GATES:
        j = Journal(tmp_path / f"{g}.journal.db", port="santos", gate_id=g, key=read_secret(keys / f"{g}.key"),
                    boot_id=str(uuid.uuid4()))
        gates.append((j, Sync(mqtt, j, port="santos", gate_id=g).start()))

    def ledger_count() -> int:
        with engine.connect() as c:
            return c.execute(select(func.count()).select_from(events)).scalar_one()

    for i in range(PER_GATE):
        for j, sync in gates:
            j.append(tap(i), now=now())
            sync.notify()
        if i == PER_GATE // 3:  # a power cut on one office process while gates are publishing
            wait_until(lambda: ledger_count() > 0, what="first events in the ledger")
            procs["b"].proc.send_signal(signal.SIGKILL)
            procs["b"].proc.wait()
        if i == 2 * PER_GATE // 3:
            procs["b"] = start_service(["central", "run", "--config", str(cfg), "--instance", "b"],
                                       notify=notify_socket,
                                       extra_env={"PORTGATE_METRICS_PORT": str(ports["b"])})
    total = PER_GATE * len(GATES)
    wait_until(lambda: ledger_count() >= total, timeout=90, what=f"{total} events in the ledger")
    time.sleep(1.0)  # any duplicate insert would show now
    with engine.connect() as c:
        rows = c.execute(select(events.c.gate_id, events.c.seq, events.c.event_id)).all()
        dead = c.execute(select(func.count()).select_from(dead_letters)).scalar_one()
    assert len(rows) == total and len({r.event_id for r in rows}) == total
    for g in GATES:
        assert sorted(r.seq for r in rows if r.gate_id == g) == list(range(1, PER_GATE + 1))
    assert dead == 0
    # both processes did part of the work (mosquitto spreads a share group over its sessions)
    done = {inst: sum(float(line.rsplit(" ", 1)[1]) for line in scrape(port).splitlines()
                      if line.startswith("portgate_ingest_events_total "))
            for inst, port in ports.items()}
    assert done["a"] > 0
    wait_until(lambda: all(j.outbox_depth() == 0 for j, _ in gates), what="gate outboxes drained")
    for _, sync in gates:
        sync.stop()
    for svc in procs.values():
        assert svc.stop() == 0, svc.output()
    engine.dispose()
