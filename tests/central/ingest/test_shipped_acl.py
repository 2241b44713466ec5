"""The shipped broker configuration (config/mosquitto/) on a real mosquitto, adapted to a temp dir
(plain loopback listener instead of the TLS one, file log instead of syslog): it starts without
warnings, a monitor reads everything but publishes nothing, a gate still does its work."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import threading
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from app.demo.mosquitto import free_port
from testkit.wait import wait_until
from wire import topics

SHIPPED = Path(__file__).resolve().parents[3] / "config" / "mosquitto"
USERS = {"office": "op", "monitor": "mp", "g1": "p1"}
TLS = ("certfile", "keyfile", "cafile", "tls_version", "require_certificate")


def adapted_config(tmp: Path, port: int, office_port: int | None = None) -> str:
    """The shipped mosquitto.conf with its paths in ``tmp`` and loopback listeners: the gates'
    (the first ``listener``) on ``port``, the office's (the second) on ``office_port``; each
    listener's password file is ``tmp/passwd`` (gates, monitor) or ``tmp/office-passwd``."""
    out = []
    listeners = iter((port, office_port))
    passwords = iter(("passwd", "office-passwd"))
    for line in (SHIPPED / "mosquitto.conf").read_text().splitlines():
        word = line.split()[0] if line.strip() and not line.startswith("#") else ""
        if word in TLS:
            continue
        if word == "listener":
            line = f"listener {next(listeners)} 127.0.0.1"
        elif word == "password_file":
            line = f"password_file {tmp}/{next(passwords)}"
        line = {
            "persistence_location": f"persistence_location {tmp}/data/",
            "acl_file": f"acl_file {tmp}/acl",
            "log_dest": f"log_dest file {tmp}/mosquitto.log",
        }.get(word, line)
        out.append(line)
    assert any(line.startswith("acl_file") for line in out), "the shipped config names its ACL"
    if os.geteuid() == 0:
        out.append("user root")  # see app/demo/mosquitto.py
    return "\n".join(out) + "\n"


class ShippedBroker:
    """mosquitto on the adapted shipped config; ``log()`` is what it wrote to stderr and its log file."""

    def __init__(self, work: Path) -> None:
        self.work, self.host = work, "127.0.0.1"
        (work / "data").mkdir(parents=True)
        (work / "passwd").touch()
        (work / "office-passwd").touch()
        for name, password in USERS.items():
            file = "office-passwd" if name == "office" else "passwd"
            subprocess.run(["mosquitto_passwd", "-b", str(work / file), name, password], check=True,
                           capture_output=True)
        (work / "acl").write_text((SHIPPED / "portgate.acl").read_text())
        self.stderr = open(work / "stderr", "wb")
        for attempt in range(3):  # a port chosen free and taken by another test before mosquitto bound it
            self.port, self.office_port = free_port(), free_port()
            (work / "mosquitto.conf").write_text(adapted_config(work, self.port, self.office_port))
            self.proc = subprocess.Popen(["mosquitto", "-c", str(work / "mosquitto.conf")],
                                         stdout=subprocess.DEVNULL, stderr=self.stderr)
            wait_until(lambda: self.proc.poll() is not None or self._accepts(), timeout=60,
                       what=f"mosquitto listening: {self.log()}")
            if self.proc.poll() is None or "in use" not in self.log() or attempt == 2:
                break
        assert self.proc.poll() is None, f"mosquitto exited: {self.log()}"

    def _accepts(self) -> bool:
        """Both listeners (the gates' and the office's) take a connection."""
        try:
            for port in (self.port, self.office_port):
                socket.create_connection((self.host, port), timeout=0.2).close()
            return True
        except OSError:
            return False

    def log(self) -> str:
        return "".join(p.read_text(errors="replace") for p in (self.work / "stderr", self.work / "mosquitto.log")
                       if p.exists())

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()
        self.stderr.close()


