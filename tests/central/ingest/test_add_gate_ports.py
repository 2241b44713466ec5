"""``portgate central add-gate`` and ``check-config`` on an office of several ports (issue 37 item 4):
the keys dirs of santos (``keys_dir``: NATS users of santos, a paranagua gate registered by
``--port``) and paranagua (``port_keys_dirs``). Without ``--port``, a keys dir naming several ports is
refused; ``--nats-users`` for a port the keys dir does not serve, or a ``--port`` the config does not
serve, is refused saying so (pt-BR first); a gate id registered at another port, in any served
port's keys dir, is refused; check-config reports a gate id registered at two ports. Nothing is
written by a refused command."""

from __future__ import annotations

import json

import pytest

from central.ingest.gate_port_file import register_port
from central.ingest.nats_users import add_gate_user
from central.ledger.migrate import upgrade
from testkit.cli import run_here

PT, EN = {"PORTGATE_LANG": "pt"}, {"PORTGATE_LANG": "en"}


@pytest.fixture
def office(tmp_path):
    ks, kp = tmp_path / "keys", tmp_path / "keys-para"
    add_gate_user(ks, ks / "users.conf", "santos", "g-aurora")
    register_port(ks, "pr-lost", "paranagua")  # add-gate --config two.toml --port paranagua: in keys_dir
    add_gate_user(kp, kp / "users.conf", "paranagua", "pr-aurora")
    db = f'database_url = "sqlite:///{tmp_path / "l.db"}"\nport = "santos"\nkeys_dir = "{ks}"\n'
    (tmp_path / "one.toml").write_text(db)
    (tmp_path / "two.toml").write_text(db + f'ports = ["santos", "paranagua"]\nport_keys_dirs = {{ paranagua = "{kp}" }}\n')
    return tmp_path


def _users(keys) -> list[str]:
    return sorted(json.loads((keys / "nats-users.json").read_text())["users"])


def _untouched(d, gate: str, dirs=("keys", "keys-para")) -> None:
    for k in dirs:
        assert not (d / k / f"{gate}.key").exists() and not (d / k / f"{gate}.nats-password").exists()
    assert _users(d / "keys") == ["g-aurora", "office"] and _users(d / "keys-para") == ["office", "pr-aurora"]


def test_without_port_a_keys_dir_of_several_ports_is_refused(office):
    ks = office / "keys"
    for extra in (["--config", str(office / "one.toml"), "--nats-users", str(ks / "users.conf")], ["--keys-dir", str(ks)]):
        r = run_here(["central", "add-gate", "--gate-id", "pr-x", *extra], env=PT)
        assert r.returncode == 2, r
        assert (f"o diretório de chaves {ks} registra portalós de vários portos (paranagua, santos): "
                "diga o porto do portaló com --port") in r.stderr
    _untouched(office, "pr-x")


def test_nats_users_of_a_port_the_keys_dir_does_not_serve_is_refused_saying_so(office):
    ks = office / "keys"
    args = ["central", "add-gate", "--gate-id", "g-z", "--keys-dir", str(ks), "--nats-users", str(ks / "users.conf"),
            "--port", "rio"]
    r = run_here(args, env=PT)
    assert r.returncode == 2
    assert (f"{ks / 'nats-users.json'} guarda os usuários NATS do porto santos: o porto rio não é atendido por este "
            "diretório de chaves; dê --port santos, ou o diretório de chaves do porto rio com --keys-dir") in r.stderr
    assert "port rio is not served by this keys dir; give --port santos" in run_here(args, env=EN).stderr
    r = run_here(["central", "add-gate", "--gate-id", "g-z", "--config", str(office / "one.toml"), "--port", "rio"],
                 env=PT)
    assert r.returncode == 2 and "porto(s) rio não atendido(s) por este escritório (portos: santos)" in r.stderr
    _untouched(office, "g-z")
    assert "g-z" not in (ks / "gate-ports.json").read_text()


