"""Several ports on one ledger through NATS JetStream (issue 37 item 4, central/ingest/ports.py):
one office configuration with ``ports = ["santos", "rio"]`` makes a stream and a durable pull
consumer per port (``PORTGATE_<port>``, ``ledger-<port>``); two ports' gates publish over MQTT
3.1.1 to a real nats-server cluster (testkit/nats.py) and the ledger holds both, each under its port."""

from __future__ import annotations

import asyncio
import uuid

from sqlalchemy import select

from central.config import CentralConfig, IngestSettings, NatsSettings
from central.db import make_engine
from central.ingest.keys import add_gate
from central.ingest.ports import PortsIngest, make_ingest
from central.ledger.migrate import upgrade
from central.ledger.schema import events
from edge.journal import Journal
from edge.sync import Sync
from portgate.config import read_secret
from testkit.nats_office import gate_mqtt, now, tap
from testkit.wait import wait_until


def consumers(cluster) -> dict[str, list[str]]:
    """Each ``PORTGATE_*`` stream's subjects and its consumers' names, as the cluster reports them."""
    import nats

    async def ask():
        nc = await nats.connect(servers=cluster.live_urls())
        try:
            js = nc.jetstream(timeout=60)
            out = {}
            for name in ("PORTGATE_santos", "PORTGATE_rio"):
                info = await js.stream_info(name)
                out[name] = sorted([*info.config.subjects, *[c.name for c in await js.consumers_info(name)]])
            return out
        finally:
            await nc.close()

    return asyncio.run(ask())


def test_two_ports_through_jetstream_one_consumer_each_into_one_ledger(tmp_path, nats_cluster):
    keys = tmp_path / "keys"
    keys.mkdir()
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    upgrade(url)
    cfg = CentralConfig(
        database_url=url, port="santos", ports=["santos", "rio"], keys_dir=str(keys),
        mqtt=gate_mqtt(nats_cluster), ingest=IngestSettings(gap_grace_s=0.5, replay_every_s=1.0, writer="thread"),
        nats=NatsSettings(servers=nats_cluster.nats_urls, ack_wait_s=5.0, fetch_wait_s=0.2))
    ingest = make_ingest(cfg, create_tables=False)
    assert isinstance(ingest, PortsIngest)
    assert [(i.stream, i.durable) for i in ingest.by_port.values()] == [
        ("PORTGATE_santos", "ledger-santos"), ("PORTGATE_rio", "ledger-rio")]
    ingest.start()
    syncs = []
    try:
        assert ingest.wait_connected(90)
        for port, gate_id, n in (("santos", "s1", 30), ("rio", "r1", 40)):
            key = read_secret(add_gate(keys, gate_id))
            j = Journal(tmp_path / f"{gate_id}.journal", port=port, gate_id=gate_id, key=key, boot_id=str(uuid.uuid4()))
            for i in range(n):
                j.append(tap(i), now=now())
            syncs.append(Sync(gate_mqtt(nats_cluster), j, port=port, gate_id=gate_id).start())
        engine = make_engine(url)

        def rows():
            with engine.connect() as c:
                return sorted(tuple(r) for r in c.execute(select(events.c.port, events.c.gate_id, events.c.seq)))

        want = sorted([("santos", "s1", s) for s in range(1, 31)] + [("rio", "r1", s) for s in range(1, 41)])
        wait_until(lambda: len(rows()) >= len(want), timeout=60, what="both ports' events in the ledger")
        assert rows() == want
        wait_until(lambda: {p: i.stats["inserted"] for p, i in ingest.by_port.items()} == {"santos": 30, "rio": 40},
                   what="each port's consumer counted its own port's events (counts follow the commit)")
        assert consumers(nats_cluster) == {
            "PORTGATE_santos": ["ledger-santos", "portgate.v1.santos.gate.*.events",
                                "portgate.v1.santos.gate.*.status"],
            "PORTGATE_rio": ["ledger-rio", "portgate.v1.rio.gate.*.events",
                             "portgate.v1.rio.gate.*.status"]}
        engine.dispose()
    finally:
        for s in syncs:
            s.stop()
        ingest.stop()