@pytest.fixture
def shipped_broker(tmp_path):
    broker = ShippedBroker(tmp_path / "broker")
    yield broker
    broker.kill()


def client(broker, user: str, client_id: str | None = None, port: int | None = None) -> mqtt.Client:
    """``user`` connected (the office on the office's listener, the others on the gates')."""
    c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id or f"t-{user}", protocol=mqtt.MQTTv5)
    c.username_pw_set(user, USERS[user])
    c.received = []
    c.on_message = lambda _c, _u, m: c.received.append((m.topic, bytes(m.payload)))
    connected = threading.Event()
    c.on_connect = lambda *_a: connected.set()
    c.connect(broker.host, port or (broker.office_port if user == "office" else broker.port))
    c.loop_start()
    assert connected.wait(60), f"{user} could not connect: {broker.log()}"
    return c


def subscribe(c, topic: str) -> list:
    done = threading.Event()
    granted: list = []
    c.on_subscribe = lambda _c, _u, _mid, codes, _p: (granted.extend(codes), done.set())
    c.subscribe(topic, qos=1)
    assert done.wait(60)
    return granted


def attempt(broker, user: str, topic: str, via: mqtt.Client | None = None) -> str:
    """Publish ``b"forged"`` (QoS 1) as ``user`` on a fresh connection (or on ``via``, ``user``'s
    connection already open: on the gates' listener a second one would take its client id):
    "accepted" on a PUBACK success, "refused" on a failure reason code or when mosquitto drops the
    connection for it."""
    c = via or client(broker, user, f"t-{user}-attempt")
    outcome: list[str] = []
    c.on_publish = lambda _c, _u, _mid, reason, _p: outcome.append("refused" if reason.is_failure else "accepted")
    c.on_disconnect = lambda *_a: outcome.append("refused")
    try:
        c.publish(topic, b"forged", qos=1)
        wait_until(lambda: outcome, timeout=60, what=f"an answer to {user} on {topic}")
        return outcome[0]
    finally:
        if via is None:
            c.disconnect()
            c.loop_stop()


def test_the_shipped_config_starts_without_warnings(shipped_broker):
    wait_until(lambda: "New connection" in shipped_broker.log(), what="the broker's log")  # the fixture's probe
    lines = shipped_broker.log().splitlines()
    assert not [line for line in lines if "does not contain" in line], lines
    # as root the test adds ``user root`` (see adapted_config), which mosquitto warns about
    assert not [line for line in lines if "Warning" in line and "run as root" not in line], lines


def test_a_monitor_reads_every_topic_but_cannot_publish(shipped_broker):
    port = "santos"
    office = client(shipped_broker, "office")
    assert [c.value for c in subscribe(office, f"portgate/v1/{port}/#")] == [1]
    # the monitor publishes: nothing of it reaches anyone (each attempt on a connection of its own,
    # made before the monitor's reading one: on the gates' listener the client id is the username)
    for topic in (topics.gate_requests(port, "g1"), topics.gate_cmd(port, "g1"), topics.gate_events(port, "g1"),
                  topics.gate_events(port, "monitor"), topics.gate_status(port, "monitor"),
                  topics.downlink(port, "cards", "snapshot")):
        assert attempt(shipped_broker, "monitor", topic) == "refused", topic
    monitor = client(shipped_broker, "monitor")
    gate = client(shipped_broker, "g1")
    try:
        assert [c.value for c in subscribe(monitor, f"portgate/v1/{port}/#")] == [1]
        # the gate's own traffic: the monitor sees it
        gate.publish(topics.gate_events(port, "g1"), b"gate-event", qos=1).wait_for_publish(5)
        gate.publish(topics.gate_requests(port, "g1"), b"gate-request", qos=1).wait_for_publish(5)
        wait_until(lambda: len(monitor.received) == 2 and len(office.received) == 2, what="the gate's messages")
        assert attempt(shipped_broker, "g1", topics.gate_requests(port, "g1"), via=gate) == "accepted"  # the control
        gate.publish(topics.gate_status(port, "g1"), b"marker", qos=1).wait_for_publish(5)  # after them
        wait_until(lambda: any(p == b"marker" for _t, p in office.received), what="the marker")
        assert [p for _t, p in office.received if p == b"forged"] == [b"forged"]  # the gate's only
        # and it cannot read commands sent to a gate named after it (mosquitto filters at delivery)
        subscribe(monitor, topics.gate_cmd(port, "monitor"))
        office.publish(topics.gate_cmd(port, "monitor"), b"cmd", qos=1).wait_for_publish(5)
        office.publish(topics.gate_status(port, "g1"), b"marker2", qos=1).wait_for_publish(5)
        wait_until(lambda: any(p == b"marker2" for _t, p in monitor.received), what="the second marker")
        assert [p for _t, p in monitor.received if p == b"cmd"] == []
    finally:
        for c in (office, monitor, gate):
            c.disconnect()
            c.loop_stop()