def test_a_gate_id_registered_at_another_port_is_refused(office):
    kp = office / "keys-para"
    base = ["central", "add-gate", "--config", str(office / "two.toml"), "--keys-dir", str(kp), "--port", "paranagua"]
    for extra in ([], ["--nats-users", str(kp / "users.conf")]):
        r = run_here([*base, "--gate-id", "g-aurora", *extra], env=PT)
        assert r.returncode == 2, r
        assert (f"o portaló g-aurora já está registrado no porto santos (em {office / 'keys'}): o id de um portaló "
                "é único entre os portos") in r.stderr
    _untouched(office, "g-aurora", dirs=("keys-para",))  # santos's own g-aurora stays
    assert not (kp / "gate-ports.json").exists()
    r = run_here(["central", "add-gate", "--config", str(office / "two.toml"), "--keys-dir", str(office / "keys"),
                  "--gate-id", "pr-lost", "--port", "santos"], env=PT)  # registered at paranagua in the same dir
    assert r.returncode == 2 and "o portaló pr-lost já está registrado no porto paranagua" in r.stderr
    done = run_here([*base, "--gate-id", "pr-new", "--nats-users", str(kp / "users.conf")])
    assert done.returncode == 0, done.stderr  # a new id: as before
    assert _users(kp) == ["office", "pr-aurora", "pr-new"]


def test_check_config_reports_a_gate_id_registered_at_two_ports(office):
    upgrade(f"sqlite:///{office / 'l.db'}")  # check-config refuses a ledger file not made yet, as central run does
    assert run_here(["central", "check-config", str(office / "two.toml")]).returncode == 0
    register_port(office / "keys-para", "g-aurora", "paranagua")  # written by hand, or before add-gate refused it
    r = run_here(["central", "check-config", str(office / "two.toml")], env=PT)
    assert r.returncode == 2
    assert (f"$.port_keys_dirs: o portaló g-aurora está registrado em vários portos (santos: {office / 'keys'}, "
            f"paranagua: {office / 'keys-para'}): o id de um portaló é único entre os portos") in r.stderr
    r = run_here(["central", "check-config", str(office / "two.toml")], env=EN)
    assert "gate g-aurora is registered at several ports" in r.stderr


def test_a_gate_id_differing_only_in_case_at_another_port_is_refused(office):
    """``G-Aurora`` at paranagua beside santos's ``g-aurora``: one id to a person (ports differing only in
    case are refused too), refused with or without ``--config`` (pt-BR first), nothing written; at the
    same port the id is its own concern (not this check)."""
    kp, ks = office / "keys-para", office / "keys"
    for base in (["--config", str(office / "two.toml"), "--keys-dir", str(kp)], ["--keys-dir", str(ks)]):
        r = run_here(["central", "add-gate", *base, "--gate-id", "G-Aurora", "--port", "paranagua"], env=PT)
        assert r.returncode == 2, (base, r.stdout, r.stderr)
        assert (f"o id de portaló G-Aurora difere só em maiúsculas e minúsculas de g-aurora, registrado no porto "
                f"santos (em {ks})") in r.stderr, r.stderr
    _untouched(office, "G-Aurora")
    assert "G-Aurora" not in (ks / "gate-ports.json").read_text() and not (kp / "gate-ports.json").exists()
    r = run_here(["central", "add-gate", "--keys-dir", str(ks), "--gate-id", "G-Aurora", "--port", "paranagua"],
                 env=EN)
    assert "gate id G-Aurora differs only in letter case from g-aurora, registered at port santos" in r.stderr


def test_check_config_reports_gate_ids_differing_only_in_case_at_two_ports(office):
    register_port(office / "keys-para", "G-Aurora", "paranagua")  # by hand, or before add-gate refused it
    r = run_here(["central", "check-config", str(office / "two.toml")], env=PT)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert (f"$.port_keys_dirs: os portalós g-aurora (porto santos, {office / 'keys'}) e G-Aurora (porto paranagua, "
            f"{office / 'keys-para'}) diferem só em maiúsculas e minúsculas") in r.stderr, r.stderr
    r = run_here(["central", "check-config", str(office / "two.toml")], env=EN)
    assert "gates g-aurora (port santos, " in r.stderr and "differ only in letter case" in r.stderr, r.stderr
