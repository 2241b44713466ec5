"""What a QoS 1 PUBACK from NATS's MQTT layer means (nats-server 2.9.10, issue 37; docs/operations.md,
"MQTT 3.1.1 trade-offs"): the PUBACK follows the store in the MQTT layer's own replicated stream
``$MQTT_msgs``, not the store in the port's stream, which gets the message as a plain publish with
no reply (``server/mqtt.go`` ``mqttProcessPub``). Shown on a real 3-node cluster: the port's stream
with one replica, its node SIGKILLed; a publish to a surviving node is acknowledged, and the stream,
back with its node, does not have it. The gate's journal and the office's tail repair are the net.
And every QoS 1 publish is stored a second time, in ``$MQTT_msgs`` on all three nodes, even with no
MQTT subscriber (the cluster path's second replicated store per event, docs/performance.md)."""

from __future__ import annotations

import asyncio
import json
import urllib.request

import nats
import paho.mqtt.client as paho
import pytest
from nats.js.api import StorageType, StreamConfig
from paho.mqtt.enums import CallbackAPIVersion

from testkit.wait import wait_until

pytestmark = [pytest.mark.nats]

STREAM, SUBJECT, TOPIC = "PUBACK_pb", "portgate.v1.pb.gate.g1.events", "portgate/v1/pb/gate/g1/events"


@pytest.fixture
def cluster(nats_cluster):
    return nats_cluster  # tests/ops/conftest.py


def js_call(cluster, fn, timeout: float = 60):
    """``fn(js)`` on a fresh connection to the live nodes; ``timeout``: each JetStream API call's."""
    async def run():
        nc = await nats.connect(servers=cluster.live_urls())
        try:
            return await fn(nc.jetstream(timeout=timeout))
        finally:
            await nc.close()

    return asyncio.run(run())


def stream_info(cluster):
    """The stream's info, or None while it cannot answer (its only replica down or electing: no
    reply comes, so each ask waits 5 s, not 60, and the caller's wait asks again)."""
    async def ask(js):
        try:
            return await js.stream_info(STREAM)
        except Exception:  # noqa: BLE001 - unavailable: asked again by the caller's wait
            return None

    return js_call(cluster, ask, timeout=5)


def acknowledged(cluster, node: int, client_id: str, payload: bytes) -> bool:
    """One QoS 1 publish over MQTT 3.1.1 to ``node``'s listener; True when its PUBACK came (the
    connection may be refused or closed while the MQTT layer's streams elect: False, try again)."""
    host, port = cluster.mqtt_hosts[node]
    c = paho.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=paho.MQTTv311, clean_session=True)
    try:
        c.connect(host, port, keepalive=30)
    except OSError:
        return False
    c.loop_start()
    try:
        info = c.publish(TOPIC, payload, qos=1)
        info.wait_for_publish(timeout=60)
        return info.is_published()
    except (RuntimeError, ValueError):
        return False
    finally:
        c.disconnect()
        c.loop_stop()


def test_a_puback_does_not_mean_the_port_stream_stored_it(cluster):
    js_call(cluster, lambda js: js.add_stream(StreamConfig(name=STREAM, subjects=[SUBJECT], num_replicas=1,
                                                           storage=StorageType.FILE)))
    leader = wait_until(lambda: (i := stream_info(cluster)) and i.cluster and i.cluster.leader, timeout=60,
                        what="the stream's node")
    holder = next(i for i, n in enumerate(cluster.nodes) if n.name == leader)
    other = (holder + 1) % len(cluster.nodes)
    wait_until(lambda: acknowledged(cluster, other, "pub-before", b"before"), timeout=120,
               what="a PUBACK while every node runs")
    wait_until(lambda: (i := stream_info(cluster)) and i.state.messages == 1, timeout=60,
               what="the first message in the port's stream")

    cluster.kill(holder)  # the port's stream has no replica left; $MQTT_msgs (3 replicas) keeps its quorum
    wait_until(lambda: acknowledged(cluster, other, "pub-after", b"after"), timeout=120,
               what=f"a PUBACK from {cluster.nodes[other].name} with {leader} down")

    cluster.start_node(holder)
    # the port's stream back on its node is what is asserted; the whole cluster's health waits for
    # the MQTT layer's own consumers to be current on the restarted node too (over 60 s at CI load)
    info = wait_until(lambda: (i := stream_info(cluster)) and i.state.last_seq >= 1 and i, timeout=180,
                      what="the port's stream back with its first message")
    assert info.state.messages == 1 and info.state.last_seq == 1, (
        "the message acknowledged while the stream's node was down reached the stream")


def test_every_qos1_publish_is_also_stored_in_mqtt_msgs_on_every_node(cluster):
    host, port = cluster.mqtt_hosts[0]
    c = paho.Client(CallbackAPIVersion.VERSION2, client_id="pub-count", protocol=paho.MQTTv311, clean_session=True)
    c.connect(host, port, keepalive=30)
    c.loop_start()
    try:
        infos = [c.publish(TOPIC, b"x", qos=1) for _ in range(50)]
        for info in infos:
            info.wait_for_publish(timeout=60)
        assert all(i.is_published() for i in infos), "a PUBACK missing"
    finally:
        c.disconnect()
        c.loop_stop()

    def mqtt_msgs(node) -> dict:
        with urllib.request.urlopen(f"http://127.0.0.1:{node.http_port}/jsz?streams=true", timeout=5) as r:
            details = json.loads(r.read()).get("account_details", [])
        return next((s["state"] for a in details for s in a.get("stream_detail", []) if s["name"] == "$MQTT_msgs"), {})

    # no stream captures the topic and nobody subscribes: the MQTT layer's copy is made anyway, on all
    # three replicas (interest retention then drops it: nothing kept); >= 50: a resend after a
    # reconnect would be stored again
    states = wait_until(lambda: (st := [mqtt_msgs(n) for n in cluster.nodes]) and all(x.get("last_seq", 0) >= 50 for x in st)
                        and st, timeout=60, what="50 publishes stored in $MQTT_msgs on every node")
    assert all(x.get("messages") == 0 for x in states)
