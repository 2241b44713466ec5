"""The scale-out tiers under one fault per run (issue 37, "What it must show"): gates publishing taps
at a fixed rate over MQTT 3.1.1 to the 3-node NATS cluster, the office consuming through JetStream;
the ledger SQLite for the broker faults (the broker is what is hit) and the Patroni cluster for the
etcd fault. Every run ends with every journal event in the ledger exactly once, no sequence gap per
gate, nothing dead-lettered; it prints how many events the gates' replays supplied (asked by the
office's gap and tail repair) next to the total.

CI plays one broker fault (the stream leader's SIGKILL) with fewer taps; ``PORTGATE_FULL=1`` plays them all
(by hand before a release; figures in docs/operations.md). The SIGKILL of a gate's node, of one of
two office processes and of the PostgreSQL primary are in test_nats_cluster.py and
test_ha_ledger.py."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import signal
import threading
import time
import urllib.request
import uuid

import pytest

from central.config import CentralConfig, IngestSettings, NatsSettings
from central.db import make_engine
from central.ingest.jetstream import JetStreamIngest
from central.ingest.keys import add_gate
from central.ledger.migrate import upgrade
from edge.journal import Journal
from edge.rules.model import Now
from edge.sync import Sync
from portgate.config import read_secret
from testkit.full import FULL, full_or
from testkit.nats import NatsCluster, find_exe, start_cluster
from testkit.patroni import HaLedger, find_tools
from testkit.wait import wait_until
from tests.ops.test_nats_cluster import gate_mqtt, ledger_rows, tap

pytestmark = [pytest.mark.nats, pytest.mark.slow]

GATES = 3
RATE_HZ = 20  # taps per second per gate
TAPS = full_or(120, 600)  # per gate
BROKER_FAULTS = ["stream_leader", "office_node", "sigstop"]
CI_FAULTS = ["stream_leader"]
STOP_S = full_or(8.0, 20.0)  # how long a SIGSTOPped node stays stopped


def now() -> Now:
    return Now(wall=dt.datetime.now(dt.UTC), mono_ns=time.monotonic_ns(), clock_trusted=True)


def stream_leader(cluster: NatsCluster, name: str = "PORTGATE_santos") -> int:
    """The index of the node leading the port's stream."""
    import nats

    async def ask():
        nc = await nats.connect(servers=cluster.live_urls())
        try:
            return (await nc.jetstream(timeout=60).stream_info(name)).cluster.leader
        finally:
            await nc.close()

    leader = asyncio.run(ask())
    return next(i for i, n in enumerate(cluster.nodes) if n.name == leader)


def office_node(cluster: NatsCluster, durable: str = "ledger-santos") -> int:
    """The index of the node the office's NATS connection is on (each node's ``/connz``)."""
    for i, node in enumerate(cluster.nodes):
        with urllib.request.urlopen(f"http://127.0.0.1:{node.http_port}/connz", timeout=2) as r:
            if any(c.get("name") == durable for c in json.loads(r.read()).get("connections") or []):
                return i
    raise AssertionError("the office's connection is on no node")


class Load:
    """``GATES`` gates (their own journal and sync code) tapping ``TAPS`` times at ``RATE_HZ``."""

    def __init__(self, tmp_path, keys, mqtt) -> None:
        self.journals = [Journal(tmp_path / f"g{g}.journal.db", port="santos", gate_id=f"g{g}",
                                 key=read_secret(keys / f"g{g}.key"), boot_id=str(uuid.uuid4()))
                         for g in range(GATES)]
        self.syncs = [Sync(mqtt, j, port="santos", gate_id=f"g{g}").start() for g, j in enumerate(self.journals)]
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._tap, daemon=True)

    def _tap(self) -> None:
        for i in range(TAPS):
            for j, s in zip(self.journals, self.syncs):
                j.append(tap(i), now=now())
                s.notify()
            time.sleep(1.0 / RATE_HZ)
        self.done.set()

    def start(self) -> Load:
        self.thread.start()
        return self

    def stop(self) -> None:
        for s in self.syncs:
            s.stop()


def assert_exactly_once(engine, load: Load) -> int:
    rows, dead = ledger_rows(engine)
    by_gate: dict[str, list[int]] = {}
    for r in rows:
        by_gate.setdefault(r.gate_id, []).append(r.seq)
    assert {g: sorted(s) for g, s in by_gate.items()} == {f"g{g}": list(range(1, TAPS + 1)) for g in range(GATES)}
    assert len({r.event_id for r in rows}) == len(rows) == GATES * TAPS and dead == 0
    return len(rows)


