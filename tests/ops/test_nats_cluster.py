"""The broker tier on a real 3-node NATS JetStream cluster (Debian nats-server 2.9, testkit/nats.py;
issue 37, first slice): gates speak MQTT 3.1.1 to the cluster's MQTT listeners with a list of hosts,
the office ingests through a JetStream durable pull consumer (central/ingest/jetstream.py) into the
ledger, acknowledging after the commit. Every journal event lands in the ledger exactly once, also
when the node a gate is connected to is SIGKILLed while taps continue."""

from __future__ import annotations

import asyncio
import signal
import socket
import time
import uuid

import msgspec
import pytest

from central.config import CentralConfig
from central.db import make_engine
from central.ingest.jetstream import JetStreamIngest, _covers, subject_to_topic
from central.ledger.migrate import upgrade
from edge.config import load_gate_config
from edge.journal import Journal
from edge.sync import Sync
from portgate.config import read_secret
from portgate.errors import BrokerUnavailable, ConfigError
from testkit.fault_check import ReplayLog, check_fault_run, shift_tap, signing_gate
from testkit.gate_process import write_gate_config
from testkit.nats import NatsCluster, find_exe, js_asked
from testkit.nats_office import (central_toml, gate_mqtt, ledger_rows, now, office, office_ingest, real_gate_through_a_node_kill,
                                 stream_state, tap)
from testkit.wait import wait_until
from wire.connection import MqttConfig, parse_host


# -- pure helpers -----------------------------------------------------------------------------------
def test_subject_mapping_and_filters():
    assert subject_to_topic("portgate.v1.santos.gate.g1.events") == "portgate/v1/santos/gate/g1/events"
    assert _covers("portgate.v1.*.gate.*.events", "portgate.v1.santos.gate.g1.events")
    assert not _covers("portgate.v1.*.gate.*.events", "portgate.v1.santos.gate.g1.status")
    assert _covers("portgate.>", "portgate.v1.santos.gate.g1.events")
    assert not _covers("portgate.v1.rio.>", "portgate.v1.santos.gate.g1.events")


def test_mqtt_hosts_and_protocol_settings():
    cfg = msgspec.convert({"protocol": "3.1.1", "hosts": ["10.0.0.1:1883", "nats-2.port:1884"]}, MqttConfig)
    assert cfg.brokers() == [("10.0.0.1", 1883), ("nats-2.port", 1884)]
    assert MqttConfig().brokers() == [("127.0.0.1", 1883)] and MqttConfig().protocol == "5"
    for bad in ("nohost", "h:0", "h:99999", ":1883", "h:x"):
        with pytest.raises(ValueError, match="host:port"):
            parse_host(bad)
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"protocol": "3"}, MqttConfig)


def test_a_dot_in_the_gate_id_is_refused_for_mqtt311_at_load(tmp_path):
    """NATS 2.9's MQTT layer closes the connection on a '.' in a topic level (measured: "characters
    ' ' and '.' not supported for MQTT topics"); the gate would reconnect and resend forever."""
    cfg = write_gate_config(tmp_path / "g", gate_id="g.1")
    text = cfg.read_text()
    cfg.write_text(text + '\n[mqtt]\nprotocol = "3.1.1"\nhosts = ["127.0.0.1:1883"]\n')
    with pytest.raises(ConfigError, match="'.' in a topic level is refused by NATS"):
        load_gate_config(cfg)
    cfg.write_text(text + '\n[mqtt]\nhost = "127.0.0.1"\n')  # MQTT 5 (mosquitto): accepted as before
    assert load_gate_config(cfg).gate_id == "g.1"


def test_jetstream_ingest_needs_servers(tmp_path):
    cfg = CentralConfig(database_url=f"sqlite:///{tmp_path / 'l.db'}", port="santos", keys_dir=str(tmp_path))
    with pytest.raises(ConfigError, match="nats"):
        JetStreamIngest(cfg, create_tables=False)


# -- against the cluster ----------------------------------------------------------------------------
def test_gate_over_mqtt311_to_ledger_through_jetstream_exactly_once(tmp_path, nats_cluster):
    cluster = nats_cluster
    """An in-process gate sync (the gate's own code) on MQTT 3.1.1 to the cluster; the office's
    JetStream consumer writes every event once; the stream has 3 replicas; nothing left unacked."""
    keys, url, ingest = office_ingest(tmp_path, cluster, "g1")
    j = Journal(tmp_path / "g1.journal.db", port="santos", gate_id="g1", key=read_secret(keys / "g1.key"),
                boot_id=str(uuid.uuid4()))
    sync = Sync(gate_mqtt(cluster), j, port="santos", gate_id="g1").start()
    try:
        n = 150
        for i in range(n):
            j.append(tap(i), now=now())
            sync.notify()
        engine = make_engine(url)
        wait_until(lambda: len(ledger_rows(engine)[0]) >= n, timeout=30, what=f"{n} events in the ledger")
        wait_until(lambda: j.outbox_depth() == 0, what="the gate's outbox drained (PUBACKs over 3.1.1)")
        wait_until(lambda: stream_state(cluster)["ack_pending"] == 0, what="every message acknowledged")
        rows, dead = ledger_rows(engine)
        assert sorted(r.seq for r in rows) == list(range(1, n + 1))
        assert len({r.event_id for r in rows}) == n and dead == 0
        state = stream_state(cluster)
        assert state["replicas"] == 3 and state["peers"] == 3
        assert state["messages"] >= n and state["pending"] == 0
        assert ingest.stats["inserted"] == n
        engine.dispose()
    finally:
        sync.stop()
        ingest.stop()


