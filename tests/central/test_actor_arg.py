"""Every ``--actor`` (who makes a change: ``audit_log.actor``, ``String(128)``) goes through one
validator (``central.cli_args.actor_arg``): longer than 128 characters or holding a control
character or line break is one pt-BR line naming ``--actor`` (English with ``--lang en``), exit 2,
before anything is read or written. SQLite stored 300 characters; PostgreSQL refused them at the
write ("a leitura de ... falhou: value too long")."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from central.db import make_engine
from central.registry.schema import audit_log
from testkit.cli import run_here

PT = {"PORTGATE_LANG": "pt", "PORTGATE_ACTOR": None}
LONG = "a" * 300


def test_home_port_refuses_a_long_actor_and_writes_nothing(tmp_path, sqlite_ledger):
    url = sqlite_ledger(tmp_path / "ledger.db")
    (tmp_path / "keys").mkdir()
    config = tmp_path / "central.toml"
    config.write_text(f'database_url = "{url}"\nport = "santos"\nkeys_dir = "{tmp_path / "keys"}"\n')
    r = run_here(["ledger", "home-port", "--config", str(config), "--set", "santos", "--actor", LONG], env=PT)
    assert r.returncode == 2, r.stderr
    assert "--actor: actor tem mais de 128 caracteres (300)" in r.stderr, r.stderr
    engine = make_engine(url)
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(audit_log)).scalar_one() == 0
    engine.dispose()
    ok = run_here(["ledger", "home-port", "--config", str(config), "--set", "santos", "--actor", "a" * 128], env=PT)
    assert ok.returncode == 0, ok.stderr


@pytest.mark.parametrize("args", [
    ["ledger", "home-port", "--config", "c.toml", "--set", "santos"],
    ["ledger", "correct-meal", "--config", "c.toml", "--shift", "V001/NAVIO/2026-03-10/07-13", "--reason", "r"],
    ["office", "disable-user", "--config", "c.toml", "--login", "ana"],
    ["office", "set-ports", "--config", "c.toml", "--login", "ana", "--all-ports"],
    ["registry", "import", "--config", "c.toml", "--workers", "w.csv"],
])
@pytest.mark.parametrize(("actor", "pt", "en"), [
    (LONG, "--actor: actor tem mais de 128 caracteres (300)", "--actor: actor is longer than 128 characters (300)"),
    ("ana\nsilva", "contém um caractere de controle ou quebra de linha", "contains a control character or line break"),
])
def test_every_actor_option_shares_the_validator(tmp_path, monkeypatch, args, actor, pt, en):
    monkeypatch.chdir(tmp_path)
    r = run_here([*args, "--actor", actor], env=PT)
    assert r.returncode == 2 and pt in r.stderr and "--actor" in r.stderr, r.stderr
    r = run_here(["--lang", "en", *args, "--actor", actor], env=PT)
    assert r.returncode == 2 and en in r.stderr, r.stderr
