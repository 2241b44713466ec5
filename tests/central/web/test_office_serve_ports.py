"""``portgate office serve`` on an office of several ports reads every served port's gate
registrations (issue 37 item 4): ``keys_dir``'s and each ``port_keys_dirs`` entry's
``nats-users.json`` (``add-gate --keys-dir DIR --nats-users ... --port P``,
``CentralConfig.registry_dirs``), as the cluster demo's web application reads each port's keys dir.
A gate of rio that has sent no event yet is rio's from the start: its ship is on the rio clerk's
ship calls page, not on the santos clerk's (before: the home port's, santos). The real entry point,
in a child process on a free loopback port; the config's checks in process."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys

import httpx
import pytest

from app.cli import main
from app.demo.mosquitto import free_port
from central.config import load_central_config
from central.ingest.nats_users import registered_in
from portgate.errors import ConfigError
from testkit.wait import wait_until
from tests.central.web.conftest import csrf_of

PASSWORD = "long enough password"
RIO_SHIP, SANTOS_SHIP = "9400002", "9300001"


def _config(tmp_path, extra: str = 'port_keys_dirs = { rio = "keys-rio" }\n'):
    cfg = tmp_path / "central.toml"
    cfg.write_text(f'database_url = "sqlite:///{tmp_path / "ledger.db"}"\nport = "santos"\n'
                   f'ports = ["santos", "rio"]\nkeys_dir = "keys"\n{extra}')
    return str(cfg)


def _login(base: str, user: str) -> httpx.Client:
    c = httpx.Client(base_url=base, follow_redirects=False, timeout=30)
    token = csrf_of(c.get("/login").text)
    assert c.post("/login", data={"login": user, "password": PASSWORD, "csrf_token": token,
                                  "next": "/"}).status_code == 303
    return c


def test_office_serve_knows_every_served_ports_registered_gates(tmp_path, monkeypatch, capsys):
    cfg = _config(tmp_path)
    assert main(["ledger", "migrate", "--config", cfg]) == 0
    for gate, port, keys in (("s-quiet", "santos", "keys"), ("rio-quiet", "rio", "keys-rio")):
        assert main(["central", "add-gate", "--gate-id", gate, "--keys-dir", str(tmp_path / keys),
                     "--nats-users", str(tmp_path / f"{port}-users.conf"), "--port", port]) == 0
    monkeypatch.setenv("PORTGATE_PASSWORD", PASSWORD)
    for login, port in (("clerk-rio", "rio"), ("clerk-santos", "santos")):
        assert main(["office", "add-user", "--config", cfg, "--login", login, "--role", "office", "--port", port]) == 0
    arrival = (dt.datetime.now(dt.UTC) - dt.timedelta(hours=6)).isoformat(timespec="seconds")
    ships = tmp_path / "ships.csv"
    ships.write_text("ship,ship_name,voyage,berth,gate_id,arrival,departure\n"
                     f"{RIO_SHIP},GUANABARA QUEEN,long_haul,berthed,rio-quiet,{arrival},\n"
                     f"{SANTOS_SHIP},SANTOS STAR,long_haul,berthed,s-quiet,{arrival},\n", encoding="utf-8")
    assert main(["office", "import-ships", "--config", cfg, "--ships", str(ships)]) == 0
    capsys.readouterr()
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "office", "serve", "--config", cfg,
                             "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        def up():
            assert proc.poll() is None, proc.stderr.read().decode()
            try:
                return httpx.get(f"{base}/login", timeout=5).status_code == 200
            except httpx.TransportError:
                return False

        wait_until(up, timeout=60, what="office serve listening")
        rio, santos = _login(base, "clerk-rio").get("/ships").text, _login(base, "clerk-santos").get("/ships").text
        assert RIO_SHIP in rio and SANTOS_SHIP not in rio  # rio-quiet: registered in keys-rio as rio's
        assert SANTOS_SHIP in santos and RIO_SHIP not in santos
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_registry_dirs_are_keys_dir_then_each_other_ports_and_a_port_not_served_is_refused(tmp_path):
    config = load_central_config(_config(tmp_path))
    assert config.registry_dirs == (str(tmp_path / "keys"), str(tmp_path / "keys-rio"))  # relative to the file
    assert load_central_config(_config(tmp_path, "")).registry_dirs == (str(tmp_path / "keys"),)
    for bad in ('port_keys_dirs = { recife = "k" }\n', 'port_keys_dirs = { santos = "k" }\n'):
        with pytest.raises(ConfigError, match="port_keys_dirs names"):
            load_central_config(_config(tmp_path, bad))


def test_registered_in_reads_each_dir_and_a_missing_one_adds_nothing(tmp_path):
    assert main(["central", "add-gate", "--gate-id", "rio-1", "--keys-dir", str(tmp_path / "r"),
                 "--nats-users", str(tmp_path / "r.conf"), "--port", "rio"]) == 0
    assert registered_in([tmp_path / "none", tmp_path / "r"]) == {"rio-1": "rio"}
