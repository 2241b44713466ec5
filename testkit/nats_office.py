"""The office and gates of the NATS cluster tests (tests/ops/test_nats_*.py, test_cluster_faults.py):
gates speak MQTT 3.1.1 to the cluster's MQTT listeners (``gate_mqtt``), the office ingests through
JetStream into a SQLite ledger (``office``, ``office_ingest``); ``FifoGate`` is a real ``portgate
edge run`` on a FIFO reader, and ``real_gate_through_a_node_kill`` the run in which the node a gate
publishes to is SIGKILLed while taps continue, ending with ``check_fault_run``."""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import signal
import sqlite3
import time
from pathlib import Path

from sqlalchemy import func, select

from central.config import CentralConfig, IngestSettings, NatsSettings
from central.db import make_engine
from central.ingest.jetstream import JetStreamIngest
from central.ingest.keys import add_gate
from central.ledger.migrate import upgrade
from central.ledger.schema import dead_letters, events
from edge.rules.model import Now
from portgate.config import read_secret
from testkit.fault_check import FaultCheck, ReplayLog, check_fault_run, signing_gate
from testkit.gate_process import kill_gate, start_gate_and_wait, write_gate_config
from testkit.nats import NatsCluster
from testkit.wait import wait_until
from wire.connection import MqttConfig
from wire.events import TapPayload


def now() -> Now:
    return Now(wall=dt.datetime.now(dt.UTC), mono_ns=time.monotonic_ns(), clock_trusted=True)


def tap(i: int) -> TapPayload:
    return TapPayload(uid=f"F1{i:06X}", reader_id="r-control", reader_kind="control", decision="deny",
                      rules_failed=["G1"], message="Cartão desconhecido")


def gate_mqtt(cluster: NatsCluster, **kw) -> MqttConfig:
    return MqttConfig(protocol="3.1.1", hosts=[f"{h}:{p}" for h, p in cluster.mqtt_hosts],
                      reconnect_min_s=0.2, reconnect_max_s=1, **kw)


def office(tmp_path, cluster: NatsCluster, url: str) -> CentralConfig:
    return CentralConfig(
        database_url=url, port="santos", keys_dir=str(tmp_path / "keys"),
        mqtt=gate_mqtt(cluster, client_id="ledger-santos"),
        ingest=IngestSettings(batch_size=200, gap_grace_s=0.5, replay_every_s=1.0, tail_grace_s=1.0,
                              writer="thread"),
        nats=NatsSettings(servers=cluster.nats_urls, ack_wait_s=5.0, fetch_wait_s=0.2))


def office_ingest(tmp_path: Path, cluster: NatsCluster, gate_id: str) -> tuple[Path, str, JetStreamIngest]:
    """The keys dir ``tmp_path/keys`` with ``gate_id``'s key, a migrated SQLite ledger and the
    office's JetStream ingest (``office``) started and consuming (15 s): (keys dir, URL, ingest)."""
    keys = tmp_path / "keys"
    keys.mkdir()
    add_gate(keys, gate_id)
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    upgrade(url)
    ingest = JetStreamIngest(office(tmp_path, cluster, url)).start()
    assert ingest.wait_connected(15)
    return keys, url, ingest


def central_toml(tmp_path: Path, cluster: NatsCluster, *, ingest_extra: str = "", nats_extra: str = "") -> Path:
    """``tmp_path/central.toml`` for a real ``portgate central run`` on ``cluster``: gate g1's key in
    ``tmp_path/keys``, a migrated SQLite ledger, MQTT 3.1.1 on the nodes' listeners, the ingest's
    thread writer and ``[nats]`` on the nodes (``fetch_wait_s = 0.2``); ``ingest_extra`` and
    ``nats_extra``: more TOML lines of those tables."""
    keys = tmp_path / "keys"
    keys.mkdir()
    add_gate(keys, "g1")
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    upgrade(url)
    hosts = ", ".join(f'"{h}:{p}"' for h, p in cluster.mqtt_hosts)
    servers = ", ".join(f'"{u}"' for u in cluster.nats_urls)
    cfg = tmp_path / "central.toml"
    cfg.write_text(f'database_url = "{url}"\nport = "santos"\nkeys_dir = "{keys}"\nlog_json = true\n'
                   f'[mqtt]\nprotocol = "3.1.1"\nhosts = [{hosts}]\n'
                   f'[ingest]\n{ingest_extra}writer = "thread"\n'
                   f'[nats]\nservers = [{servers}]\n{nats_extra}fetch_wait_s = 0.2\n')
    return cfg


def ledger_rows(engine):
    with engine.connect() as c:
        rows = c.execute(select(events.c.gate_id, events.c.seq, events.c.event_id)).all()
        dead = c.execute(select(func.count()).select_from(dead_letters)).scalar_one()
    return rows, dead


def stream_state(cluster: NatsCluster, name: str = "PORTGATE_santos") -> dict:
    """The stream's config, cluster and state as the cluster reports them (nats-py, API calls)."""
    import nats

    async def ask():
        nc = await nats.connect(servers=cluster.live_urls())
        try:
            js = nc.jetstream(timeout=60)
            info = await js.stream_info(name)
            consumer = await js.consumer_info(name, "ledger-santos")
            return {"replicas": info.config.num_replicas, "messages": info.state.messages,
                    "peers": 1 + len(info.cluster.replicas or []), "ack_pending": consumer.num_ack_pending,
                    "pending": consumer.num_pending, "deliveries": consumer.delivered.consumer_seq}
        finally:
            await nc.close()

    return asyncio.run(ask())


