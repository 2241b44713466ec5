"""Gate ids differing only in letter case at one port (issue 37 item 4): ``G1`` beside ``g1`` are two
topic levels but one gate to a watchman, a clerk or an inspector. ``portgate central add-gate``
refuses the second, naming the existing id (pt-BR first, exit 2, nothing written), whether the first
is registered at the port (``--port``, NATS user), only has a key file in the keys dir, or has sent
events to the ledger at the port (SQLite and PostgreSQL); the registering functions under it refuse
it too (``register_port``, ``add_gate_user``, ``keys.add_gate``). The existing id itself is still
rotated, and a new id still registered."""

from __future__ import annotations

import json

import pytest

from central.ingest.gate_port_file import case_twin, register_port
from central.ingest.keys import add_gate
from central.ingest.nats_users import add_gate_user
from portgate.errors import BadInput
from testkit.cli import run_here
from tests.central.web.test_ports_web import RIO

PT, EN = {"PORTGATE_LANG": "pt"}, {"PORTGATE_LANG": "en"}


def _files(keys) -> list[str]:
    return sorted(p.name for p in keys.iterdir())


def test_case_twin_names_the_other_spelling_only():
    assert case_twin("G1", ["g1", "g2"]) == "g1"
    assert case_twin("g1", ["g1", "g2"]) is None  # the same id is not a twin
    assert case_twin("g-a", ["G-B", "x"]) is None


def test_a_key_file_in_the_keys_dir_makes_its_other_case_refused(tmp_path):
    keys = tmp_path / "keys"
    assert run_here(["central", "add-gate", "--keys-dir", str(keys), "--gate-id", "g1"]).returncode == 0
    before = _files(keys)
    for extra in ([], ["--rotate"], ["--port", "santos"]):
        r = run_here(["central", "add-gate", "--keys-dir", str(keys), "--gate-id", "G1", *extra], env=PT)
        assert r.returncode == 2, (extra, r.stdout, r.stderr)
        assert (f"o portaló g1 já tem chave em {keys} e G1 difere dele só em maiúsculas e minúsculas: no mesmo porto "
                "são o mesmo portaló para as pessoas; use g1") in r.stderr, r.stderr
        assert _files(keys) == before
    r = run_here(["central", "add-gate", "--keys-dir", str(keys), "--gate-id", "G1"], env=EN)
    assert r.returncode == 2 and f"gate g1 already has a key in {keys} and G1 differs from it only" in r.stderr
    assert run_here(["central", "add-gate", "--keys-dir", str(keys), "--gate-id", "g1", "--rotate"]).returncode == 0
    assert run_here(["central", "add-gate", "--keys-dir", str(keys), "--gate-id", "g2"]).returncode == 0


def test_a_gate_registered_at_the_port_makes_its_other_case_refused(tmp_path):
    keys = tmp_path / "keys"
    add_gate_user(keys, keys / "users.conf", "santos", "g-aurora")  # a NATS user, no HMAC key file
    register_port(keys, "g-lagoa", "santos")
    conf = tmp_path / "central.toml"
    conf.write_text(f'database_url = "sqlite:///{tmp_path / "l.db"}"\nport = "santos"\nkeys_dir = "{keys}"\n')
    before = _files(keys)
    for gate, other in (("G-Aurora", "g-aurora"), ("G-LAGOA", "g-lagoa")):
        for extra in (["--config", str(conf)], ["--config", str(conf), "--nats-users", str(keys / "users.conf")],
                      ["--keys-dir", str(keys), "--port", "santos"]):
            r = run_here(["central", "add-gate", "--gate-id", gate, *extra], env=PT)
            assert r.returncode == 2, (gate, extra, r.stdout, r.stderr)
            assert (f"o portaló {other} já está registrado no porto santos (em {keys}) e {gate} difere dele só em "
                    f"maiúsculas e minúsculas") in r.stderr, r.stderr
            assert _files(keys) == before
    assert "G-Aurora" not in (keys / "users.conf").read_text()


