"""wire.qos1_batch on a real mosquitto: ``publish_many`` delivers each body once, in order, each
acknowledged by the PUBACK of its own message id, the bodies beyond the in-flight limit held back
and sent as acks free room, on MQTT v5 and 3.1.1 (the gates' link to a NATS cluster); the PUBACK
fast path (``fast_pubacks``) hands ``on_publish`` the same mid and reason code paho's reader does (success,
"No matching subscribers") and leaves paho's session empty."""

from __future__ import annotations

import threading

import pytest

from app.demo.mosquitto import Mosquitto
from testkit.wait import wait_until
from wire.connection import MqttConfig, make_client
from tests.wire.test_connection import _subscribe_on_connect


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    m = Mosquitto(tmp_path_factory.mktemp("broker")).start()
    yield m
    m.kill()


def _subscriber(broker, client_id: str):
    got, lock = [], threading.Lock()
    c = make_client(MqttConfig(host=broker.host, port=broker.port), client_id)

    def on_message(_c, _u, m):
        with lock:
            got.append((m.topic, bytes(m.payload)))

    c.on_message = on_message
    subscribed = _subscribe_on_connect(c)
    c.connect(broker.host, broker.port, clean_start=False)
    c.loop_start()
    wait_until(subscribed.is_set, timeout=30, what="the subscriber's SUBACK")
    return c, got


def _publisher(broker, client_id: str, *, fast: bool, window: int = 100, protocol: str = "5"):
    acks, lock = [], threading.Lock()
    c = make_client(MqttConfig(host=broker.host, port=broker.port, protocol=protocol), client_id)
    c.max_inflight_messages_set(window)
    c.max_queued_messages_set(0)
    c.fast_pubacks = fast
    connected = threading.Event()
    c.on_connect = lambda *a: connected.set()

    def on_publish(_c, _u, mid, reason, _props):
        with lock:
            acks.append((mid, reason.value))

    c.on_publish = on_publish
    if protocol == "5":
        c.connect(broker.host, broker.port, clean_start=False)
    else:
        c.connect(broker.host, broker.port)
    c.loop_start()
    wait_until(connected.is_set, timeout=30, what="the publisher's CONNACK")
    return c, acks


def _stop(*clients) -> None:
    for c in clients:
        c.disconnect()
        c.loop_stop()


@pytest.mark.parametrize("fast, window, protocol", [(True, 100, "5"), (False, 100, "5"), (True, 3, "5"),
                                                    (True, 100, "3.1.1")])
def test_publish_many_delivers_each_body_once_in_order_acked_by_its_own_mid(broker, fast, window, protocol, mocker):
    import paho.mqtt.client as mqtt

    paho_reader = mocker.spy(mqtt.Client, "_handle_pubackcomp")
    sub, got = _subscriber(broker, f"sub-{fast}-{window}-{protocol}")
    pub, acks = _publisher(broker, f"pub-{fast}-{window}-{protocol}", fast=fast, window=window, protocol=protocol)
    topic = f"t/many/{fast}/{window}/{protocol}"
    bodies = [f"body {i}".encode() * (1 + i % 7) for i in range(250)]
    mids = pub.publish_many(topic, bodies[:120]) + pub.publish_many(topic, bodies[120:])
    try:
        assert len(mids) == len(set(mids)) == 250
        wait_until(lambda: len(acks) >= 250 and len(got) >= 250, timeout=60,
                   what=lambda: f"250 acks and messages, seen {len(acks)} acks and {len(got)} messages")
        assert [b for t, b in got if t == topic] == bodies  # each once, in order
        assert sorted(m for m, _rc in acks) == sorted(mids) and {rc for _m, rc in acks} == {0}
        assert not pub._out_messages and pub._inflight_messages == 0  # paho's session holds nothing
        # the fast path took every PUBACK (v5 and 3.1.1) when asked to, paho's reader otherwise
        assert paho_reader.call_count == (0 if fast else 250)
    finally:
        _stop(pub, sub)


@pytest.mark.parametrize("protocol", ["5", "3.1.1"])
def test_publish_many_hands_the_run_to_the_network_thread_as_one_write(broker, protocol, mocker):
    """Within the in-flight window a run of bodies is one queued write on v5 and on 3.1.1 (paho's
    ``publish`` queues a packet and wakes the network thread per message); with a paho logger set
    it falls back to paho's ``publish`` per body, which still delivers them."""
    import paho.mqtt.client as mqtt

    sub, got = _subscriber(broker, f"sub-onewrite-{protocol}")
    pub, acks = _publisher(broker, f"pub-onewrite-{protocol}", fast=True, protocol=protocol)
    queued = mocker.spy(mqtt.Client, "_packet_queue")
    topic = f"t/onewrite/{protocol}"

    def writes():  # the publisher's queued packets' commands (the subscriber queues its PUBACKs)
        return [c.args[1] for c in queued.call_args_list if c.args[0] is pub]

    try:
        pub.publish_many(topic, [b"a%d" % i for i in range(50)])
        assert writes() == [0x32]  # one PUBLISH write for the 50
        pub.enable_logger()
        pub.publish_many(topic, [b"logged"])
        assert writes()[1:] == [0x30]  # paho's own publish (its PUBLISH command)
        wait_until(lambda: len(acks) >= 51 and len(got) >= 51, timeout=60,
                   what=lambda: f"51 acks and messages, seen {len(acks)} acks and {len(got)} messages")
        assert [b for t, b in got if t == topic] == [b"a%d" % i for i in range(50)] + [b"logged"]
        assert {rc for _m, rc in acks} == {0} and not pub._out_messages
    finally:
        _stop(pub, sub)


def test_the_puback_fast_path_reports_no_matching_subscribers_like_paho(broker):
    """A PUBACK with a reason code (0x10: nobody subscribed) reaches ``on_publish`` with that code,
    through the fast path as through paho's reader; the message still leaves paho's session."""
    seen = {}
    for fast in (True, False):
        pub, acks = _publisher(broker, f"lonely-{fast}", fast=fast)
        try:
            mids = pub.publish_many(f"nobody/{fast}", [b"a", b"b"])
            wait_until(lambda: len(acks) >= 2, timeout=30, what=lambda: f"2 acks, seen {acks}")
            seen[fast] = sorted(acks)
            assert sorted(m for m, _rc in acks) == sorted(mids) and not pub._out_messages
        finally:
            _stop(pub)
    assert [rc for _m, rc in seen[True]] == [rc for _m, rc in seen[False]] == [0x10, 0x10]


def test_a_body_over_mqtt_s_limit_is_refused_before_any_message_is_taken(broker):
    pub, _acks = _publisher(broker, "too-big", fast=True)
    try:
        class Huge(bytes):
            def __len__(self):
                return 268435456

        with pytest.raises(ValueError, match="too large"):
            pub.publish_many("t/big", [b"fine", Huge(b"x")])
        assert not pub._out_messages and pub._inflight_messages == 0
        with pytest.raises(ValueError):
            pub.publish_many("t/+/wild", [b"x"])
    finally:
        _stop(pub)
