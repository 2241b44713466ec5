"""The port of a registered gate before its first event (central/ingest/nats_users.py
``registered_ports``, read by ``portgate office serve``; central/web/ports.py ``port_of``):
``portgate central add-gate --nats-users ... --port`` records it in ``<keys_dir>/nats-users.json``."""

from __future__ import annotations

from click.testing import CliRunner

from app.cli import cli
from central.ingest.gate_port_file import PORTS_FILE
from central.ingest.nats_users import STATE_FILE, registered_ports


def test_add_gate_records_the_gates_port_and_a_missing_or_broken_registry_is_empty(tmp_path):
    keys, users = tmp_path / "keys", tmp_path / "users.conf"
    assert registered_ports(keys) == {}  # no gate registered yet
    for gate in ("g-quiet", "g-2"):
        done = CliRunner().invoke(cli, ["central", "add-gate", "--gate-id", gate, "--keys-dir", str(keys),
                                         "--nats-users", str(users), "--port", "paranagua"])
        assert done.exit_code == 0, done.output
    assert registered_ports(keys) == {"g-quiet": "paranagua", "g-2": "paranagua"}  # not the office's user
    (keys / STATE_FILE).write_text("{not json", encoding="utf-8")
    # unreadable: the ports add-gate --port wrote beside it (gate-ports.json) still stand
    assert registered_ports(keys) == {"g-quiet": "paranagua", "g-2": "paranagua"}
    (keys / STATE_FILE).write_text('{"port": null, "users": {"g1": "x"}}', encoding="utf-8")
    assert registered_ports(keys) == {"g-quiet": "paranagua", "g-2": "paranagua"}
    (keys / PORTS_FILE).write_text("[1, 2]", encoding="utf-8")
    assert registered_ports(keys) == {}  # both unreadable: those gates have no port (or the home port's)
