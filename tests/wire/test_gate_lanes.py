"""``[sync] lanes`` (wire.gate_link.GateLink, issue 37): the gate's events spread over several MQTT
3.1.1 connections, each PUBACK naming its own lane's message, a lane that is down skipped; shown on
a real mosquitto speaking 3.1.1 (the NATS cluster's run: tests/ops/test_nats_lanes.py). And the
gate config refuses lanes on MQTT 5 (mosquitto gives every connection of a gate one client id)."""

from __future__ import annotations

import collections
import threading

import msgspec
import pytest

from app.demo.mosquitto import Mosquitto
from edge.sync.settings import SyncSettings
from portgate.errors import ConfigError
from testkit.gate_process import write_gate_config
from testkit.wait import wait_until
from tests.wire.test_qos1_batch import _stop, _subscriber
from wire.connection import MqttConfig
from wire.gate_link import LANE_MIDS, GateLink, spread


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    m = Mosquitto(tmp_path_factory.mktemp("broker")).start()
    yield m
    m.kill()


def test_spread_gives_each_event_to_the_emptiest_live_lane():
    assert spread([0, 0, 0], 7) == [[0, 3, 6], [1, 4], [2, 5]]
    assert spread([4, 0, 2], 4) == [[], [0, 1, 2], [3]]  # fills the emptier lanes first
    assert spread([5, None, 0], 4) == [[], [], [0, 1, 2, 3]]  # lane 1 down: none for it
    assert spread([None, None], 3) == [[0, 1, 2], []]  # all down: lane 0 keeps them for its reconnect
    assert spread([0], 2) == [[0, 1]]


def _link(broker, name: str, lanes: int):
    inputs, woken = collections.deque(), threading.Event()
    link = GateLink(MqttConfig(host=broker.host, port=broker.port, protocol="3.1.1"), f"gate-{name}",
                    will=(f"lanes/{name}/status", b"offline"), subscriptions=[(f"lanes/{name}/cmd", 1)], window=100,
                    inputs=inputs, wake=woken.set, gate_id=name, lanes=lanes)
    link.start()
    wait_until(lambda: all(c.is_connected() for c in link.lanes), timeout=30, what="every lane connected")
    return link, inputs


def test_each_puback_names_its_own_lane_and_message(broker):
    sub, got = _subscriber(broker, "sub-lanes")
    link, inputs = _link(broker, "lanes3", 3)
    topic = "t/lanes3/events"  # the subscriber takes t/#
    bodies = [b"event %d" % i for i in range(300)]
    try:
        mids = link.publish_many(topic, bodies[:150]) + link.publish_many(topic, bodies[150:])
        assert len(set(mids)) == 300
        by_lane = collections.Counter(m // LANE_MIDS for m in mids)
        assert set(by_lane) == {0, 1, 2} and min(by_lane.values()) >= 50  # each carries a share (the first 150: 50 each)
        wait_until(lambda: len(got) >= 300 and sum(i[0] == "ack" for i in inputs) >= 300, timeout=60,
                   what=lambda: f"300 messages and acks, seen {len(got)} and {len(inputs)}")
        acks = [i for i in inputs if i[0] == "ack"]
        assert sorted(m for _k, m, _rc in acks) == sorted(mids) and {rc for *_x, rc in acks} == {0}
        assert sorted(b for t, b in got if t == topic) == sorted(bodies)  # each once
        assert all(not c._out_messages for c in link.lanes)  # every lane's session holds nothing
        # a lane that is down takes nothing; the others carry the events
        link.lanes[2].disconnect()
        wait_until(lambda: not link.lanes[2].is_connected(), timeout=30, what="lane 2 down")
        more = link.publish_many(topic, [b"later %d" % i for i in range(40)])
        assert {m // LANE_MIDS for m in more} == {0, 1}
        wait_until(lambda: sum(i[0] == "ack" for i in inputs) >= 340, timeout=60, what="the later acks")
    finally:
        link.stop()
        _stop(sub)


def test_one_lane_is_the_single_connection_as_before(broker):
    link, inputs = _link(broker, "lanes1", 1)
    try:
        assert link.lanes == [link.client]
        mids = link.publish_many("lanes/lanes1/events", [b"a", b"b"])
        assert all(0 < m < LANE_MIDS for m in mids)
        wait_until(lambda: sum(i[0] == "ack" for i in inputs) >= 2, timeout=30, what="2 acks")
    finally:
        link.stop()


def test_lanes_need_mqtt311_and_stay_in_range(tmp_path):
    from edge.config import load_gate_config

    cfg = write_gate_config(tmp_path / "g")
    text = cfg.read_text()
    cfg.write_text(text + '\n[mqtt]\nhost = "127.0.0.1"\n\n[sync]\nlanes = 3\n')
    with pytest.raises(ConfigError, match="lanes"):
        load_gate_config(cfg)
    cfg.write_text(text + '\n[mqtt]\nprotocol = "3.1.1"\nhosts = ["127.0.0.1:1883"]\n\n[sync]\nlanes = 3\n')
    assert load_gate_config(cfg).sync.lanes == 3
    assert SyncSettings().lanes == 1
    for bad in (0, 17):
        with pytest.raises(msgspec.ValidationError):
            msgspec.convert({"lanes": bad}, SyncSettings)
