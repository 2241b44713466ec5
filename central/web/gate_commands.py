"""The office web application sending one gate a command at once (issue 34: enrol mode): a
one-shot MQTT connection (no session kept), the command sealed with the office key
(``central.broadcast.publisher.Publisher.command``) on the gate's ``cmd`` topic, QoS 1, and the
broker's PUBACK awaited, as ``central.web.photo_publish`` does for photos."""

from __future__ import annotations

import threading
from collections.abc import Callable

from central.broadcast.publisher import Publisher
from central.web.photo_publish import one_shot_client
from portgate.errors import BrokerUnavailable

WAIT_S = 10.0


def command_sender(mqtt_config, port: str, signer=None) -> Callable[[str, object], None]:
    """``send(gate_id, command)`` over the broker of ``mqtt_config`` (``wire.connection.MqttConfig``)
    for port ``port``; ``command`` a ``wire.downlink`` command (``EnrolCommand``). ``send`` raises
    ``BrokerUnavailable`` when the broker cannot be reached or does not acknowledge within
    ``WAIT_S`` (the gate did not get it: say so to the clerk), ``ConfigError`` for a TLS or
    password file setting. The gate gets a QoS 1 command while it is connected; one sent while it
    is offline waits in its persistent session and is applied only before its deadline."""
    lock = threading.Lock()

    def send(gate_id: str, command) -> None:
        with lock:
            client = one_shot_client(mqtt_config, f"office-web-cmd-{port}")
            try:
                info = Publisher(client, port, signer).command(gate_id, command)
                try:
                    info.wait_for_publish(WAIT_S)
                except (RuntimeError, ValueError) as exc:
                    raise BrokerUnavailable(f"command to gate {gate_id} not published: {exc}") from exc
                if not info.is_published():
                    raise BrokerUnavailable(f"command to gate {gate_id} not acknowledged within {WAIT_S:g} s")
            finally:
                client.disconnect()
                client.loop_stop()

    return send