def test_a_gate_may_not_read_another_gates_commands_or_publish_as_it(shipped_broker):
    port = "santos"
    office = client(shipped_broker, "office")
    subscribe(office, f"portgate/v1/{port}/#")
    assert attempt(shipped_broker, "g1", topics.gate_events(port, "g2")) == "refused"  # before g1's own connection
    gate = client(shipped_broker, "g1")
    try:
        subscribe(gate, f"portgate/v1/{port}/gate/+/cmd")
        office.publish(topics.gate_cmd(port, "g2"), b"for-g2", qos=1).wait_for_publish(5)
        office.publish(topics.gate_cmd(port, "g1"), b"for-g1", qos=1).wait_for_publish(5)
        wait_until(lambda: any(p == b"for-g1" for _t, p in gate.received), what="g1's own command")
        assert [p for _t, p in gate.received if p == b"for-g2"] == []
        gate.publish(topics.gate_events(port, "g1"), b"marker", qos=1).wait_for_publish(5)
        wait_until(lambda: any(p == b"marker" for _t, p in office.received), what="the marker")
        assert [p for _t, p in office.received if p == b"forged"] == []
    finally:
        for c in (office, gate):
            c.disconnect()
            c.loop_stop()


def _connect(broker, user: str, client_id: str, port: int, *, password: str | None = None,
             clean: bool = True):
    """A v5 connection; returns ``(client, connack reason, session_present, disconnected event)``."""
    c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5,
                    reconnect_on_failure=False)
    c.username_pw_set(user, password or USERS[user])
    c.received = []
    c.on_message = lambda _c, _u, m: c.received.append((m.topic, bytes(m.payload)))
    answer: list = []
    gone = threading.Event()
    c.on_connect = lambda _c, _u, flags, rc, _p: answer.append((rc, flags.session_present))
    c.on_disconnect = lambda *_a: gone.set()
    from paho.mqtt.properties import Properties
    from paho.mqtt.packettypes import PacketTypes

    props = Properties(PacketTypes.CONNECT)
    props.SessionExpiryInterval = 3600
    c.connect(broker.host, port, clean_start=clean, properties=props)
    c.loop_start()
    wait_until(lambda: answer, timeout=60, what=f"the CONNACK of {user}")
    return c, answer[0][0], answer[0][1], gone


