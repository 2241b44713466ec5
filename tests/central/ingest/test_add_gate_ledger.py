"""``portgate central add-gate --config`` against the ledger (issue 37 item 4, many ports on one
ledger): a gate id whose events the ledger holds at another port (rio's gate ``rio-gate-9``,
registered by rio's own office in a keys dir this config does not name) was accepted at santos, and
its events would have been read as rio's while its key said santos. Now it is refused (pt-BR first,
English with ``--lang en``, exit 2, no key, registration or NATS user written); at its own port it
is registered as before, and so is a new id; a SQLite ledger not made yet is not opened. Real SQLite
and PostgreSQL (``migrated_url``), through ``app.cli.main`` as the other add-gate tests. A ledger
that cannot be reached: tests/central/ledger/test_config_ledger_down.py (real processes)."""

from __future__ import annotations

import json

import pytest

from testkit.cli import run_here
from tests.central.web.test_ports_web import RIO

PT = {"PORTGATE_LANG": "pt"}
REFUSED_PT = ("o portaló rio-gate-9 já enviou eventos ao livro-razão pelo porto rio, não santos: o id de um "
              "portaló é único entre os portos")
REFUSED_EN = "gate rio-gate-9 has already sent events to the ledger at port rio, not santos: a gate id is unique"


@pytest.fixture
def office(rio_ledger, tmp_path):
    """A ledger holding an event of rio's gate; a config of santos and paranagua (no rio keys dir)."""
    keys = tmp_path / "keys"
    keys.mkdir()
    conf = tmp_path / "central.toml"
    conf.write_text(f'database_url = "{rio_ledger}"\nport = "santos"\nports = ["santos", "paranagua", "rio"]\n'
                    f'keys_dir = "{keys}"\n')
    one = tmp_path / "santos.toml"
    one.write_text(f'database_url = "{rio_ledger}"\nport = "santos"\nkeys_dir = "{keys}"\n')
    return tmp_path


def _nothing_written(keys) -> None:
    assert sorted(p.name for p in keys.iterdir()) == [], sorted(p.name for p in keys.iterdir())


def test_a_gate_the_ledger_knows_at_another_port_is_refused(office):
    keys = office / "keys"
    for extra in (["--config", str(office / "central.toml"), "--port", "santos"],
                  ["--config", str(office / "central.toml"), "--port", "santos", "--nats-users",
                   str(keys / "users.conf")],
                  ["--config", str(office / "santos.toml")]):  # one port: the config's port is the gate's
        r = run_here(["central", "add-gate", "--gate-id", RIO["gate"], *extra], env=PT)
        assert r.returncode == 2, (extra, r.stdout, r.stderr)
        assert REFUSED_PT in r.stderr, r.stderr
        _nothing_written(keys)
    r = run_here(["--lang", "en", "central", "add-gate", "--gate-id", RIO["gate"], "--config",
                  str(office / "central.toml"), "--port", "santos"], env=PT)
    assert r.returncode == 2 and REFUSED_EN in r.stderr, r.stderr
    _nothing_written(keys)


def test_at_its_own_port_and_a_new_id_are_registered_as_before(office):
    keys = office / "keys"
    r = run_here(["central", "add-gate", "--gate-id", RIO["gate"], "--config", str(office / "central.toml"),
                  "--port", "rio"], env=PT)
    assert r.returncode == 0, r.stderr
    assert json.loads((keys / "gate-ports.json").read_text()) == {RIO["gate"]: "rio"}
    assert (keys / f"{RIO['gate']}.key").exists()
    r = run_here(["central", "add-gate", "--gate-id", "g-new", "--config", str(office / "santos.toml")], env=PT)
    assert r.returncode == 0, r.stderr
    assert (keys / "g-new.key").exists()


def test_a_sqlite_ledger_not_made_yet_is_not_created(tmp_path):
    keys, db = tmp_path / "keys", tmp_path / "none.db"
    conf = tmp_path / "central.toml"
    conf.write_text(f'database_url = "sqlite:///{db}"\nport = "santos"\nkeys_dir = "{keys}"\n')
    r = run_here(["central", "add-gate", "--gate-id", "g1", "--config", str(conf)], env=PT)
    assert r.returncode == 0, r.stderr
    assert (keys / "g1.key").exists() and not db.exists()


