"""The demo office's own MQTT client for its downlinks (snapshots, photos): on the embedded demo
mosquitto's one port (MQTT 5), on ``portgate demo --cluster`` the NATS nodes' MQTT listeners
(MQTT 3.1.1) through the gates' client (``wire.connection.make_client``/``start``: the host list,
the next node tried on every reconnect), so a node down does not stop the demo.
A broker that does not answer is a ``DemoFailed`` naming the endpoint(s) and the cause."""

from __future__ import annotations

import threading

from app.demo.gate import DemoFailed
from portgate.clitext import tr

CONNECT_S = 30.0  # how long the cluster's nodes are tried, each in turn, before the demo gives up


def mosquitto_client(port: int, client_id: str, host: str = "127.0.0.1"):
    """A paho client (MQTT 5) connected to ``host:port``, its network loop running; the caller
    disconnects it. Raises ``DemoFailed`` naming ``host:port`` and the error when it cannot connect."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5)
    try:
        client.connect(host, port)
    except OSError as exc:
        raise DemoFailed(tr("cli.demo.downlink_no_broker", hosts=f"{host}:{port}",
                            why=f"{type(exc).__name__}: {exc}")) from exc
    client.loop_start()
    return client


def cluster_client(mqtt_hosts: list[tuple[str, int]], client_id: str, *, timeout_s: float = CONNECT_S):
    """A client (MQTT 3.1.1) of the NATS cluster's MQTT listeners ``mqtt_hosts`` (``[(host, port)]``,
    the first tried first, the next on each reconnect, as a gate's ``[mqtt] hosts``), connected, its
    network loop running; the caller disconnects it and stops its loop. Raises ``DemoFailed`` naming
    every endpoint and each one's last cause when none accepted it within ``timeout_s`` seconds: a
    refused or failed connection, or a node that closed the connection before its CONNACK (named
    with the broker's reason)."""
    from wire.connection import MqttConfig, make_client, start
    from wire.diagnosis import current_exception

    config = MqttConfig(protocol="3.1.1", hosts=[f"{h}:{p}" for h, p in mqtt_hosts],
                        reconnect_min_s=0.5, reconnect_max_s=2)
    client = make_client(config, client_id)
    connected, failed = threading.Event(), {}  # endpoint -> its last cause
    client.on_connect = lambda _c, _u, _f, reason, _p: None if reason.is_failure else connected.set()
    logged = client.on_connect_fail

    def on_connect_fail(c, userdata) -> None:
        exc, tried = current_exception(), client.diagnosis.config
        where = f"{tried.host}:{tried.port}"
        failed[where] = f"{where}: {type(exc).__name__}: {exc}" if exc else where
        logged(c, userdata)

    disconnected = client.on_disconnect

    def on_disconnect(c, userdata, flags, reason, properties) -> None:
        if not connected.is_set():  # a node that took the connection and closed it before its CONNACK
            tried = client.diagnosis.config
            where = f"{tried.host}:{tried.port}"
            failed[where] = tr("cli.demo.closed_before_connack", host=where, reason=str(reason))
        disconnected(c, userdata, flags, reason, properties)

    client.on_connect_fail = on_connect_fail
    client.on_disconnect = on_disconnect
    start(client, config)
    if connected.wait(timeout_s):
        return client
    client.disconnect()
    client.loop_stop()
    why = "; ".join(failed[h] for h in config.hosts if h in failed) or f"no CONNACK in {timeout_s:.0f} s"
    raise DemoFailed(tr("cli.demo.downlink_no_broker", hosts=", ".join(config.hosts), why=why))
