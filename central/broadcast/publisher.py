"""The one way the office puts a downlink message on the broker.

Every source (CSV snapshots, registry snapshots and deltas, the blocklist, the presence relay,
workers' photos) hands its message to ``Publisher.send(kind, form, message)``: topic
``portgate/v1/{port}/down/{kind}/{form}`` (``wire.topics.downlink``), QoS 1, retained when the form
is ``snapshot`` (a gate that connects later gets the newest at once), not retained otherwise
(deltas, photo files).
"""

from __future__ import annotations

import msgspec

from portgate.errors import BrokerUnavailable
from wire import topics
from wire.downlink import encode


class Publisher:
    """Publishes downlink messages of one port on a connected paho client (or anything with paho's
    ``publish(topic, payload, qos=, retain=)``)."""

    def __init__(self, client, port: str) -> None:
        self.client = client
        self.port = port

    def send(self, kind: str, form: str, message: msgspec.Struct | bytes, *, wait: float | None = None,
             what: str | None = None):
        """Publish ``message`` (a ``wire.downlink`` struct, or its encoded bytes) on ``down/{kind}/{form}``.

        Returns paho's ``MQTTMessageInfo``. With ``wait`` (seconds), waits for the PUBACK and raises
        ``BrokerUnavailable`` naming ``what`` (default ``"{kind} {form}"``) if the broker did not
        acknowledge it in time or the connection was lost (the gates did not get it: publish again);
        a PUBACK with a failure reason (e.g. not authorised) is the caller's to see (``on_publish``).
        Without ``wait`` it returns at once (paho delivers it while connected)."""
        body = message if isinstance(message, bytes) else encode(message)
        topic = topics.downlink(self.port, kind, form)
        if wait is None:
            return self.client.publish(topic, body, qos=1, retain=form == "snapshot")
        what = what or f"{kind} {form}"
        try:
            info = self.client.publish(topic, body, qos=1, retain=form == "snapshot")
            info.wait_for_publish(wait)
        except (RuntimeError, ValueError) as exc:  # paho: not connected, or the publish failed
            raise BrokerUnavailable(f"{what} not published: {exc}") from exc
        if not info.is_published():
            raise BrokerUnavailable(f"{what} not acknowledged by the broker within {wait:g} s")
        return info