def test_an_existing_stream_without_the_port_is_a_config_error(tmp_path, nats_cluster):
    """A stream of that name that does not capture the port's gate events: the ingest says so
    (``ConfigError`` naming nats.stream) and consumes nothing, instead of waiting forever."""
    js_asked(nats_cluster.nats_urls,  # asked again while a loaded cluster leaves it unanswered
             lambda js: js.add_stream(name="PORTGATE_santos", subjects=["portgate.v1.rio.gate.*.events"]))
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    (tmp_path / "keys").mkdir()
    ingest = JetStreamIngest(office(tmp_path, nats_cluster, url))
    with pytest.raises(ConfigError, match="does not capture port santos"):
        asyncio.run(ingest._run())
    assert not ingest.connected.is_set()
    ingest._writer.close()


def test_a_node_whose_monitor_port_was_taken_starts_on_a_new_one(tmp_path):
    """The ports are chosen free when the cluster is made and bound when a node starts; in CI
    another test's server took a node's HTTP monitor port in between and the node exited ("can't
    listen to the monitor port"). That node is started again on a new monitor port (the port only
    the cluster's health checks use); its client, route and MQTT ports stay."""
    assert find_exe(), "nats-server is not installed: scripts/setup.sh installs it (as root)"
    cluster = NatsCluster(tmp_path / "nats")
    taken = cluster.nodes[1].http_port
    client_port = cluster.nodes[1].client_port
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", taken))
        squatter.listen()
        try:
            cluster.start(60)
            node = cluster.nodes[1]
            assert node.http_port != taken and node.monitor_moves == 1
            assert node.client_port == client_port and node.healthy()
            assert f"http: 127.0.0.1:{node.http_port}" in node.conf_path.read_text()
        finally:
            cluster.stop()


def test_a_failed_set_up_is_retried_until_the_cluster_has_a_quorum(tmp_path):
    """A failure while the stream and consumer are set up (here: one node of three runs, so
    JetStream has no quorum and its API calls go unanswered; on a loaded machine, a call unanswered
    in time) is logged and the loop starts again after a pause, instead of ending the ingest's
    thread: once the other nodes are up, the office consumes. A port chosen free and taken by
    another test's server before a node bound it ("address already in use": CI at load 10) plays
    the round again on new ports, as ``start_cluster`` does."""
    assert find_exe(), "nats-server is not installed: scripts/setup.sh installs it (as root)"
    for attempt in range(3):
        try:
            return _quorum_round(tmp_path / f"round{attempt}")
        except BrokerUnavailable as exc:
            if "address already in use" not in str(exc) or attempt == 2:
                raise


def _quorum_round(tmp_path) -> None:
    tmp_path.mkdir()
    cluster = NatsCluster(tmp_path / "nats")
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    upgrade(url)
    (tmp_path / "keys").mkdir()
    cfg = office(tmp_path, cluster, url)
    cfg = msgspec.structs.replace(cfg, nats=msgspec.structs.replace(cfg.nats, request_timeout_s=2.0))
    cluster.start_node(0)
    ingest = JetStreamIngest(cfg).start()
    try:
        wait_until(lambda: ingest.stats["restarts"] >= 1, timeout=60, what="a failed set-up retried")
        assert ingest.alive() and not ingest.connected.is_set()
        cluster.start_node(1)
        cluster.start_node(2)
        cluster.wait_healthy(60)
        assert ingest.wait_connected(60), f"not consuming; restarts {ingest.stats['restarts']}"
        assert ingest.alive()
    finally:
        ingest.stop()
        cluster.stop()


