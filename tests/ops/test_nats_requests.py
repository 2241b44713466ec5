"""What the office sends back through the NATS JetStream cluster (issue 37; central/ingest/jetstream.py
with central/ingest/answers.py): a gate's own Sync asks for a snapshot over MQTT 3.1.1 and gets
it, answered by exactly one of two office processes (the requests stream's shared consumer); a
confiscation ingested through JetStream makes the office publish the blocklist with the card.
One cluster for the module; each test its own port (streams and retained topics apart)."""

from __future__ import annotations

import asyncio
import datetime as dt
import time
import uuid

import paho.mqtt.client as paho
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from central.broadcast.publisher import Publisher, office_signer
from central.config import CentralConfig, IngestSettings, NatsSettings, PublishSettings
from central.ingest.jetstream import JetStreamIngest
from central.ingest.keys import add_gate
from central.ledger.migrate import upgrade
from central.runner import for_instance
from edge.journal import Journal
from edge.store import Store
from edge.sync import Sync
from edge.sync.settings import SyncSettings
from portgate.config import read_secret
from portgate.errors import ConfigError
from testkit.nats import find_exe, js_asked, start_cluster
from testkit.nats_office import gate_mqtt, now
from testkit.wait import wait_until
from portgate.records import Worker, WorkerStatus
from wire import downlink as dl
from wire import topics
from wire.events import ConfiscationPayload

pytestmark = pytest.mark.nats
AT = dt.datetime(2026, 12, 6, 9, tzinfo=dt.UTC)
WORKERS = "registration,name,category,status\n1001,Ana Souza,vigia,active\n"
CARDS = "uid,kind,registration,status\nAA000001,control,1001,active\n"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    assert find_exe(), "nats-server is not installed: scripts/setup.sh installs it (as root)"
    c = start_cluster(tmp_path_factory.mktemp("nats"))
    yield c
    c.stop()


def office(tmp_path, cluster, port: str, **publish) -> CentralConfig:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    upgrade(url)
    return CentralConfig(
        database_url=url, port=port, keys_dir=str(tmp_path / "keys"), mqtt=gate_mqtt(cluster),
        ingest=IngestSettings(batch_size=50, writer="thread"), publish=PublishSettings(**publish),
        nats=NatsSettings(servers=cluster.nats_urls, ack_wait_s=5.0, fetch_wait_s=0.2))


def gate(tmp_path, cluster, port: str, gate_id: str) -> tuple[Journal, Store, Sync]:
    key = add_gate(tmp_path / "keys", gate_id)
    j = Journal(tmp_path / f"{gate_id}.journal", port=port, gate_id=gate_id, key=read_secret(key),
                boot_id=str(uuid.uuid4()))
    store = Store(tmp_path / f"{gate_id}.store", gate_id=gate_id)
    sync = Sync(gate_mqtt(cluster), j, store, port=port, gate_id=gate_id,
                settings=SyncSettings(check_every_s=0.2)).start()
    return j, store, sync


def test_a_gate_asks_for_a_snapshot_and_one_of_two_offices_answers(tmp_path, cluster):
    """A roster delta that does not follow the gate's copy makes its Sync publish a SnapshotRequest
    (MQTT 3.1.1) into the port's requests stream; the two offices share its consumer, one answers
    from the CSV files, the gate applies the roster."""
    (tmp_path / "keys").mkdir()
    (tmp_path / "workers.csv").write_text(WORKERS)
    (tmp_path / "cards.csv").write_text(CARDS)
    config = office(tmp_path, cluster, "santos", workers_csv=str(tmp_path / "workers.csv"),
                    cards_csv=str(tmp_path / "cards.csv"))
    offices = [JetStreamIngest(for_instance(config, name)).start() for name in ("a", "b")]
    j, store, sync = gate(tmp_path, cluster, "santos", "g1")
    client = paho.Client(CallbackAPIVersion.VERSION2, client_id="test-office", protocol=paho.MQTTv311)
    try:
        assert all(o.wait_connected(90) for o in offices)
        host, port = cluster.mqtt_hosts[1]
        client.connect(host, port)
        client.loop_start()
        office_out = Publisher(client, "santos", office_signer(tmp_path / "keys"))
        # a retained roster first: once the gate holds it, its downlink subscription is in place
        office_out.send("roster", "snapshot", dl.RosterSnapshot(version=5, at=AT, workers=[
            Worker("0999", "Old", "vigia", WorkerStatus.ACTIVE)], cards=[]), wait=10)
        wait_until(lambda: store.worker("0999") is not None, timeout=30, what="the first roster at the gate")
        assert store.worker("1001") is None
        office_out.send("roster", "delta", dl.RosterDelta(from_version=8, to_version=9, at=AT), wait=10)
        wait_until(lambda: store.worker("1001") is not None, timeout=30, what="the roster snapshot at the gate")
        assert sync.downlink.requested == 1
        time.sleep(1.0)  # a second answer would be counted by now
        served = [o.stats["snapshots_served"] for o in offices]
        assert sorted(served) == [0, 1], served
        assert all(o.alive() for o in offices)
    finally:
        client.loop_stop()
        sync.stop()
        for o in offices:
            o.stop()


