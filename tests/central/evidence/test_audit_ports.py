"""``portgate evidence audit --config`` of an office serving several ports on one ledger
(``ports``, ``port_keys_dirs``): each gate's public keys are read from its own port's keys dir (the
registrations ``add-gate --port`` writes, as the office reads them), so every port's signed events
are audited; real SQLite ledger, real keys, the real CLI."""

from __future__ import annotations

import datetime as dt

import pytest

from central.db import make_engine
from central.ingest.event_store import update_progress
from central.ingest.gate_port_file import register_port
from central.ingest.keys import KeyRing, add_gate, register_public_key
from edge.journal import Journal
from edge.rules.model import Now
from portgate.config import read_secret
from tests.central.evidence.ingested import ingest
from tests.central.evidence.test_audit import T0, tap
from testkit.cli import run_here
from wire import chain


def _signed_gate(keys, tmp_path, port: str, gate_id: str, n: int):
    """``n`` signed events of ``gate_id`` at ``port``, its keys (HMAC, Ed25519 public) in ``keys``."""
    hkey = read_secret(add_gate(keys, gate_id))
    signer = chain.new_private_key()
    register_public_key(keys, gate_id, chain.public_pem(signer.public_key()))
    register_port(keys, gate_id, port)
    j = Journal(tmp_path / f"{gate_id}.db", port=port, gate_id=gate_id, key=hkey, boot_id="b1", signer=signer)
    evs = [j.append(tap(i), now=Now(T0, i, True)) for i in range(n)]
    j.close()
    return evs


@pytest.fixture
def two_ports(tmp_path, sqlite_ledger):
    """One ledger holding santos's gate s1 (4 signed events, keys in keys-santos) and paranagua's
    gate p1 (3, keys in keys-paranagua), interleaved (p1's first is ledger id 1); the office-web
    central.toml of santos naming both ports."""
    santos, paranagua = tmp_path / "keys-santos", tmp_path / "keys-paranagua"
    s1 = _signed_gate(santos, tmp_path, "santos", "s1", 4)
    p1 = _signed_gate(paranagua, tmp_path, "paranagua", "p1", 3)
    url = sqlite_ledger(tmp_path / "ledger.db")
    engine = make_engine(url)
    assert ingest(engine, KeyRing(paranagua, recheck_s=0), p1[:1], T0, port="paranagua") == []
    assert ingest(engine, KeyRing(santos, recheck_s=0), s1, T0) == []
    assert ingest(engine, KeyRing(paranagua, recheck_s=0), p1[1:], T0, port="paranagua") == []
    with engine.begin() as conn:  # as the ingest's writer does after each batch
        assert update_progress(conn, ["s1", "p1"], T0) == []
    engine.dispose()
    config = tmp_path / "office-web.toml"
    config.write_text(f'database_url = "{url}"\nport = "santos"\nports = ["santos", "paranagua"]\n'
                      f'keys_dir = "{santos}"\nport_keys_dirs = {{ paranagua = "{paranagua}" }}\n')
    return config, url, santos


def test_a_config_of_two_ports_audits_each_ports_gates_with_its_keys_dir(two_ports):
    config, _url, _santos = two_ports
    run = run_here(["evidence", "audit", "--config", str(config), "--nice", "0"])
    assert (run.returncode, run.stderr) == (0, ""), run.stdout + run.stderr
    assert run.stdout.strip() == "audited 7 signed event(s) up to ledger id 7: 0 failure(s), 0 new recorded"


def test_the_home_keys_dir_alone_leaves_the_other_ports_gates_unaudited_and_says_which_ids(two_ports):
    """``--db``/``--keys-dir`` names one keys dir: p1's events are not audited (exit 2, named on
    stderr), and the cursor held at 0 before p1's first event is said with the ids that were read."""
    _config, url, santos = two_ports
    run = run_here(["evidence", "audit", "--db", url, "--keys-dir", str(santos), "--nice", "0"])
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stdout.strip() == ("audited 4 signed event(s) of ledger ids 1..7: 0 failure(s), 0 new recorded; "
                                  "ledger id 1 is the first not audited (the next audit: --after-id 0)")
    assert "gate p1: 3 signed event(s) (no public key" in run.stderr


def test_a_port_keys_dir_that_does_not_exist_is_named(two_ports, tmp_path):
    config, url, santos = two_ports
    config.write_text(f'database_url = "{url}"\nport = "santos"\nports = ["santos", "paranagua"]\n'
                      f'keys_dir = "{santos}"\nport_keys_dirs = {{ paranagua = "/nonexistent" }}\n')
    run = run_here(["evidence", "audit", "--config", str(config), "--nice", "0"])
    assert (run.returncode, run.stderr) == (2, f"portgate: {config}: port_keys_dirs.paranagua: '/nonexistent' does "
                                               "not exist (portgate central add-gate creates the key directory)\n")


def test_a_config_of_one_port_says_the_other_ports_gates_are_not_its_own(two_ports, tmp_path):
    """paranagua's one-port central.toml on the shared ledger: santos's gate is not audited (exit 2)
    and the reason is its port, not a missing key file."""
    _config, url, _santos = two_ports
    config = tmp_path / "central-paranagua.toml"
    config.write_text(f'database_url = "{url}"\nport = "paranagua"\nkeys_dir = "{tmp_path / "keys-paranagua"}"\n')
    run = run_here(["evidence", "audit", "--config", str(config), "--nice", "0"])
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stdout.startswith("audited 3 signed event(s) of ledger ids 1..7: "), run.stdout
    assert run.stderr.strip().endswith("gate s1: 4 signed event(s) (port santos, not served by this config: "
                                       "audit with a config naming it (ports, port_keys_dirs))"), run.stderr