def test_check_config_reports_a_gate_registered_without_config_at_another_port(office):
    """The per-port form (``--keys-dir --port``, no ``--config``: no ledger to ask) registers rio's gate
    at santos; ``check-config`` of a config whose ledger is there says so (pt-BR first, exit 2,
    naming ``keys_dir``); once registered at rio it is ok again."""
    keys, conf = office / "keys", str(office / "central.toml")
    assert run_here(["central", "check-config", conf], env=PT).returncode == 0
    r = run_here(["central", "add-gate", "--keys-dir", str(keys), "--gate-id", RIO["gate"], "--port", "santos"],
                 env=PT)
    assert r.returncode == 0, r.stderr  # it cannot see the ledger
    r = run_here(["central", "check-config", conf], env=PT)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert (f"$.keys_dir: o portaló {RIO['gate']} está registrado no porto santos em {keys}, mas o livro-razão tem "
            "os seus eventos no porto rio: o porto de um portaló é o dos seus eventos") in r.stderr, r.stderr
    r = run_here(["--lang", "en", "central", "check-config", conf], env=PT)
    assert (f"gate {RIO['gate']} is registered at port santos in {keys}, but the ledger has its events at port "
            "rio") in r.stderr, r.stderr
    (keys / "gate-ports.json").write_text(json.dumps({RIO["gate"]: "rio"}))  # put right by hand
    r = run_here(["central", "check-config", conf], env=PT)
    assert r.returncode == 0 and r.stdout.startswith("ok: "), r.stderr
    upper = RIO["gate"].upper()  # the same id to a person, at santos
    (keys / "gate-ports.json").write_text(json.dumps({upper: "santos"}))
    r = run_here(["central", "check-config", conf], env=PT)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert (f"$.keys_dir: o portaló {upper} está registrado no porto santos em {keys}, mas o livro-razão tem eventos "
            f"do portaló {RIO['gate']} no porto rio: ids de portaló que diferem só em maiúsculas e minúsculas são um "
            "mesmo id") in r.stderr, r.stderr


def test_check_config_of_a_ledger_that_cannot_be_read_warns_and_goes_on(tmp_path):
    """A ledger that cannot be read (here a file that is not a database): one warning line, the
    registrations not compared, the rest checked as before (exit 0)."""
    keys, db = tmp_path / "keys", tmp_path / "ledger.db"
    keys.mkdir()
    db.write_bytes(b"not a database, " * 64)
    conf = tmp_path / "central.toml"
    conf.write_text(f'database_url = "sqlite:///{db}"\nport = "santos"\nkeys_dir = "{keys}"\n')
    r = run_here(["central", "check-config", str(conf)], env=PT)
    assert r.returncode == 0 and r.stdout.startswith("ok: "), (r.stdout, r.stderr)
    assert r.stderr.startswith("aviso: o livro-razão não pôde ser lido (") and r.stderr.count("\n") == 1, r.stderr
    assert "os portos dos portalós registrados não foram comparados" in r.stderr


def test_a_gate_id_differing_only_in_case_from_a_ledger_gate_at_another_port_is_refused(office):
    """``RIO-GATE-9`` at santos when the ledger has ``rio-gate-9``'s events at rio: one id to a person
    (pt-BR first, exit 2, nothing written); at rio it is not this check's concern."""
    keys, upper = office / "keys", RIO["gate"].upper()
    r = run_here(["central", "add-gate", "--gate-id", upper, "--config", str(office / "central.toml"),
                  "--port", "santos"], env=PT)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert (f"o id de portaló {upper} difere só em maiúsculas e minúsculas de {RIO['gate']}, que já enviou eventos "
            "ao livro-razão pelo porto rio") in r.stderr, r.stderr
    _nothing_written(keys)