def test_the_registering_functions_refuse_an_id_of_other_case_at_their_port(tmp_path):
    keys = tmp_path / "keys"
    register_port(keys, "g1", "santos")
    with pytest.raises(ValueError, match="gate id G1 differs only in letter case from g1, registered at port santos"):
        register_port(keys, "G1", "santos")
    register_port(keys, "G2", "rio")  # another port's entry is not this function's concern (add-gate's)
    register_port(keys, "g2", "santos")
    assert json.loads((keys / "gate-ports.json").read_text()) == {"G2": "rio", "g1": "santos", "g2": "santos"}
    add_gate_user(keys, keys / "users.conf", "santos", "g-a")
    with pytest.raises(ValueError, match="gate id G-A differs only in letter case from g-a, a NATS user of port santos"):
        add_gate_user(keys, keys / "users.conf", "santos", "G-A")
    add_gate(keys, "k1")
    with pytest.raises(BadInput, match="gate id K1 differs only in letter case from k1, which has a key"):
        add_gate(keys, "K1", overwrite=True)
    assert not (keys / "K1.key").exists() and not (keys / "G-A.nats-password").exists()


def test_a_gate_of_the_ledger_at_the_port_makes_its_other_case_refused(rio_ledger, tmp_path):
    keys, upper = tmp_path / "keys", RIO["gate"].upper()
    keys.mkdir()
    conf = tmp_path / "central.toml"
    conf.write_text(f'database_url = "{rio_ledger}"\nport = "santos"\nports = ["santos", "rio"]\nkeys_dir = "{keys}"\n')
    r = run_here(["central", "add-gate", "--gate-id", upper, "--config", str(conf), "--port", "rio"], env=PT)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert (f"o portaló {RIO['gate']} já enviou eventos ao livro-razão pelo porto rio e {upper} difere dele só em "
            "maiúsculas e minúsculas: no mesmo porto são o mesmo portaló para as pessoas") in r.stderr, r.stderr
    assert _files(keys) == []
    r = run_here(["central", "add-gate", "--gate-id", RIO["gate"], "--config", str(conf), "--port", "rio"], env=PT)
    assert r.returncode == 0, r.stderr  # the existing id at its port: registered as before


def test_a_stray_key_file_of_other_case_is_named_when_the_ledger_knows_the_id_asked(rio_ledger, tmp_path):
    """``add-gate --keys-dir k --gate-id G-AURORA`` without a ledger to ask, then the gate the ledger's
    events name exactly: the other spelling's key file is the stray one (named, to remove or rename),
    not "use G-AURORA"; nothing written."""
    keys, upper = tmp_path / "keys", RIO["gate"].upper()
    assert run_here(["central", "add-gate", "--keys-dir", str(keys), "--gate-id", upper]).returncode == 0
    before = _files(keys)
    conf = tmp_path / "central.toml"
    conf.write_text(f'database_url = "{rio_ledger}"\nport = "santos"\nports = ["santos", "rio"]\nkeys_dir = "{keys}"\n')
    r = run_here(["central", "add-gate", "--gate-id", RIO["gate"], "--config", str(conf), "--port", "rio"], env=PT)
    assert r.returncode == 2, (r.stdout, r.stderr)
    stray = keys / f"{upper}.key"
    assert (f"os eventos do livro-razão nomeiam o portaló {RIO['gate']} exatamente assim, então o arquivo de chave "
            f"{stray} de {upper} (que difere dele só em maiúsculas e minúsculas) é o errado: remova ou renomeie "
            f"{stray}") in r.stderr, r.stderr
    assert f"use {upper}" not in r.stderr
    assert _files(keys) == before
    r = run_here(["central", "add-gate", "--gate-id", RIO["gate"], "--config", str(conf), "--port", "rio"], env=EN)
    assert r.returncode == 2 and f"so the key file {stray} of {upper}" in r.stderr, r.stderr
    stray.unlink()
    r = run_here(["central", "add-gate", "--gate-id", RIO["gate"], "--config", str(conf), "--port", "rio"], env=PT)
    assert r.returncode == 0, r.stderr
