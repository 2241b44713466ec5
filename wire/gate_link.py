"""The gate's MQTT link: paho behind four calls, its callbacks turned into plain tuples.

``GateLink`` owns the gate's paho client (``wire.connection.make_client``: MQTT v5, persistent
session, reconnect back-off forever). paho calls back on its network thread, possibly before
``publish()`` has returned the message id to the caller; so a callback only appends one tuple to
the caller's ``inputs`` deque and calls ``wake()``, and whoever drains the deque (the gate's uplink
pump, a single thread) records each mid before it reads the acks that follow:

- ``("connect", session_present)`` after a CONNACK that accepted the session (the subscriptions
  given at construction are made first; a refused CONNACK is logged and not queued),
- ``("disconnect", reason)`` (reason: str),
- ``("ack", mid, rc)`` for every PUBACK, ``rc`` the MQTT v5 reason code as an int,
- ``("message", topic, payload)`` for every message received (payload: bytes).

``connected`` (``threading.Event``) is set on the network thread at once, for watchers (the gate's
heartbeat, tests). The gate imports paho only through this module and ``wire.connection``.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable

import msgspec
import structlog
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.reasoncodes import ReasonCode

from wire import connection

log = structlog.get_logger("edge.sync")
LANE_MIDS = 65536  # lane k's message ids are k * LANE_MIDS + paho's mid (1-65535): never two lanes' alike


def reason_name(rc: int) -> str:
    """The MQTT v5 name of a PUBACK reason code (``0x87`` -> ``"Not authorized"``)."""
    try:
        return ReasonCode(PacketTypes.PUBACK, identifier=rc).getName()
    except KeyError:
        return f"reason {rc:#04x}"


class GateLink:
    """One gate's paho client. ``will`` is ``(topic, payload)`` of the retained Last Will,
    ``subscriptions`` ``[(topic filter, qos), ...]`` made on every connect, ``window`` the
    in-flight limit (paho's ``max_inflight_messages``; nothing is queued beyond it).

    ``lanes`` > 1 (``[sync] lanes``, a NATS cluster's MQTT 3.1.1 listeners only): ``publish_many``
    spreads the events over that many connections, the first one this client (subscriptions, Last
    Will, statuses, requests, ``connected``) and ``lanes - 1`` publish-only clients (``_lane``).
    Each event goes to the connected lane with the fewest messages not yet acknowledged; a lane
    that is down keeps what it holds and paho sends it again when that lane is back, as on the
    single connection. ``("ack", mid, rc)`` names the lane in the mid (``k * LANE_MIDS + mid``),
    so a PUBACK releases only its own lane's message."""

    def __init__(self, config: connection.MqttConfig, client_id: str, *, will: tuple[str, bytes],
                 subscriptions: list[tuple[str, int]], window: int,
                 inputs: collections.deque, wake: Callable[[], None], gate_id: str, lanes: int = 1) -> None:
        self.config = config
        self.gate_id = gate_id
        self.inputs = inputs
        self.wake = wake
        self.subscriptions = subscriptions
        self.connected = threading.Event()
        self.client = connection.make_client(config, client_id)
        self.client.max_inflight_messages_set(window)
        self.client.max_queued_messages_set(0)
        self.client.fast_pubacks = True  # a PUBACK per event: wire.connection's fast path
        self.client.will_set(will[0], will[1], qos=1, retain=True)
        self.client.on_connect = self._on_connect
        self._log_disconnect = self.client.on_disconnect  # wire.connection.log_disconnect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_publish = self._on_publish
        self.client.on_message = self._on_message
        self.lanes = [self.client]
        self._lane_configs = [config]
        for k in range(1, lanes):
            self._lane(config, client_id, k, window)

    def _lane(self, config: connection.MqttConfig, client_id: str, k: int, window: int) -> None:
        """Add publish-only client ``k`` (>= 1) of the gate's events: its own persistent session
        (client id ``<client_id>-lane<k>``; no subscriptions, no Last Will), trying the ``hosts``
        from the ``k``-th on (a cluster's nodes share the sessions; the next one on reconnect)."""
        shift = k % len(config.hosts) if config.hosts else 0
        lane_config = msgspec.structs.replace(config, hosts=config.hosts[shift:] + config.hosts[:shift])
        client = connection.make_client(lane_config, f"{client_id}-lane{k}")
        client.max_inflight_messages_set(window)
        client.max_queued_messages_set(0)
        client.fast_pubacks = True

        def on_publish(_client, userdata, mid, reason_code, properties) -> None:
            self._on_publish(_client, userdata, k * LANE_MIDS + mid, reason_code, properties)

        client.on_publish = on_publish
        self.lanes.append(client)
        self._lane_configs.append(lane_config)

    def start(self) -> None:
        """Connect in the background, retrying forever."""
        for client, config in zip(self.lanes, self._lane_configs, strict=True):
            connection.start(client, config)

    def publish(self, topic: str, body: bytes, *, retain: bool = False) -> int:
        """Publish at QoS 1; returns the message id its PUBACK will carry."""
        return self.client.publish(topic, body, qos=1, retain=retain).mid

    def publish_many(self, topic: str, bodies: list[bytes]) -> list[int]:
        """Publish each body at QoS 1, in order, as one write to the broker
        (``wire.connection._Client.publish_many``); returns each one's message id, the id its own
        PUBACK will carry. With lanes, spread over them (``spread``); the mids name the lane."""
        if len(self.lanes) == 1:
            return self.client.publish_many(topic, bodies)
        held = [len(c._out_messages) if c.is_connected() else None for c in self.lanes]
        mids = [0] * len(bodies)
        for k, picked in enumerate(spread(held, len(bodies))):
            if picked:
                sent = self.lanes[k].publish_many(topic, [bodies[i] for i in picked])
                for i, mid in zip(picked, sent, strict=True):
                    mids[i] = k * LANE_MIDS + mid
        return mids

    def publish_wait(self, topic: str, body: bytes, timeout: float, *, retain: bool = False) -> bool:
        """Publish at QoS 1 and wait up to ``timeout`` s for its PUBACK (on stop); no error if it
        does not come. Returns True when it was acknowledged."""
        info = self.client.publish(topic, body, qos=1, retain=retain)
        try:
            info.wait_for_publish(timeout)
        except (RuntimeError, ValueError):
            return False
        return info.is_published()

    def stop(self) -> None:
        for client in self.lanes:
            client.disconnect()
            client.loop_stop()

    # -- paho callbacks (network thread): only queue and wake -----------------------------------
    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        if reason_code.is_failure:
            log.warning("mqtt.connect_refused", gate_id=self.gate_id, reason=str(reason_code))
            return
        client.subscribe(self.subscriptions)
        self.connected.set()
        log.info("mqtt.connected", gate_id=self.gate_id, session_present=flags.session_present)
        self.inputs.append(("connect", bool(flags.session_present)))
        self.wake()

    def _on_disconnect(self, client, userdata, flags, reason_code, properties) -> None:
        self.connected.clear()
        self._log_disconnect(client, userdata, flags, reason_code, properties)
        log.info("mqtt.disconnected", gate_id=self.gate_id, reason=str(reason_code))
        self.inputs.append(("disconnect", str(reason_code)))
        self.wake()

    def _on_publish(self, client, userdata, mid, reason_code, properties) -> None:
        self.inputs.append(("ack", mid, reason_code.value))
        self.wake()

    def _on_message(self, client, userdata, message) -> None:
        self.inputs.append(("message", message.topic, bytes(message.payload)))
        self.wake()


def spread(held: list[int | None], n: int) -> list[list[int]]:
    """Which of ``n`` events (indices, in order) each lane takes: each to the lane holding the
    fewest unacknowledged messages then (``held[k]``; None: lane ``k`` is down and takes none, all
    down: lane 0 takes them all, paho keeps them for its reconnect)."""
    counts = list(held)
    if all(c is None for c in counts):
        return [list(range(n))] + [[] for _ in counts[1:]]
    picked: list[list[int]] = [[] for _ in counts]
    for i in range(n):
        k = min((c, k) for k, c in enumerate(counts) if c is not None)[1]
        picked[k].append(i)
        counts[k] += 1
    return picked
