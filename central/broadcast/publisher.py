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

    def __init__(self, client, port: str, signer=None) -> None:
        self.client = client
        self.port = port
        self.signer = signer  # wire.signed_downlink.Signer: every payload sealed with the office key

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
        if self.signer is not None:
            body = self.signer.seal(topic, body)
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

    def command(self, gate_id: str, command: msgspec.Struct):
        """Publish ``command`` (a ``wire.downlink.ReplayCommand``) to one gate's ``cmd`` topic, QoS 1,
        sealed like every downlink. Returns paho's ``MQTTMessageInfo``."""
        topic = topics.gate_cmd(self.port, gate_id)
        body = encode(command)
        if self.signer is not None:
            body = self.signer.seal(topic, body)
        return self.client.publish(topic, body, qos=1)


def office_signer(keys_dir):
    """The ``Signer`` of the office's downlinks: the office key (``<keys_dir>/office/signing.key``,
    the one that signs the chain receipts and whose ``signing.pub`` every gate holds), made if
    missing. ``ConfigError`` as ``central.office_key.office_key``."""
    from central.office_key import office_key  # lazy: the publisher is also used without keys
    from wire.signed_downlink import Signer  # lazy: with the key above (cryptography at start-up only when signing)

    return Signer(office_key(keys_dir))
