"""``[sync] lanes`` on a real 3-node NATS cluster (issue 37; wire.gate_link, docs/operations.md "MQTT
3.1.1 trade-offs"): NATS's MQTT layer stores one connection's QoS 1 publishes one after the other,
so a gate with three lanes publishes on three connections, lane ``k`` first to node ``k``. Every
journal event lands in the ledger exactly once; the outbox is emptied by the PUBACKs of all three
lanes; a SIGKILLed node's lane reconnects to another node and what it held goes again; the run
ends with ``check_fault_run`` (audit exit 0)."""

from __future__ import annotations

import os
import signal
import sqlite3
import time
import uuid

import pytest

from central.db import make_engine
from central.ingest.jetstream import JetStreamIngest
from central.ingest.keys import add_gate
from central.ledger.migrate import upgrade
from edge.journal import Journal
from edge.sync import Sync
from edge.sync.settings import SyncSettings
from portgate.config import read_secret
from testkit.fault_check import ReplayLog, check_fault_run, signing_gate
from testkit.gate_process import kill_gate, start_gate_and_wait, write_gate_config
from testkit.wait import wait_until
from tests.ops.test_nats_cluster import gate_mqtt, ledger_rows, nats_cluster, now, office, stream_state, tap  # noqa: F401
from wire.gate_link import LANE_MIDS

pytestmark = [pytest.mark.nats]


def test_three_lanes_carry_a_gate_s_events_exactly_once(tmp_path, nats_cluster):  # noqa: F811
    cluster = nats_cluster
    keys = tmp_path / "keys"
    keys.mkdir()
    add_gate(keys, "g1")
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    upgrade(url)
    ingest = JetStreamIngest(office(tmp_path, cluster, url)).start()
    assert ingest.wait_connected(15)
    j = Journal(tmp_path / "g1.journal.db", port="santos", gate_id="g1", key=read_secret(keys / "g1.key"),
                boot_id=str(uuid.uuid4()))
    n = 600
    j.append_many([tap(i) for i in range(n)], now=now())  # an outage's backlog
    sync = Sync(gate_mqtt(cluster), j, port="santos", gate_id="g1", settings=SyncSettings(lanes=3))
    lanes_used: set[int] = set()
    publish_many = sync.link.publish_many

    def watched(topic, bodies):
        mids = publish_many(topic, bodies)
        lanes_used.update(m // LANE_MIDS for m in mids)
        return mids

    sync.link.publish_many = watched
    engine = make_engine(url)
    sync.start()
    try:
        wait_until(lambda: all(c.is_connected() for c in sync.link.lanes), timeout=120, what="the three lanes up")
        # lane k connected first to node k (the hosts rotated per lane)
        assert [c._port for c in sync.link.lanes] == [p for _h, p in cluster.mqtt_hosts]
        wait_until(lambda: j.outbox_depth() == 0, timeout=120, what="the outbox emptied by the lanes' PUBACKs")
        wait_until(lambda: len(ledger_rows(engine)[0]) >= n, timeout=120, what=f"{n} events in the ledger")
        wait_until(lambda: stream_state(cluster)["ack_pending"] == 0, timeout=60, what="every message acknowledged")
        rows, dead = ledger_rows(engine)
        assert sorted(r.seq for r in rows) == list(range(1, n + 1))
        assert len({r.event_id for r in rows}) == n and dead == 0
        assert lanes_used == {0, 1, 2} and sync.stats["acked"] >= n
        assert j.sent_through() == n
    finally:
        sync.stop()
        ingest.stop()
        engine.dispose()


def test_real_gate_with_lanes_survives_sigkill_of_a_lane_s_node(tmp_path, nats_cluster):  # noqa: F811
    """``portgate edge run`` with ``[sync] lanes = 3``; node 2 (lane 1's first node) is SIGKILLed
    while taps continue: lane 1 goes on through another node, paho sends again what it held;
    afterwards every journal event is in the ledger exactly once and the audit passes."""
    cluster = nats_cluster
    keys = tmp_path / "keys"
    keys.mkdir()
    add_gate(keys, "g-aurora")
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    upgrade(url)
    ingest = JetStreamIngest(office(tmp_path, cluster, url)).start()
    assert ingest.wait_connected(15)
    gate_dir = tmp_path / "gate"
    cfg = write_gate_config(gate_dir, key=read_secret(keys / "g-aurora.key"))
    signing_gate(keys, gate_dir / "state", "g-aurora")
    hosts = ", ".join(f'"{h}:{p}"' for h, p in cluster.mqtt_hosts)
    with open(cfg, "a") as f:
        f.write(f'\n[mqtt]\nprotocol = "3.1.1"\nhosts = [{hosts}]\nreconnect_min_s = 0.2\nreconnect_max_s = 1\n'
                '\n[sync]\nlanes = 3\n')
    gate = start_gate_and_wait(cfg)
    fifo = os.open(gate_dir / "reads.fifo", os.O_RDWR)
    engine = make_engine(url)
    journal = gate_dir / "state" / "journal.db"

    def journal_seqs() -> list[int]:
        with sqlite3.connect(f"file:{journal}?mode=ro", uri=True) as c:
            return [r[0] for r in c.execute("SELECT seq FROM journal ORDER BY seq")]

    def ledger_seqs() -> list[int]:
        return sorted(r.seq for r in ledger_rows(engine)[0])

    def taps(n: int, start: int) -> None:
        for i in range(start, start + n):
            os.write(fifo, f"F1{i:06X}\n".encode())
            time.sleep(0.02)

    try:
        base = len(journal_seqs())
        taps(40, 0)
        wait_until(lambda: len(ledger_rows(engine)[0]) >= base + 40, timeout=60, what="first taps in the ledger")
        cluster.kill(1)  # lane 1's node
        taps(60, 40)
        wait_until(lambda: len(ledger_rows(engine)[0]) >= base + 100, timeout=120,
                   what="taps after the kill in the ledger")
        cluster.start_node(1)
        taps(20, 100)
        wait_until(lambda: len(journal_seqs()) >= base + 120, timeout=60, what="120 taps journaled")
        wait_until(lambda: ledger_seqs() == journal_seqs(), timeout=180, what="every journal event in the ledger")
        time.sleep(1.0)  # a duplicate insert would show now
        seqs = journal_seqs()
        rows, dead = ledger_rows(engine)
        assert sorted(r.seq for r in rows) == seqs == list(range(1, len(seqs) + 1))
        assert len({r.event_id for r in rows}) == len(rows) and dead == 0
        kill_gate(gate, signal.SIGTERM)
        ingest.stop()
        gate = ingest = None
        replays = ReplayLog()
        replays.read_gate_log(gate_dir / "gate.log")
        done = check_fault_run(url, [journal], keys, tmp_path / "check", replays=replays, shifts_expected=False)
        print(f"lane 1's node killed (portgate edge run, 3 lanes): {done.line()}")
    finally:
        os.close(fifo)
        if gate is not None:
            kill_gate(gate, signal.SIGTERM)
        if ingest is not None:
            ingest.stop()
        engine.dispose()
