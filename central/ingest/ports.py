"""Several ports on one ledger (issue 37 item 4): one consumer per port.

``central.toml`` names them with ``ports = ["santos", "paranagua"]`` (``port``, the home port, among
them). Each port gets the ingest a single-port office would run, built from ``port_config(config,
port)``: its own MQTT sessions in the share group of ``portgate/v1/<port>/gate/+/events`` (client ids
``ledger-<port>-<n>``), or its own JetStream stream ``PORTGATE_<port>`` and durable
``ledger-<port>``; its writer checks that an event's topic is of its port and stores the event
under that port (``events.port``). They share the ledger's engine. One port configured:
``make_ingest`` returns exactly the single-port ingest of before.
"""

from __future__ import annotations

import threading

import msgspec

from central.config import CentralConfig
from central.db import make_engine
from central.ingest.jetstream import JetStreamIngest
from central.ingest.nats_users import registered_in
from central.ingest.service import Ingest
from central.ledger.migrate import upgrade_engine


def port_config(config: CentralConfig, port: str) -> CentralConfig:
    """``config`` as the single-port office of ``port`` (``ports`` emptied). A configured
    ``[mqtt] client_id`` (or ``--instance``'s) gets ``-<port>`` appended when the office serves
    several ports, so each port's sessions are their own."""
    mqtt = config.mqtt
    if mqtt.client_id and len(config.served_ports) > 1:
        mqtt = msgspec.structs.replace(mqtt, client_id=f"{mqtt.client_id}-{port}")
    return msgspec.structs.replace(config, port=port, ports=[], mqtt=mqtt)


class PortsIngest:
    """One ingest (``Ingest`` or ``JetStreamIngest``) per served port over one engine. Exposes what
    ``central.runner.run_central`` watches: ``workers`` (every port's), ``publishers`` (each
    port's registry publisher, if ``[publish] source = "registry"``), ``start``, ``stop``,
    ``wait_connected``; ``by_port`` maps a port to its ingest."""

    publisher = None  # the runner reads ``publishers``

    def __init__(self, config: CentralConfig, *, engine=None, create_tables: bool = True) -> None:
        self.config = config
        self.engine = engine or make_engine(config.database_url)
        if create_tables:
            upgrade_engine(self.engine)
        kind = JetStreamIngest if config.nats.servers else Ingest
        self.by_port = {port: kind(port_config(config, port), engine=self.engine, create_tables=False)
                        for port in config.served_ports}
        registered = registered_in(config.registry_dirs)  # a gate without events yet: its port's escala
        for ingest in self.by_port.values():  # each port's roster and escala are its own (central.broadcast)
            if ingest.publisher is not None:
                ingest.publisher.serve_ports(config.served_ports, registered)

    @property
    def workers(self) -> list:
        return [w for ingest in self.by_port.values() for w in ingest.workers]

    @property
    def publishers(self) -> list:
        return [i.publisher for i in self.by_port.values() if i.publisher is not None]

    def start(self) -> PortsIngest:
        for ingest in self.by_port.values():
            ingest.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop every port's ingest at once, each within ``timeout`` seconds."""
        stoppers = [threading.Thread(target=i.stop, args=(timeout,), daemon=True) for i in self.by_port.values()]
        for t in stoppers:
            t.start()
        for t in stoppers:
            t.join(timeout + 10.0)

    def wait_connected(self, timeout: float = 10.0) -> bool:
        return all(i.wait_connected(timeout) for i in self.by_port.values())


def make_ingest(config: CentralConfig, **kw):
    """The office's ingest for ``config`` (not started): ``Ingest`` (MQTT) or ``JetStreamIngest``
    (``[nats] servers``) for one port, exactly as before; ``PortsIngest`` for several.
    Raises ``ConfigError`` as they do (an in-memory SQLite ledger, ``[nats]`` without servers)."""
    if len(config.served_ports) > 1:
        return PortsIngest(config, **kw)
    return JetStreamIngest(config, **kw) if config.nats.servers else Ingest(config, **kw)
