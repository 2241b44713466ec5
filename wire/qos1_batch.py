"""QoS 1 at a high rate on one paho client, both ways (``wire.connection._Client`` inherits it):

- ``publish_many``: a run of QoS 1 publishes, each kept in paho's session as its own ``publish``
  keeps it, their packets handed to the network thread as one write (paho wakes that thread and
  sends a packet per message);
- ``fast_pubacks`` (opt-in: the gate's link, ``wire.gate_link``): a PUBACK without properties
  released as paho's ``_handle_pubackcomp`` releases it, with shared ``ReasonCode`` and
  ``Properties`` objects instead of two decoded per packet, and paho's walk over every message kept
  for held-back ones skipped while none is held back.

Both apply on MQTT v5 and on MQTT 3.1.1 (the gates' link to a NATS cluster's MQTT layer, issue
37: its PUBLISH has no properties byte, its PUBACK is the message id alone, which paho reports as
reason "success"), not while a paho logger is set. Measured on the gate's outbox drain
(``bench/outbox_drain.py``, docs/performance.md "Outbox drain") and on the cluster's
(``bench/cluster.py``, docs/performance.md "The scale-out tiers").
What a message's PUBACK means is unchanged: ``on_publish`` gets that message's own id and reason.
"""

from __future__ import annotations

import struct

import paho.mqtt.client as mqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode

_PUBLISH_QOS1 = 0x32  # PUBLISH, QoS 1, not dup, not retained
_NO_PUBACK_PROPERTIES = Properties(PacketTypes.PUBACK)  # shared by the PUBACK fast path (never written)
_PUBACK_REASONS: dict[int, ReasonCode | None] = {}


def _puback_reason(code: int) -> ReasonCode | None:
    """The shared ``ReasonCode`` of a PUBACK reason ``code``, None for a code PUBACK does not have."""
    try:
        return _PUBACK_REASONS[code]
    except KeyError:
        try:
            reason = ReasonCode(PacketTypes.PUBACK, identifier=code)
        except Exception:  # noqa: BLE001 - paho raises KeyError/MalformedPacket: its reader reports it
            reason = None
        return _PUBACK_REASONS.setdefault(code, reason)


class Qos1Batch:
    """The mixin (its methods use paho's ``mqtt.Client`` internals)."""

    def _fast_qos1(self) -> bool:
        """MQTT v5 or 3.1.1 and no paho logger: ``publish_many``'s one write and the PUBACK fast path apply."""
        return self._protocol in (mqtt.MQTTv5, mqtt.MQTTv311) and self._logger is None and self._on_log is None

    def publish_many(self, topic: str, bodies: list[bytes]) -> list[int]:
        """Publish each of ``bodies`` on ``topic`` at QoS 1 (no retain, no properties) as paho's
        ``publish`` does -- a message id of its own, the message kept in paho's session until the
        PUBACK of that id (``on_publish``) and sent again on reconnect, held back (queued) beyond
        ``max_inflight_messages`` -- but the PUBLISH packets handed to the network thread as one
        write: paho's ``publish`` wakes that thread and sends one packet per message, which cost
        the gate's outbox drain a wake-up and a ``send`` per event. Returns the message ids in
        order (a mid still in use after the ids wrapped is returned unsent, as paho does). MQTT
        3.1 (not 3.1.1), a paho logger or no connection: paho's ``publish`` per body. Raises ``ValueError``
        for a topic with wildcards or a body over MQTT's 268,435,455 bytes, as paho does."""
        if not self._fast_qos1() or self._sock is None:
            return [self.publish(topic, body, qos=1).mid for body in bodies]
        v5 = self._protocol == mqtt.MQTTv5  # a properties length byte (0) after the message id
        topic_bytes = topic.encode("utf-8")
        self._raise_for_invalid_topic(topic_bytes)
        if any(len(body) > 268435455 for body in bodies):  # before any message is taken in
            raise ValueError("Payload too large.")
        head = struct.pack("!H", len(topic_bytes)) + topic_bytes
        blob, mids = bytearray(), []
        with self._out_message_mutex:
            for body in bodies:
                mid = self._mid_generate()
                mids.append(mid)
                message = mqtt.MQTTMessage(mid, topic_bytes)
                message.timestamp = mqtt.time_func()
                message.payload, message.qos, message.retain, message.dup = bytes(body), 1, False, False
                full = 0 < self._max_queued_messages <= len(self._out_messages)
                if full or mid in self._out_messages:
                    message.info.rc = mqtt.MQTTErrorCode.MQTT_ERR_QUEUE_SIZE
                    continue
                self._out_messages[mid] = message
                message.info.rc = mqtt.MQTTErrorCode.MQTT_ERR_SUCCESS
                if self._max_inflight_messages and self._inflight_messages >= self._max_inflight_messages:
                    message.state = mqtt.mqtt_ms_queued  # sent by paho when a PUBACK frees a slot
                    continue
                self._inflight_messages += 1
                message.state = mqtt.mqtt_ms_wait_for_puback
                blob.append(_PUBLISH_QOS1)
                self._pack_remaining_length(blob, len(head) + 2 + v5 + len(message.payload))
                blob += head
                blob += struct.pack("!HB", mid, 0) if v5 else struct.pack("!H", mid)  # v5: then no properties
                blob += message.payload
            if blob:
                self._packet_queue(_PUBLISH_QOS1, bytes(blob), mids[-1], 1, None)
        return mids

    #: The PUBACK fast path (``_fast_puback``), for a client that publishes QoS 1 at a high rate
    #: (the gate's link, ``wire.gate_link``); other clients keep paho's handling.
    fast_pubacks = False

    def _fast_puback(self, buf: bytes, i: int, length: int):
        """A v5 PUBACK without properties (``buf[i:i + length]``: the mid, then the reason code or
        nothing for "success"), or a 3.1.1 PUBACK (the mid alone: "success", as paho reports it), handled as paho's ``_handle_pubackcomp`` handles it -- ``on_publish``
        with the mid, a ``ReasonCode`` and an empty ``Properties`` (one shared object of each per
        reason code, read-only for callbacks), the message released from paho's session -- without
        decoding a new ``ReasonCode`` and ``Properties`` per packet. None: not such a packet (with
        properties, an unknown reason code): paho's own reader takes it."""
        if not (self.fast_pubacks and self._fast_qos1()):
            return None
        if length == 2:
            code = 0
        elif self._protocol != mqtt.MQTTv5:
            return None  # malformed on 3.1.1: paho's reader reports it
        elif length == 3 or (length == 4 and buf[i + 3] == 0):
            code = buf[i + 2]
        else:
            return None
        reason = _puback_reason(code)
        if reason is None:
            return None
        mid = (buf[i] << 8) | buf[i + 1]
        with self._out_message_mutex:
            if mid in self._out_messages:
                return self._do_on_publish(mid, reason, _NO_PUBACK_PROPERTIES)
        return mqtt.MQTTErrorCode.MQTT_ERR_SUCCESS

    def _update_inflight(self):
        """paho's: after a PUBACK, send the messages held back (queued) beyond
        ``max_inflight_messages``; it walks every message kept, so with ``fast_pubacks`` it is
        skipped when every message kept is counted in flight (none is held back)."""
        if self.fast_pubacks and len(self._out_messages) <= self._inflight_messages:
            return mqtt.MQTTErrorCode.MQTT_ERR_SUCCESS
        return super()._update_inflight()