@pytest.mark.parametrize("source, port", [("csv", "itajai"), ("registry", "suape")])
def test_a_confiscation_through_jetstream_publishes_the_blocklist(tmp_path, cluster, source, port):
    """The gate journals a confiscation; it reaches the ledger through the stream; after that
    commit the office publishes the blocklist snapshot (csv), or wakes the registry's downlink
    publisher, which polls only every 600 s here (registry): the gate's store blocks the card."""
    (tmp_path / "keys").mkdir()
    ingest = JetStreamIngest(office(tmp_path, cluster, port, source=source, poll_s=600.0)).start()
    j, store, sync = gate(tmp_path, cluster, port, "g1")
    try:
        assert ingest.wait_connected(90)
        assert (ingest.publisher is not None) == (source == "registry")
        wait_until(lambda: sync.connected.is_set(), what="the gate connected")
        time.sleep(0.5)  # the registry's first snapshots (retained) on their way to the gate
        uid = "AA00C0F1"
        j.append(ConfiscationPayload(uid=uid, registration="1002", inspector_uid="AA0000E1",
                                     inspector_registration="9001", reason_flag="INSPECTOR_DECISION",
                                     article="83.611 art. 20 i"), now=now())
        sync.notify()
        wait_until(lambda: store.block_reason(uid) is not None, timeout=30, what="the card blocked at the gate")
        assert ingest.stats["inserted"] == 1
        assert ingest.stats["blocklist_published"] == (1 if source == "csv" else 0)
    finally:
        sync.stop()
        ingest.stop()


def requests_left(cluster, stream: str) -> int:
    """Messages still in a requests stream (work queue: an acknowledged request is removed)."""
    import nats

    async def ask():
        nc = await nats.connect(servers=cluster.live_urls())
        try:
            return (await nc.jetstream(timeout=60).stream_info(stream)).state.messages
        finally:
            await nc.close()

    return asyncio.run(ask())


def test_requests_whose_answer_fails_are_acknowledged_and_the_next_one_answered(tmp_path, cluster):
    """A roster that cannot be built (workers.csv became a directory: ``ingest.snapshot_failed``) and
    an answer that raises (a bug, simulated: no real part raises there) are logged, the requests
    acknowledged (gone from the work queue), and the next request is answered."""
    (tmp_path / "keys").mkdir()
    for name in ("workers.csv", "cards.csv"):
        (tmp_path / name).mkdir()
    config = office(tmp_path, cluster, "paranagua", workers_csv=str(tmp_path / "workers.csv"),
                    cards_csv=str(tmp_path / "cards.csv"))
    ingest = JetStreamIngest(config)
    answer = ingest.answers.answer

    def buggy(topic: str, payload: bytes) -> None:
        if b"escala" in payload:
            raise RuntimeError("a bug")
        answer(topic, payload)

    ingest.answers.answer = buggy
    ingest.start()
    client = paho.Client(CallbackAPIVersion.VERSION2, client_id="test-g1", protocol=paho.MQTTv311)
    try:
        assert ingest.wait_connected(90)
        client.connect(*cluster.mqtt_hosts[2])
        client.loop_start()
        for kind in ("roster", "escala", "presence"):
            req = dl.SnapshotRequest(gate_id="g1", kind=kind, have_version=None, at=dt.datetime.now(dt.UTC))
            client.publish(topics.gate_requests("paranagua", "g1"), dl.encode(req), qos=1).wait_for_publish(10)
        wait_until(lambda: ingest.stats["snapshots_served"] == 1, timeout=30, what="the presence request answered")
        wait_until(lambda: requests_left(cluster, "PORTGATE_paranagua_requests") == 0, what="all acknowledged")
        assert ingest.stats["snapshots_served"] == 1 and ingest.alive()
    finally:
        client.loop_stop()
        ingest.stop()


def test_an_existing_requests_stream_without_the_port_is_a_config_error(tmp_path, cluster):
    js_asked(cluster.nats_urls, lambda js: js.add_stream(name="PORTGATE_rio_requests",
                                                         subjects=["portgate.v1.other.gate.*.requests"]))
    (tmp_path / "keys").mkdir()
    ingest = JetStreamIngest(office(tmp_path, cluster, "rio"))
    with pytest.raises(ConfigError, match="does not capture port rio's gate requests"):
        asyncio.run(ingest._run())
    assert not ingest.connected.is_set()
    ingest._writer.close()
