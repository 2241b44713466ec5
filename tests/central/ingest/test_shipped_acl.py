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


def adapted_config(tmp: Path, port: int) -> str:
    """The shipped mosquitto.conf with its paths in ``tmp`` and a loopback listener on ``port``."""
    out = []
    for line in (SHIPPED / "mosquitto.conf").read_text().splitlines():
        word = line.split()[0] if line.strip() and not line.startswith("#") else ""
        if word in TLS:
            continue
        line = {
            "listener": f"listener {port} 127.0.0.1",
            "persistence_location": f"persistence_location {tmp}/data/",
            "password_file": f"password_file {tmp}/passwd",
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
        self.work, self.host, self.port = work, "127.0.0.1", free_port()
        (work / "data").mkdir(parents=True)
        for i, (name, password) in enumerate(USERS.items()):
            subprocess.run(["mosquitto_passwd", "-b", *(["-c"] if i == 0 else []), str(work / "passwd"), name,
                            password], check=True, capture_output=True)
        (work / "acl").write_text((SHIPPED / "portgate.acl").read_text())
        (work / "mosquitto.conf").write_text(adapted_config(work, self.port))
        self.stderr = open(work / "stderr", "wb")
        self.proc = subprocess.Popen(["mosquitto", "-c", str(work / "mosquitto.conf")],
                                     stdout=subprocess.DEVNULL, stderr=self.stderr)
        wait_until(self._accepts, timeout=10, what=f"mosquitto listening: {self.log()}")

    def _accepts(self) -> bool:
        assert self.proc.poll() is None, f"mosquitto exited: {self.log()}"
        try:
            socket.create_connection((self.host, self.port), timeout=0.2).close()
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


def client(broker, user: str, client_id: str | None = None) -> mqtt.Client:
    c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id or f"t-{user}", protocol=mqtt.MQTTv5)
    c.username_pw_set(user, USERS[user])
    c.received = []
    c.on_message = lambda _c, _u, m: c.received.append((m.topic, bytes(m.payload)))
    connected = threading.Event()
    c.on_connect = lambda *_a: connected.set()
    c.connect(broker.host, broker.port)
    c.loop_start()
    assert connected.wait(10), f"{user} could not connect: {broker.log()}"
    return c


def subscribe(c, topic: str) -> list:
    done = threading.Event()
    granted: list = []
    c.on_subscribe = lambda _c, _u, _mid, codes, _p: (granted.extend(codes), done.set())
    c.subscribe(topic, qos=1)
    assert done.wait(10)
    return granted


def attempt(broker, user: str, topic: str) -> str:
    """Publish ``b"forged"`` (QoS 1) as ``user`` on a fresh connection: "accepted" on a PUBACK
    success, "refused" on a failure reason code or when mosquitto drops the connection for it."""
    c = client(broker, user, f"t-{user}-attempt")
    outcome: list[str] = []
    c.on_publish = lambda _c, _u, _mid, reason, _p: outcome.append("refused" if reason.is_failure else "accepted")
    c.on_disconnect = lambda *_a: outcome.append("refused")
    try:
        c.publish(topic, b"forged", qos=1)
        wait_until(lambda: outcome, timeout=10, what=f"an answer to {user} on {topic}")
        return outcome[0]
    finally:
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
    monitor = client(shipped_broker, "monitor")
    gate = client(shipped_broker, "g1")
    try:
        assert [c.value for c in subscribe(office, f"portgate/v1/{port}/#")] == [1]
        assert [c.value for c in subscribe(monitor, f"portgate/v1/{port}/#")] == [1]
        # the gate's own traffic: the monitor sees it
        gate.publish(topics.gate_events(port, "g1"), b"gate-event", qos=1).wait_for_publish(5)
        gate.publish(topics.office_requests(port), b"gate-request", qos=1).wait_for_publish(5)
        wait_until(lambda: len(monitor.received) == 2 and len(office.received) == 2, what="the gate's messages")
        # the monitor publishes: nothing of it reaches anyone
        for topic in (topics.office_requests(port), topics.gate_cmd(port, "g1"), topics.gate_events(port, "g1"),
                      topics.gate_events(port, "monitor"), topics.gate_status(port, "monitor"),
                      topics.downlink(port, "cards", "snapshot")):
            assert attempt(shipped_broker, "monitor", topic) == "refused", topic
        assert attempt(shipped_broker, "g1", topics.office_requests(port)) == "accepted"  # the control
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
    gate = client(shipped_broker, "g1")
    try:
        subscribe(office, f"portgate/v1/{port}/#")
        subscribe(gate, f"portgate/v1/{port}/gate/+/cmd")
        office.publish(topics.gate_cmd(port, "g2"), b"for-g2", qos=1).wait_for_publish(5)
        office.publish(topics.gate_cmd(port, "g1"), b"for-g1", qos=1).wait_for_publish(5)
        wait_until(lambda: any(p == b"for-g1" for _t, p in gate.received), what="g1's own command")
        assert [p for _t, p in gate.received if p == b"for-g2"] == []
        assert attempt(shipped_broker, "g1", topics.gate_events(port, "g2")) == "refused"
        gate.publish(topics.gate_events(port, "g1"), b"marker", qos=1).wait_for_publish(5)
        wait_until(lambda: any(p == b"marker" for _t, p in office.received), what="the marker")
        assert [p for _t, p in office.received if p == b"forged"] == []
    finally:
        for c in (office, gate):
            c.disconnect()
            c.loop_stop()
