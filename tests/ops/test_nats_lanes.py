"""``[sync] lanes`` on a real 3-node NATS cluster (issue 37; wire.gate_link, docs/operations.md "MQTT
3.1.1 trade-offs"): NATS's MQTT layer stores one connection's QoS 1 publishes one after the other,
so a gate with three lanes publishes on three connections, lane ``k`` first to node ``k``. Every
journal event lands in the ledger exactly once; the outbox is emptied by the PUBACKs of all three
lanes; a SIGKILLed node's lane reconnects to another node and what it held goes again; the run
ends with ``check_fault_run`` (audit exit 0)."""

from __future__ import annotations

import uuid

import pytest

from central.db import make_engine
from edge.journal import Journal
from edge.sync import Sync
from edge.sync.settings import SyncSettings
from portgate.config import read_secret
from testkit.nats_office import (gate_mqtt, ledger_rows, now, office_ingest, real_gate_through_a_node_kill,
                                 stream_state, tap)
from testkit.wait import wait_until
from wire.gate_link import LANE_MIDS

pytestmark = [pytest.mark.nats]


def test_three_lanes_carry_a_gate_s_events_exactly_once(tmp_path, nats_cluster):
    cluster = nats_cluster
    keys, url, ingest = office_ingest(tmp_path, cluster, "g1")
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


def test_real_gate_with_lanes_survives_sigkill_of_a_lane_s_node(tmp_path, nats_cluster):
    """``portgate edge run`` with ``[sync] lanes = 3``; node 2 (lane 1's first node) is SIGKILLed
    while taps continue: lane 1 goes on through another node, paho sends again what it held;
    afterwards every journal event is in the ledger exactly once and the audit passes."""
    done = real_gate_through_a_node_kill(tmp_path, nats_cluster, 1, "\n[sync]\nlanes = 3\n")  # lane 1's node
    print(f"lane 1's node killed (portgate edge run, 3 lanes): {done.line()}")