class FifoGate:
    """``portgate edge run`` of gate ``g-aurora`` under ``root`` (testkit.gate_process: FIFO control
    reader) with MQTT 3.1.1 to the cluster's three hosts, its key registered in ``keys`` before its
    start; ``toml`` is added to its gate.toml (e.g. a ``[sync]`` table). ``close()`` stops it (SIGTERM)
    if still running."""

    def __init__(self, root: Path, keys: Path, cluster: NatsCluster, url: str, toml: str = "") -> None:
        cfg = write_gate_config(root, key=read_secret(keys / "g-aurora.key"))
        signing_gate(keys, root / "state", "g-aurora")  # the key the gate loads at its start, registered
        hosts = ", ".join(f'"{h}:{p}"' for h, p in cluster.mqtt_hosts)
        with open(cfg, "a") as f:
            f.write(f'\n[mqtt]\nprotocol = "3.1.1"\nhosts = [{hosts}]\nreconnect_min_s = 0.2\nreconnect_max_s = 1\n'
                    + toml)
        self.root, self.journal = root, root / "state" / "journal.db"
        self.proc = start_gate_and_wait(cfg)
        self.fifo = os.open(root / "reads.fifo", os.O_RDWR)
        self.engine = make_engine(url)

    def journal_seqs(self) -> list[int]:
        with sqlite3.connect(f"file:{self.journal}?mode=ro", uri=True) as c:
            return [r[0] for r in c.execute("SELECT seq FROM journal ORDER BY seq")]

    def ledger_count(self) -> int:
        return len(ledger_rows(self.engine)[0])

    def ledger_seqs(self) -> list[int]:
        return sorted(r.seq for r in ledger_rows(self.engine)[0])

    def taps(self, n: int, start: int) -> None:
        """``n`` unknown cards ``F1<start>``... on the FIFO, 20 ms apart."""
        for i in range(start, start + n):
            os.write(self.fifo, f"F1{i:06X}\n".encode())
            time.sleep(0.02)

    def stop(self) -> None:
        if self.proc.poll() is None:
            kill_gate(self.proc, signal.SIGTERM)

    def close(self) -> None:
        os.close(self.fifo)
        self.stop()
        self.engine.dispose()


def taps_through_a_node_kill(gate: FifoGate, cluster: NatsCluster, node: int) -> None:
    """40 taps into the ledger; ``node`` SIGKILLed; 60 taps into the ledger through the other nodes
    (the hosts rotated); ``node`` started again; 20 taps: every journal event in the ledger exactly
    once, in seq order, no dead letter, all of gate g-aurora."""
    base = len(gate.journal_seqs())  # the gate's own start-up events
    gate.taps(40, 0)
    wait_until(lambda: gate.ledger_count() >= base + 40, timeout=60, what="first taps in the ledger")
    cluster.kill(node)
    gate.taps(60, 40)
    wait_until(lambda: gate.ledger_count() >= base + 100, timeout=120,
               what="taps after the kill in the ledger, through the other nodes")
    cluster.start_node(node)  # the stream gets its 3rd copy back
    gate.taps(20, 100)
    wait_until(lambda: len(gate.journal_seqs()) >= base + 120, timeout=60, what="120 taps journaled")
    wait_until(lambda: gate.ledger_seqs() == gate.journal_seqs(), timeout=180,
               what="every journal event in the ledger")
    time.sleep(1.0)  # a duplicate insert would show now
    seqs = gate.journal_seqs()
    rows, dead = ledger_rows(gate.engine)
    assert sorted(r.seq for r in rows) == seqs == list(range(1, len(seqs) + 1))
    assert len({r.event_id for r in rows}) == len(rows) and dead == 0
    assert {r.gate_id for r in rows} == {"g-aurora"}


def real_gate_through_a_node_kill(tmp_path: Path, cluster: NatsCluster, node: int, toml: str = "") -> FaultCheck:
    """The office's ingest (``office_ingest``) and a ``FifoGate`` (``toml`` added to its config);
    ``taps_through_a_node_kill`` of ``node``; the gate stopped (SIGTERM) and the ingest too, then
    ``check_fault_run`` over the gate's journal and log (the audit exits 0; unknown cards, no shift)."""
    keys, url, ingest = office_ingest(tmp_path, cluster, "g-aurora")
    gate = None
    try:
        gate = FifoGate(tmp_path / "gate", keys, cluster, url, toml)
        taps_through_a_node_kill(gate, cluster, node)
        print("ingest stats after the kill:", dict(ingest.stats))
        gate.stop()
    finally:
        ingest.stop()
        if gate is not None:
            gate.close()
    replays = ReplayLog()
    replays.read_gate_log(gate.root / "gate.log")
    return check_fault_run(url, [gate.journal], keys, tmp_path / "check", replays=replays, shifts_expected=False)