def test_no_client_may_take_a_client_id_that_is_not_its_own(shipped_broker):
    """Issue 36 #8: a gate's password used with the office's (predictable) client id takes nothing:
    on the gates' listener the broker makes the client id the username, and the office's listener
    knows no gate password. The office's persistent session keeps the events published meanwhile."""
    port, office_id = "santos", "ledger-santos-0"
    office, rc, _present, _gone = _connect(shipped_broker, "office", office_id, shipped_broker.office_port)
    assert not rc.is_failure
    subscribe(office, f"portgate/v1/{port}/gate/+/events")
    office.disconnect()
    office.loop_stop()
    # the gate's password on the office's listener: refused
    _c, rc, _p, _g = _connect(shipped_broker, "g1", office_id, shipped_broker.office_port)
    assert rc.is_failure, "a gate logged in on the office's listener"
    _c.loop_stop()
    # on its own listener, with the office's client id: it gets its own (its username), and the
    # office's session is untouched; what it publishes meanwhile waits for the office
    thief, rc, present, _g = _connect(shipped_broker, "g1", office_id, shipped_broker.port)
    assert not rc.is_failure and not present
    thief.publish(topics.gate_events(port, "g1"), b"while-away", qos=1).wait_for_publish(5)
    # nor can it take another gate's session: g1 with the client id "monitor" leaves the monitor be
    monitor, rc, _p, monitor_gone = _connect(shipped_broker, "monitor", "monitor", shipped_broker.port)
    assert not rc.is_failure
    other, rc, _p, _g = _connect(shipped_broker, "g1", "monitor", shipped_broker.port)
    assert not rc.is_failure
    assert not monitor_gone.wait(1.0), "g1 took the monitor's client id"
    for c in (thief, other, monitor):
        c.disconnect()
        c.loop_stop()
    office, rc, present, _g = _connect(shipped_broker, "office", office_id, shipped_broker.office_port, clean=False)
    try:
        assert not rc.is_failure and present, "the office's session was taken"
        wait_until(lambda: any(p == b"while-away" for _t, p in office.received), timeout=60,
                   what="the event published while the office was away")
    finally:
        office.disconnect()
        office.loop_stop()


def test_a_gate_asks_snapshots_only_in_its_own_name_and_a_flood_is_answered_once(shipped_broker, office, tmp_path):
    """Issue 36 #13, through the shipped broker and the office's real ingest: a request naming
    another gate is not answered (the topic's gate is the sender: the ACL lets a gate write only
    its own), a gate cannot write another gate's requests topic, and 20 requests for one kind
    within ``snapshot_request_min_s`` give one retained snapshot, not 20."""
    import datetime as dt

    from central.config import IngestSettings
    from wire import downlink as dl
    from wire.connection import MqttConfig

    port = "santos"
    password = tmp_path / "office.pw"
    password.write_text(USERS["office"])
    password.chmod(0o600)
    config = office.config(shipped_broker, mqtt=MqttConfig(
        host=shipped_broker.host, port=shipped_broker.office_port, username="office", password_file=str(password)))
    ingest = office.start(shipped_broker, mqtt=config.mqtt)
    worker = ingest.workers[0]
    # the broker does not let g1 write g2's requests topic (a fresh connection: it is dropped for it)
    assert attempt(shipped_broker, "g1", topics.gate_requests(port, "g2")) == "refused"
    monitor = client(shipped_broker, "monitor")
    gate = client(shipped_broker, "g1")
    try:
        subscribe(monitor, topics.downlink(port, "presence", "snapshot"))

        def request(gate_id: str) -> bytes:
            return dl.encode(dl.SnapshotRequest(gate_id=gate_id, kind="presence", have_version=None,
                                                at=dt.datetime.now(dt.UTC)))

        gate.publish(topics.gate_requests(port, "g1"), request("g2"), qos=1).wait_for_publish(5)
        wait_until(lambda: worker.stats["requests_refused"] == 1, what="the request in g2's name refused")
        for _ in range(20):
            gate.publish(topics.gate_requests(port, "g1"), request("g1"), qos=1).wait_for_publish(5)
        wait_until(lambda: worker.stats["requests_limited"] == 19, what="the flood limited")
        wait_until(lambda: monitor.received, what="the one presence snapshot")
        assert worker.stats["snapshots_served"] == 1
        assert len(monitor.received) == 1
    finally:
        for c in (monitor, gate):
            c.disconnect()
            c.loop_stop()
