"""Several ports on one ledger (issue 37 item 4, central/ingest/ports.py): one office configuration
with ``ports = [...]`` consumes every port's gates (one consumer per port) into one ledger, each
event under its port. Real mosquitto, real SQLite ledger, real gate journals and uplinks."""

from __future__ import annotations

import uuid

import msgspec
import pytest
from sqlalchemy import select

from central.config import CentralConfig, IngestSettings, NatsSettings, load_central_config
from central.ingest.keys import add_gate
from central.ingest.ports import PortsIngest, make_ingest, port_config
from central.ingest.service import Ingest
from central.ledger.schema import events, gate_status
from edge.journal import Journal
from edge.sync import Sync, SyncSettings
from portgate.config import read_secret
from portgate.errors import ConfigError
from testkit.wait import wait_until
from tests.central.ingest.conftest import now
from tests.central.ingest.payloads import tap
from wire.connection import MqttConfig


def _config(tmp_path, **kw) -> CentralConfig:
    kw.setdefault("database_url", f"sqlite:///{tmp_path / 'ledger.db'}")
    return CentralConfig(port="santos", keys_dir=str(tmp_path / "keys"), **kw)


def test_served_ports_home_first_and_a_single_port_unchanged(tmp_path):
    assert _config(tmp_path).served_ports == ("santos",)
    assert _config(tmp_path, ports=["rio", "santos"]).served_ports == ("santos", "rio")
    (tmp_path / "keys").mkdir()
    one = make_ingest(_config(tmp_path))
    assert type(one) is Ingest and one.config.port == "santos"  # the single-port office as before
    one.engine.dispose()


@pytest.mark.parametrize("ports, nats, match", [
    (["rio"], NatsSettings(), "home port"),
    (["santos", "rio", "rio"], NatsSettings(), "twice"),
    (["santos", "a/b"], NatsSettings(), "ports"),
    (["santos", "rio"], NatsSettings(durable="mine"), "durable"),
])
def test_bad_ports_are_refused_at_load(tmp_path, ports, nats, match):
    toml = tmp_path / "central.toml"
    text = f'database_url = "sqlite:///l.db"\nport = "santos"\nkeys_dir = "k"\nports = {ports!r}\n'.replace("'", '"')
    if nats.durable:
        text += f'[nats]\ndurable = "{nats.durable}"\n'
    toml.write_text(text)
    with pytest.raises(ConfigError, match=match):
        load_central_config(toml)


def test_each_port_gets_its_own_sessions(tmp_path):
    cfg = _config(tmp_path, ports=["santos", "rio"], mqtt=MqttConfig(client_id="ledger-a"))
    rio = port_config(cfg, "rio")
    assert (rio.port, rio.ports, rio.served_ports, rio.mqtt.client_id) == ("rio", [], ("rio",), "ledger-a-rio")
    single = _config(tmp_path, mqtt=MqttConfig(client_id="ledger-a"))
    assert port_config(single, "santos").mqtt.client_id == "ledger-a"  # one port: as configured


def _gate(tmp_path, port: str, gate_id: str, broker) -> tuple[Journal, Sync]:
    key = read_secret(add_gate(tmp_path / "keys", gate_id))
    journal = Journal(tmp_path / f"{gate_id}.journal", port=port, gate_id=gate_id, key=key, boot_id=str(uuid.uuid4()))
    sync = Sync(MqttConfig(host=broker.host, port=broker.port, reconnect_min_s=0.2, reconnect_max_s=1),
                journal, None, port=port, gate_id=gate_id, settings=SyncSettings(check_every_s=0.2))
    return journal, sync


def _ledger(engine) -> list[tuple[str, str, int]]:
    with engine.connect() as c:
        return [tuple(r) for r in c.execute(select(events.c.port, events.c.gate_id, events.c.seq).order_by(events.c.id))]


def _statuses(engine) -> set[tuple[str, str]]:
    with engine.connect() as c:
        return {tuple(r) for r in c.execute(select(gate_status.c.port, gate_status.c.gate_id))}


def test_two_ports_gates_publish_to_one_office_and_the_ledger_holds_both_under_their_port(tmp_path, broker):
    (tmp_path / "keys").mkdir()
    cfg = _config(tmp_path, ports=["santos", "rio"],
                  mqtt=MqttConfig(host=broker.host, port=broker.port), ingest=IngestSettings(writer="thread"))
    ingest = make_ingest(cfg)
    assert isinstance(ingest, PortsIngest) and list(ingest.by_port) == ["santos", "rio"]
    assert [w.client._client_id for w in ingest.workers] == [b"ledger-santos-0", b"ledger-rio-0"]
    ingest.start()
    gates = [_gate(tmp_path, "santos", "s1", broker), _gate(tmp_path, "rio", "r1", broker)]
    try:
        assert ingest.wait_connected()
        for n, (journal, sync) in enumerate(gates):
            for i in range(20 + 5 * n):
                journal.append(tap(i), now=now())
            sync.start()
        want = [("santos", "s1", s) for s in range(1, 21)] + [("rio", "r1", s) for s in range(1, 26)]
        wait_until(lambda: len(_ledger(ingest.engine)) >= len(want), timeout=60, what="both ports' events in the ledger")
        assert sorted(_ledger(ingest.engine)) == sorted(want)
        # each port's consumer took its own port's events (its counts follow the commit: waited for)
        by_port = lambda: {p: i.workers[0].stats["inserted"] for p, i in ingest.by_port.items()}  # noqa: E731
        wait_until(lambda: by_port() == {"santos": 20, "rio": 25}, what="each port's own count")
        # each gate's retained status under its port (gate_status keyed by port + gate id, 0035)
        wait_until(lambda: _statuses(ingest.engine) == {("santos", "s1"), ("rio", "r1")}, timeout=120,
                   what="each gate's status stored under its port")
    finally:
        for _, sync in gates:
            sync.stop()
        ingest.stop()
        ingest.engine.dispose()


def test_a_port_not_configured_is_not_consumed(tmp_path, broker):
    """A gate of a port this office does not serve: its events are not taken into the ledger
    (no consumer subscribes to that port's topics), while a served port's are."""
    (tmp_path / "keys").mkdir()
    cfg = _config(tmp_path, ports=["santos", "rio"],
                  mqtt=MqttConfig(host=broker.host, port=broker.port), ingest=IngestSettings(writer="thread"))
    ingest = make_ingest(cfg).start()
    other = _gate(tmp_path, "vitoria", "v1", broker)
    served = _gate(tmp_path, "rio", "r1", broker)
    try:
        assert ingest.wait_connected()
        for journal, sync in (other, served):
            journal.append(tap(1), now=now())
            sync.start()
        wait_until(lambda: _ledger(ingest.engine) == [("rio", "r1", 1)], timeout=60, what="the served port's event")
        wait_until(lambda: other[1].stats["published"] >= 1, what="the other port's gate published")
        assert _ledger(ingest.engine) == [("rio", "r1", 1)]
    finally:
        for _, sync in (other, served):
            sync.stop()
        ingest.stop()
        ingest.engine.dispose()


def test_config_text_ports_reaches_make_ingest(tmp_path):
    toml = tmp_path / "central.toml"
    toml.write_text('database_url = "sqlite:///l.db"\nport = "santos"\nkeys_dir = "k"\nports = ["rio", "santos"]\n')
    cfg = load_central_config(toml)
    assert cfg.served_ports == ("santos", "rio")
    assert msgspec.structs.replace(cfg, ports=[]).served_ports == ("santos",)
