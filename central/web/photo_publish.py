"""The office web application sending a worker's photo to the gates at once: after an upload (or
a replacement) the photos directory goes out through the photo downlink
(``central.broadcast.photos.publish_photos``: a delta with the changed index rows, the new file, then the
new retained index), on a one-shot MQTT connection (no session) as ``portgate central publish
--photos`` does. One publish at a time per directory (the manifest ``.published.json`` is read and
written by each)."""

from __future__ import annotations

import ssl
import threading
from collections.abc import Callable
from pathlib import Path

from central.broadcast.photos import publish_photos
from portgate.errors import BrokerUnavailable, ConfigError
from wire import connection


def one_shot_client(mqtt_config, client_id: str):
    """A paho client connected to the broker of ``mqtt_config`` with no session kept (one-shot),
    its network loop started; the caller disconnects it and stops the loop. Raises ``ConfigError``
    for a TLS setting, ``BrokerUnavailable`` when the broker cannot be reached."""
    client = connection.make_client(mqtt_config, client_id)
    props = connection.connect_properties(mqtt_config)
    props.SessionExpiryInterval = 0  # one-shot: no session kept on the broker
    try:
        client.connect(mqtt_config.host, mqtt_config.port, keepalive=30, clean_start=True, properties=props)
    except ssl.SSLError as exc:  # a subclass of OSError: a TLS setting, not an outage
        raise ConfigError(f"MQTT TLS: {exc}", key="mqtt", path="central.toml") from exc
    except OSError as exc:
        raise BrokerUnavailable(f"MQTT broker {mqtt_config.host}:{mqtt_config.port} not reachable: "
                                f"{exc.strerror or exc}") from exc
    client.loop_start()
    return client


def photo_publisher(mqtt_config, port: str, signer=None) -> Callable[[Path], dict]:
    """``publish(photos_dir) -> {"version", "files", "removed", "delta"}`` over the broker of
    ``mqtt_config`` (``wire.connection.MqttConfig``) for port ``port``. ``publish`` raises
    ``BrokerUnavailable`` when the broker cannot be reached or does not acknowledge within 30 s
    (the photo stays in the directory and goes with the next publish), ``BadInput``
    for a directory with a bad file (``central.broadcast.photos.scan``), ``ConfigError`` for a TLS or password
    file setting."""
    lock = threading.Lock()

    def publish(photos_dir: Path) -> dict:
        with lock:
            client = one_shot_client(mqtt_config, f"office-web-photos-{port}")
            try:
                return publish_photos(client, port, photos_dir, signer=signer)
            finally:
                client.disconnect()
                client.loop_stop()

    return publish
