"""The broker connection's settings (TOML ``[mqtt]``): ``MqttConfig``, kept apart from the paho
client factory (``wire.connection``, which re-exports it) so a process that only reads a gate's
configuration (the watchman's screen, ``edge.config``) does not import paho-mqtt (3.5 MB of RSS)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec


class MqttConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Broker connection settings (TOML section ``[mqtt]``).

    ``password_file`` / ``tls_*`` name files (secrets are never inline). ``session_expiry_s`` is how
    long the broker keeps the persistent session (and queued QoS 1 messages) while disconnected.
    ``reconnect_min_s``/``reconnect_max_s`` bound the exponential reconnect back-off (forever).
    A ``username`` needs its ``password_file`` (``ValueError``, a ``ConfigError`` naming ``[mqtt]``
    when read from a file).

    ``protocol``: ``"5"`` (default; mosquitto) or ``"3.1.1"`` (NATS's MQTT listener speaks no MQTT 5):
    then the session is kept with ``clean_session=False`` (no session expiry, no receive maximum, no
    PUBACK reason codes: a refused publish is a disconnect). ``hosts``: optional ``"host:port"``
    brokers of one cluster; when given they replace ``host``/``port``, the first is tried first and
    each reconnect moves to the next (round robin). A malformed entry: ``ValueError``.
    """

    host: str = "127.0.0.1"
    port: Annotated[int, msgspec.Meta(ge=1, le=65535)] = 1883
    client_id: str = ""
    username: str | None = None
    password_file: str | None = None
    tls_ca_file: str | None = None
    tls_cert_file: str | None = None
    tls_key_file: str | None = None
    keepalive_s: int = 30
    session_expiry_s: int = 7 * 24 * 3600
    reconnect_min_s: float = 0.5
    reconnect_max_s: float = 30.0
    receive_maximum: int = 1000
    protocol: Literal["5", "3.1.1"] = "5"
    hosts: list[str] = []

    def __post_init__(self) -> None:
        if self.username and not self.password_file:
            raise ValueError("username given without password_file")
        for entry in self.hosts:
            parse_host(entry)

    def brokers(self) -> list[tuple[str, int]]:
        """``[(host, port), ...]`` in the order tried: ``hosts`` if given, else ``host``/``port``."""
        return [parse_host(h) for h in self.hosts] or [(self.host, self.port)]


def parse_host(entry: str) -> tuple[str, int]:
    """``"host:port"`` -> ``(host, port)``; ``ValueError`` naming the entry if it is not one."""
    host, sep, port = entry.rpartition(":")
    if not sep or not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise ValueError(f"mqtt.hosts entry {entry!r} is not host:port")
    return host, int(port)
