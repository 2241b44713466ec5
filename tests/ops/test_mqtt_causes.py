"""A gate that cannot connect says why, one line naming the cause, against a real mosquitto with a
TLS listener, passwords and the shipped ACL: plain MQTT to the TLS port, a wrong CA, a host the
certificate does not name, TLS to the plain port, a wrong password; a username that is not the
gate id is refused when the configuration is loaded. None of them ends in the "another client may
use this client id" hint, which is left for a session thrown off repeatedly."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from app.demo.mosquitto import Mosquitto, free_port
from edge.config import load_gate_config
from portgate.config import write_secret
from portgate.errors import ConfigError
from testkit.gate_process import write_gate_config
from testkit.tls import make_tls_files
from testkit.wait import wait_until
from tests.ops.conftest import run_cli_or_here

ACL = (Path(__file__).resolve().parents[2] / "config" / "mosquitto" / "portgate.acl").read_text()
PASSWORD = "gate-pw-Secr3t"


@pytest.fixture(scope="module")
def tls_broker(tmp_path_factory):
    """mosquitto with a plain listener (``port``) and a TLS one (``tls_port``), user ``g-aurora``: one
    for the module (three RSA keys and a broker per test before); each test's gate is stopped before
    the next starts, and a refused or failed connection leaves nothing on the broker."""
    base = tmp_path_factory.mktemp("tls-broker")
    files = make_tls_files(base / "tls")
    tls_port = free_port()
    with Mosquitto(base / "tbroker", users={"g-aurora": PASSWORD}, acl=ACL,
                   extra=files.mosquitto_listener(tls_port)) as broker:
        broker.tls_port, broker.tls = tls_port, files
        yield broker


def gate_with(tmp_path, mqtt: str) -> Path:
    cfg = write_gate_config(tmp_path)
    write_secret(tmp_path / "mqtt.pw", PASSWORD.encode())
    cfg.write_text(cfg.read_text() + "\n[mqtt]\nreconnect_min_s = 1\nreconnect_max_s = 1\n" + mqtt)
    return cfg


def run_gate_for(start_service, cfg: Path, event: str, seconds: float = 4.0) -> list[dict]:
    """Run ``edge run`` until ``event`` is logged, then ``seconds`` more (three reconnects at
    least, enough for the flapping error to appear if it would); return its log lines."""
    fifo = os.open(cfg.with_name("reads.fifo"), os.O_RDWR)
    try:
        svc = start_service(["edge", "run", "--config", str(cfg)])
        wait_until(lambda: f'"event": "{event}"' in svc.output() or not svc.alive(), timeout=30, what=event)
        assert svc.alive(), svc.output()
        time.sleep(seconds)
        assert svc.stop() == 0
    finally:
        os.close(fifo)
    return [json.loads(line) for line in svc.output().splitlines()]


def only_cause(lines: list[dict], event: str) -> dict:
    causes = [r for r in lines if r["event"] == event]
    assert causes, [r["event"] for r in lines]
    assert not [r for r in lines if r["event"] == "mqtt.session_flapping"], "misleading client-id hint"
    assert not [r for r in lines if "another client" in json.dumps(r)]
    assert len(causes) == 1, causes  # one line per failure streak (again every 10th attempt)
    return causes[0]


def test_plain_mqtt_to_the_tls_port_says_the_port_speaks_tls(tmp_path, tls_broker, start_service):
    cfg = gate_with(tmp_path, f'host = "127.0.0.1"\nport = {tls_broker.tls_port}\nusername = "g-aurora"\n'
                              f'password_file = "mqtt.pw"\n')
    line = only_cause(run_gate_for(start_service, cfg, "mqtt.tls_expected"), "mqtt.tls_expected")
    assert "speaks TLS" in line["cause"] and "tls_ca_file" in line["hint"]
    assert line["gate_id"] == "g-aurora"


def test_a_wrong_ca_says_the_certificate_is_not_signed_by_it(tmp_path, tls_broker, start_service):
    cfg = gate_with(tmp_path, f'host = "127.0.0.1"\nport = {tls_broker.tls_port}\nusername = "g-aurora"\n'
                              f'password_file = "mqtt.pw"\ntls_ca_file = "{tls_broker.tls.other_ca}"\n')
    line = only_cause(run_gate_for(start_service, cfg, "mqtt.tls_untrusted"), "mqtt.tls_untrusted")
    assert "not signed by tls_ca_file" in line["cause"] and str(tls_broker.tls.other_ca) in line["hint"]


def test_a_host_the_certificate_does_not_name_says_so(tmp_path, tls_broker, start_service):
    cfg = gate_with(tmp_path, f'host = "localhost"\nport = {tls_broker.tls_port}\nusername = "g-aurora"\n'
                              f'password_file = "mqtt.pw"\ntls_ca_file = "{tls_broker.tls.ca}"\n')
    line = only_cause(run_gate_for(start_service, cfg, "mqtt.tls_name_mismatch"), "mqtt.tls_name_mismatch")
    assert "'localhost'" in line["cause"] and "CN/SAN" in line["cause"]


def test_tls_to_the_plain_port_says_the_handshake_failed(tmp_path, tls_broker, start_service):
    cfg = gate_with(tmp_path, f'host = "127.0.0.1"\nport = {tls_broker.port}\nusername = "g-aurora"\n'
                              f'password_file = "mqtt.pw"\ntls_ca_file = "{tls_broker.tls.ca}"\n')
    line = only_cause(run_gate_for(start_service, cfg, "mqtt.tls_failed"), "mqtt.tls_failed")
    assert "TLS handshake failed" in line["cause"] and "TLS listener" in line["hint"]


def test_a_wrong_password_says_the_login_was_refused(tmp_path, tls_broker, start_service):
    (tmp_path / "mqtt.pw").parent.mkdir(exist_ok=True)
    cfg = gate_with(tmp_path, f'host = "127.0.0.1"\nport = {tls_broker.tls_port}\nusername = "g-aurora"\n'
                              f'password_file = "wrong.pw"\ntls_ca_file = "{tls_broker.tls.ca}"\n')
    write_secret(tmp_path / "wrong.pw", b"not-the-password")
    line = only_cause(run_gate_for(start_service, cfg, "mqtt.login_refused"), "mqtt.login_refused")
    assert "username 'g-aurora'" in line["cause"] and "password_file" in line["hint"]


def test_the_right_settings_connect_over_tls(tmp_path, tls_broker, start_service):
    cfg = gate_with(tmp_path, f'host = "127.0.0.1"\nport = {tls_broker.tls_port}\nusername = "g-aurora"\n'
                              f'password_file = "mqtt.pw"\ntls_ca_file = "{tls_broker.tls.ca}"\n')
    lines = run_gate_for(start_service, cfg, "mqtt.connected", seconds=0.5)
    assert not [r for r in lines if r["event"].startswith(("mqtt.tls", "mqtt.login", "mqtt.closed"))]


def test_a_username_that_is_not_the_gate_id_is_refused_at_load(tmp_path):
    cfg = gate_with(tmp_path, 'username = "gate-1"\npassword_file = "mqtt.pw"\n')
    with pytest.raises(ConfigError, match="mqtt.username 'gate-1' must be the gate id 'g-aurora'"):
        load_gate_config(cfg)
    for cmd in (["edge", "check-config", str(cfg)], ["edge", "run", "--config", str(cfg)]):
        res = run_cli_or_here(cmd)
        assert res.returncode == 2 and "must be the gate id" in res.stderr and "%u" in res.stderr, res.stderr
