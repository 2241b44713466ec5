"""The NATS broker tier with TLS and a user per gate (issue 37 item 1; central/ingest/nats_users.py):
``portgate central add-gate --nats-users FILE`` writes the nodes' users include and the gate's
password file; the cluster's MQTT listeners speak TLS; a gate reaches the ledger only with its own
user, a gate added while the cluster runs is taken after a reload, a wrong password is refused at
CONNECT (the gate keeps its events journaled), and a publish outside a gate's topics -- which NATS
2.9 acknowledges and drops (measured) -- never reaches the stream."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import threading
import time
import uuid

import paho.mqtt.client as paho
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from central.config import CentralConfig, IngestSettings, NatsSettings
from central.db import make_engine
from central.ingest.jetstream import JetStreamIngest
from central.ingest.nats_users import add_gate_user, gate_permissions, render
from central.ledger.migrate import upgrade
from edge.journal import Journal
from edge.rules.model import Now
from edge.sync import Sync
from edge.sync.settings import SyncSettings
from portgate.config import read_secret, write_secret
from testkit.nats import find_exe, js_asked, start_cluster
from testkit.nats_office import ledger_rows, tap
from testkit.tls import make_tls_files
from testkit.wait import wait_until
from wire.connection import MqttConfig
from wire.gate_link import LANE_MIDS

pytestmark = pytest.mark.nats


def now() -> Now:
    return Now(wall=dt.datetime.now(dt.UTC), mono_ns=time.monotonic_ns(), clock_trusted=True)


def add_gate_cli(keys, users, gate):
    done = subprocess.run([sys.executable, "-m", "app.cli", "central", "add-gate", "--gate-id", gate,
                           "--keys-dir", str(keys), "--nats-users", str(users), "--port", "santos"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done


def test_gate_permissions_are_its_own_topics_only():
    perms = gate_permissions("santos", "g1")
    assert perms["publish"]["allow"] == ["portgate.v1.santos.gate.g1.events", "portgate.v1.santos.gate.g1.status",
                                         "portgate.v1.santos.gate.g1.requests"]
    assert perms["subscribe"]["allow"] == ["portgate.v1.santos.gate.g1.cmd", "portgate.v1.santos.gate.g1.receipt",
                                           "portgate.v1.santos.down", "portgate.v1.santos.down.>"]


def test_add_gate_user_refusals_and_rotation(tmp_path):
    keys, users = tmp_path / "keys", tmp_path / "users.conf"
    path, made = add_gate_user(keys, users, "santos", "g1")
    assert made and path.stat().st_mode & 0o777 == 0o600 and (keys / "office.nats-password").exists()
    first = read_secret(path)
    assert first.decode() not in users.read_text()  # only hashes in the include
    assert add_gate_user(keys, users, "santos", "g1") == (path, False) and read_secret(path) == first
    assert add_gate_user(keys, users, "santos", "g1", rotate=True)[1] and read_secret(path) != first
    for port, gate, why in (("rio", "g2", "holds the users of port santos"), ("santos", "office", "office's NATS user"),
                            ("santos", "g.2", "splits a NATS subject level")):
        with pytest.raises(ValueError, match=why):
            add_gate_user(keys, users, port, gate)
    state = json.loads((keys / "nats-users.json").read_text())
    assert render(state) == users.read_text() and sorted(state["users"]) == ["g1", "office"]


def test_tls_and_a_user_per_gate_end_to_end(tmp_path):
    assert find_exe(), "nats-server is not installed: scripts/setup.sh installs it (as root)"
    keys, users = tmp_path / "keys", tmp_path / "users.conf"
    out = add_gate_cli(keys, users, "g1")
    assert out.stdout.splitlines()[0].endswith("g1.nats-password") and (keys / "g1.key").exists()
    tls = make_tls_files(tmp_path / "tls")
    cluster = start_cluster(tmp_path / "nats", auth_include=users, tls=tls)
    hosts = [f"{h}:{p}" for h, p in cluster.mqtt_hosts]

    def mqtt(user: str, password_file) -> MqttConfig:
        return MqttConfig(protocol="3.1.1", hosts=hosts, tls_ca_file=str(tls.ca), username=user,
                          password_file=str(password_file), reconnect_min_s=0.2, reconnect_max_s=1)

    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    upgrade(url)
    office = CentralConfig(
        database_url=url, port="santos", keys_dir=str(keys),
        mqtt=MqttConfig(**{**msgspec_fields(mqtt("office", keys / "office.nats-password")), "client_id": "ledger-santos"}),
        ingest=IngestSettings(batch_size=50, gap_grace_s=0.5, replay_every_s=1.0, tail_grace_s=1.0, writer="thread"),
        nats=NatsSettings(servers=cluster.nats_urls, user="office", password_file=str(keys / "office.nats-password"),
                          ack_wait_s=5.0, fetch_wait_s=0.2))
    ingest = JetStreamIngest(office).start()
    engine = make_engine(url)
    syncs = []
    try:
        assert ingest.wait_connected(90)

        def gate(gate_id: str, password_file, lanes: int = 1) -> tuple[Journal, Sync]:
            j = Journal(tmp_path / f"{gate_id}.journal.db", port="santos", gate_id=gate_id,
                        key=read_secret(keys / f"{gate_id}.key"), boot_id=str(uuid.uuid4()))
            sync = Sync(mqtt(gate_id, password_file), j, port="santos", gate_id=gate_id,
                        settings=SyncSettings(lanes=lanes)).start()
            syncs.append(sync)
            return j, sync

        def taps(j, sync, n, base=0):
            for i in range(base, base + n):
                j.append(tap(i), now=now())
                sync.notify()

        j1, s1 = gate("g1", keys / "g1.nats-password")
        taps(j1, s1, 40)
        wait_until(lambda: len(ledger_rows(engine)[0]) >= 40, timeout=30, what="g1's taps over TLS in the ledger")

        # a gate added while the cluster runs: its user is taken after a reload of the nodes; g2 has
        # three lanes ([sync] lanes): its user covers its publish-only connections too
        add_gate_cli(keys, users, "g2")
        cluster.reload()
        j2, s2 = gate("g2", keys / "g2.nats-password", lanes=3)
        lanes_used, publish_many = set(), s2.link.publish_many
        s2.link.publish_many = lambda topic, bodies: [
            lanes_used.add(m // LANE_MIDS) or m for m in publish_many(topic, bodies)]
        wait_until(lambda: all(c.is_connected() for c in s2.link.lanes), timeout=60,
                   what="g2's three lanes connected over TLS with its user")
        j2.append_many([tap(i) for i in range(30)], now=now())  # one burst: spread over the lanes
        s2.notify()
        wait_until(lambda: len(ledger_rows(engine)[0]) >= 70, timeout=60, what="g2's taps after the reload")
        wait_until(lambda: j2.outbox_depth() == 0, timeout=60, what="g2's outbox emptied by its lanes' PUBACKs")
        assert lanes_used == {0, 1, 2}

        # a wrong password: CONNECT refused ("Not authorized"); the events stay in the gate's outbox
        write_secret(tmp_path / "wrong.pw", b"not-the-password\n")
        add_gate_cli(keys, users, "g3")
        cluster.reload()
        j3, s3 = gate("g3", tmp_path / "wrong.pw")
        taps(j3, s3, 5)
        time.sleep(3.0)  # several reconnect rounds (0.2-1 s back-off)
        assert not s3.connected.is_set() and j3.outbox_depth() == 5
        rows, dead = ledger_rows(engine)
        assert {r.gate_id for r in rows} == {"g1", "g2"} and dead == 0

        # g1's credentials on g2's topic: NATS 2.9 acknowledges the publish and drops it (measured):
        # the stream never gets it -- why a gate's user is its gate id and its topics derive from it
        before = stream_messages(cluster, keys)
        acked = threading.Event()
        c = paho.Client(CallbackAPIVersion.VERSION2, client_id="intruder", protocol=paho.MQTTv311, clean_session=True)
        c.username_pw_set("g1", read_secret(keys / "g1.nats-password").decode())
        c.tls_set(ca_certs=str(tls.ca))
        c.on_publish = lambda *a: acked.set()
        c.connect(*cluster.mqtt_hosts[0])
        c.loop_start()
        c.publish("portgate/v1/santos/gate/g2/events", b"{}", qos=1)
        assert acked.wait(60), "no PUBACK"
        c.disconnect()
        c.loop_stop()
        time.sleep(1.0)
        assert stream_messages(cluster, keys) == before
        wait_until(lambda: j1.outbox_depth() == 0 and j2.outbox_depth() == 0, what="the two outboxes drained")
        assert sorted(r.seq for r in ledger_rows(engine)[0] if r.gate_id == "g1") == list(range(1, 41))
    finally:
        for s in syncs:
            s.stop()
        ingest.stop()
        engine.dispose()
        cluster.stop()


def stream_messages(cluster, keys) -> int:
    """The port's stream's message count, asked as the office user (asked again like the office
    does: CI once had "no responders" just after the cluster's reload)."""
    async def ask(js):
        return (await js.stream_info("PORTGATE_santos")).state.messages

    return js_asked(cluster.live_urls(), ask, user="office",
                    password=read_secret(keys / "office.nats-password").decode())


def msgspec_fields(cfg: MqttConfig) -> dict:
    import msgspec

    return msgspec.structs.asdict(cfg)