@pytest.mark.slow
def test_real_gate_survives_sigkill_of_its_node(tmp_path, nats_cluster):
    cluster = nats_cluster
    """``portgate edge run`` (FIFO reader) with protocol 3.1.1 and the three hosts; taps reach the
    ledger; the node the gate is connected to (the first host: it connects there first) is
    SIGKILLed while taps continue; afterwards every journal event is in the ledger exactly once, and
    the run ends with ``check_fault_run`` (the gate's own key, made before its start, registered: the
    audit exits 0; its taps are unknown cards, denied: no shift, the pay check compares empty ledgers;
    test_cluster_faults.py's ``gate_node`` run is the one with shifts)."""
    done = real_gate_through_a_node_kill(tmp_path, cluster, 0)  # the gate's node: it connects to hosts[0] first
    print(f"the gate's node killed (portgate edge run): {done.line()}")


def test_two_office_processes_share_the_consumer_and_one_is_sigkilled(
        tmp_path, nats_cluster, notify_socket, start_service):
    """``portgate central run`` with ``[nats] servers`` (the CLI selects the JetStream ingest), two
    instances on one config fetching from the one durable consumer; one is SIGKILLed while a gate
    publishes (whatever it had fetched and not acknowledged goes to the other after ``ack_wait_s``;
    whether it held any at that moment is up to timing, the deliveries are printed): every event in
    the ledger exactly once, nothing left unacknowledged; the run ends with ``check_fault_run``
    (shifts and pay identical to a fault-free run, the audit exit 0)."""
    cluster = nats_cluster
    cfg = central_toml(tmp_path, cluster, ingest_extra="batch_size = 50\n", nats_extra="ack_wait_s = 2.0\n")
    keys, url = tmp_path / "keys", f"sqlite:///{tmp_path / 'ledger.db'}"
    procs = {}
    for inst in ("a", "b"):
        procs[inst] = start_service(["central", "run", "--config", str(cfg), "--instance", inst],
                                    notify=notify_socket)
        wait_until(lambda: notify_socket.seen("READY=1") >= len(procs) or not procs[inst].alive(),
                   what=f"READY=1 from {inst}")
        assert procs[inst].alive(), procs[inst].output()
    assert "jetstream.consuming" in procs["a"].output()
    j = Journal(tmp_path / "g1.journal.db", port="santos", gate_id="g1", key=read_secret(keys / "g1.key"),
                boot_id=str(uuid.uuid4()), signer=signing_gate(keys, tmp_path / "g1", "g1"))
    replays = ReplayLog()
    replays.watch(j)
    sync = Sync(gate_mqtt(cluster), j, port="santos", gate_id="g1").start()
    engine = make_engine(url)
    n = 300
    try:
        for i in range(n):
            payload, at = shift_tap(0, i)  # entry and exit taps of registered workers
            j.append(payload, now=at)
            sync.notify()
            if i == n // 3:
                wait_until(lambda: len(ledger_rows(engine)[0]) > 0, what="first events in the ledger")
                procs["b"].proc.send_signal(signal.SIGKILL)
                procs["b"].proc.wait()
            time.sleep(0.005)
        wait_until(lambda: len(ledger_rows(engine)[0]) >= n, timeout=60, what=f"{n} events in the ledger")
        wait_until(lambda: stream_state(cluster)["ack_pending"] == 0, what="every message acknowledged")
        rows, dead = ledger_rows(engine)
        assert sorted(r.seq for r in rows) == list(range(1, n + 1))
        assert len({r.event_id for r in rows}) == n and dead == 0
        assert procs["a"].alive(), procs["a"].output()
        print("consumer after the kill:", stream_state(cluster))
        sync.stop()
        procs["a"].stop()
        sync = None
        done = check_fault_run(url, [j.path], keys, tmp_path / "check", replays=replays)
        print(f"one of two office processes killed: {done.line()}")
    finally:
        if sync is not None:
            sync.stop()
        engine.dispose()


def test_hosts_rotate_past_a_dead_broker_over_mqtt311(broker):
    """``hosts`` with a dead first entry: the first connect fails there, the reconnect tries the next
    (a mosquitto, which speaks 3.1.1 too) and connects; the session is persistent (clean_session
    False: the broker has it on the next connect)."""
    import threading

    from testkit.postgres import free_port
    from wire import connection

    dead = free_port()
    cfg = MqttConfig(protocol="3.1.1", hosts=[f"127.0.0.1:{dead}", f"{broker.host}:{broker.port}"],
                     reconnect_min_s=0.2, reconnect_max_s=1)
    connects: list[bool] = []
    up = threading.Event()

    def on_connect(client, userdata, flags, reason_code, properties):
        connects.append(bool(flags.session_present))
        up.set()

    for _ in range(2):
        up.clear()
        client = connection.make_client(cfg, "gate-santos-rot")
        client.on_connect = on_connect
        connection.start(client, cfg)
        try:
            assert up.wait(60), "never connected past the dead first host"
            assert (client.host, client.port) == (broker.host, broker.port)
            assert client._protocol == 4  # MQTT 3.1.1 on the wire
        finally:
            client.disconnect()
            client.loop_stop()
    assert connects == [False, True]  # the second connection found the session kept