@pytest.fixture
def keys(tmp_path):
    k = tmp_path / "keys"
    k.mkdir()
    for g in range(GATES):
        add_gate(k, f"g{g}")
    return k


@pytest.mark.parametrize("fault", BROKER_FAULTS if FULL else CI_FAULTS)
def test_a_broker_fault_under_load(tmp_path, keys, fault):
    assert find_exe(), "nats-server is not installed: scripts/setup.sh installs it (as root)"
    cluster = start_cluster(tmp_path / "nats")
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    upgrade(url)
    office = CentralConfig(
        database_url=url, port="santos", keys_dir=str(keys), mqtt=gate_mqtt(cluster, client_id="ledger-santos"),
        ingest=IngestSettings(batch_size=100, gap_grace_s=1.0, replay_every_s=1.0, tail_grace_s=2.0, writer="thread"),
        nats=NatsSettings(servers=cluster.nats_urls, ack_wait_s=5.0, fetch_wait_s=0.2))
    ingest = JetStreamIngest(office).start()
    engine = make_engine(url)
    load = None
    try:
        assert ingest.wait_connected(120)  # the stream's creation on a loaded cluster: retried until it answers
        load = Load(tmp_path, keys, gate_mqtt(cluster)).start()
        wait_until(lambda: len(ledger_rows(engine)[0]) >= GATES * 20, timeout=30, what="the first taps in the ledger")
        victim = stream_leader(cluster) if fault == "stream_leader" else office_node(cluster)
        if fault == "sigstop":
            cluster.nodes[victim].proc.send_signal(signal.SIGSTOP)
            time.sleep(STOP_S)
            cluster.nodes[victim].proc.send_signal(signal.SIGCONT)
        else:
            cluster.kill(victim)
            time.sleep(3.0)
            cluster.start_node(victim)
        assert load.done.wait(TAPS / RATE_HZ + 60)
        wait_until(lambda: len(ledger_rows(engine)[0]) >= GATES * TAPS, timeout=120, interval=0.5,
                   what="every journal event in the ledger")
        time.sleep(1.0)  # a duplicate would show now
        total = assert_exactly_once(engine, load)
        print(f"{fault} (node n{victim + 1}): {total} events in the ledger, "
              f"replay requests {ingest.stats['replay_requests']}, rounds {ingest.stats['replay_rounds']}, "
              f"fetch errors {ingest.stats['fetch_errors']}")
    finally:
        if load is not None:
            load.stop()
        ingest.stop()
        engine.dispose()
        cluster.stop()


@pytest.mark.postgres
@pytest.mark.skipif(not FULL, reason="by hand (PORTGATE_FULL=1): the CI form plays the stream leader's SIGKILL; "
                    "test_ha_ledger.py plays the Patroni cluster")
def test_an_etcd_member_sigkilled_under_load(tmp_path, keys):
    """The Patroni ledger keeps its leader (two etcd members of three keep the quorum): the ingest
    goes on without a commit failing, and the member rejoins."""
    assert find_tools(), "patroni and etcd are not installed: scripts/setup.sh installs them (as root)"
    cluster = start_cluster(tmp_path / "nats")
    ha = HaLedger().start()
    upgrade(ha.url)
    office = CentralConfig(
        database_url=ha.url, port="santos", keys_dir=str(keys), mqtt=gate_mqtt(cluster, client_id="ledger-santos"),
        ingest=IngestSettings(batch_size=100, gap_grace_s=1.0, replay_every_s=1.0, tail_grace_s=2.0, writer="thread"),
        nats=NatsSettings(servers=cluster.nats_urls, ack_wait_s=5.0, fetch_wait_s=0.2))
    ingest = JetStreamIngest(office).start()
    engine = make_engine(ha.url)
    load = None
    try:
        assert ingest.wait_connected(20)
        leader = ha.primary()
        load = Load(tmp_path, keys, gate_mqtt(cluster)).start()
        wait_until(lambda: len(ledger_rows(engine)[0]) >= GATES * 20, timeout=30, what="the first taps in the ledger")
        ha.kill_etcd(0)
        assert load.done.wait(TAPS / RATE_HZ + 60)
        wait_until(lambda: len(ledger_rows(engine)[0]) >= GATES * TAPS, timeout=120, interval=0.5,
                   what="every journal event in the ledger")
        ha.start_etcd(0)
        total = assert_exactly_once(engine, load)
        assert ha.primary() == leader  # no failover: the quorum held
        print(f"etcd member e0 killed: {total} events, commit retries {ingest.stats['commit_retries']}")
    finally:
        if load is not None:
            load.stop()
        ingest.stop()
        engine.dispose()
        ha.stop()
        cluster.stop()
