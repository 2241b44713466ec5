"""central.toml paths are relative to the file (as gate.toml's); ``registry``, ``rotation`` and
``pay`` name their database with ``--config`` or ``--db`` (no default file), and a PostgreSQL
password comes from ``database_password_file`` (0600) or ``PGPASSFILE``, never the command line."""

from __future__ import annotations

import os
import subprocess

import pytest
from sqlalchemy import func, select

from app.cli import main
from central import db
from central.config import load_central_config
from central.ledger.migrate import upgrade
from central.registry.schema import workers
from tests.central.registry.conftest import WORKER_COLUMNS, worker_rows, write_csv


def _central_toml(directory, database_url, **extra) -> str:
    lines = [f'database_url = "{database_url}"', 'port = "santos"', 'keys_dir = "keys"']
    lines += [f'{k} = "{v}"' for k, v in extra.items()]
    lines += ["", "[mqtt]", 'password_file = "secrets/mqtt.password"', "", "[publish]", 'workers_csv = "data/workers.csv"']
    path = directory / "central.toml"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_relative_paths_resolve_against_the_file_not_the_cwd(tmp_path, monkeypatch):
    conf = tmp_path / "etc"
    conf.mkdir()
    monkeypatch.chdir(tmp_path)
    cfg = load_central_config(_central_toml(conf, "sqlite:///ledger.db"))
    assert cfg.database_url == f"sqlite:///{conf / 'ledger.db'}"
    assert cfg.keys_dir == str(conf / "keys")
    assert cfg.mqtt.password_file == str(conf / "secrets" / "mqtt.password")
    assert cfg.publish.workers_csv == str(conf / "data" / "workers.csv")
    absolute = load_central_config(_central_toml(conf, f"sqlite:///{tmp_path}/abs.db"))
    assert absolute.database_url == f"sqlite:///{tmp_path}/abs.db"


def test_check_config_from_another_directory_finds_the_keys_dir_beside_the_file(tmp_path, monkeypatch, capsys):
    conf = tmp_path / "etc"
    (conf / "keys").mkdir(parents=True)
    path = conf / "central.toml"
    path.write_text('database_url = "sqlite:///ledger.db"\nport = "santos"\nkeys_dir = "keys"\n')
    upgrade(f"sqlite:///{conf / 'ledger.db'}")  # the ledger beside the file (a missing one is refused)
    monkeypatch.chdir(tmp_path)
    assert main(["central", "check-config", str(path)]) == 0, capsys.readouterr().err


@pytest.mark.parametrize("argv", [
    ["registry", "import", "--workers", "w.csv"],
    ["rotation", "list", "--date", "2026-03-10"],
    ["pay", "--from", "2026-03-01", "--to", "2026-03-31"],
    ["pay", "overdue"],
    ["ledger", "migrate"],
])
def test_a_command_without_a_named_database_is_refused_and_creates_nothing(tmp_path, monkeypatch, capsys, argv):
    monkeypatch.chdir(tmp_path)
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "--config" in err and "--db" in err
    assert list(tmp_path.iterdir()) == [], "no database file made in the current directory"


def test_registry_import_with_config_uses_the_files_database(tmp_path, monkeypatch, capsys):
    conf = tmp_path / "etc"
    conf.mkdir()
    path = _central_toml(conf, "sqlite:///office.db")
    csv_path = write_csv(tmp_path / "workers.csv", WORKER_COLUMNS, worker_rows(2))
    monkeypatch.chdir(tmp_path)
    assert main(["registry", "import", "--config", path, "--actor", "ana", "--workers", str(csv_path)]) == 0
    assert (conf / "office.db").exists() and not (tmp_path / "office.db").exists()
    assert main(["registry", "import", "--config", path, "--db", "sqlite:///x.db", "--workers", str(csv_path)]) == 2
    assert "one of them" in capsys.readouterr().err


@pytest.fixture
def pg_office(pg_cluster):
    """A role ``office`` with password ``s3cret`` that must give it (scram over TCP), and its database."""
    url = pg_cluster.create_database("office_pw")
    psql = pg_cluster.bindir / "psql"
    subprocess.run([str(psql), "-h", "127.0.0.1", "-p", str(pg_cluster.port), "-U", "postgres", "-d", "office_pw",
                    "-c", "CREATE ROLE office LOGIN PASSWORD 's3cret'; GRANT ALL ON SCHEMA public TO office;"],
                   check=True, capture_output=True)
    hba = pg_cluster.datadir / "pg_hba.conf"
    original = hba.read_text()
    hba.write_text("host all office 127.0.0.1/32 scram-sha-256\n" + original)
    assert pg_cluster._run("pg_ctl", "-D", str(pg_cluster.datadir), "reload").returncode == 0
    yield url.replace("postgres@", "office@")
    hba.write_text(original)
    pg_cluster._run("pg_ctl", "-D", str(pg_cluster.datadir), "reload")


def _count(url) -> int:
    engine = db.make_engine(url)
    try:
        with engine.connect() as conn:
            return conn.execute(select(func.count()).select_from(workers)).scalar()
    finally:
        engine.dispose()


def test_the_postgresql_password_comes_from_a_0600_file_or_pgpassfile(pg_office, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("PGPASSFILE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.pgpass of the machine
    csv_path = write_csv(tmp_path / "workers.csv", WORKER_COLUMNS, worker_rows(2))
    conf = tmp_path / "etc"
    conf.mkdir()
    secret = conf / "db.password"
    secret.write_text("s3cret\n")
    os.chmod(secret, 0o644)
    path = _central_toml(conf, pg_office, database_password_file="db.password")
    assert main(["registry", "import", "--config", path, "--workers", str(csv_path)]) == 2
    assert "$.database_password_file" in capsys.readouterr().err, "a password file others can read is refused"
    os.chmod(secret, 0o600)
    assert main(["registry", "import", "--config", path, "--workers", str(csv_path)]) == 0, capsys.readouterr().err
    assert main(["registry", "import", "--db", pg_office, "--workers", str(csv_path)]) != 0, "no password: refused"
    capsys.readouterr()
    pgpass = tmp_path / "pgpass"
    host_port = pg_office.split("@", 1)[1].split("/", 1)[0]
    pgpass.write_text(f"{host_port.replace(':', ':', 1)}:*:office:s3cret\n")
    os.chmod(pgpass, 0o600)
    monkeypatch.setenv("PGPASSFILE", str(pgpass))
    assert main(["registry", "import", "--db", pg_office, "--workers", str(csv_path)]) == 0, capsys.readouterr().err
    assert "warning" not in capsys.readouterr().err
    with_password = pg_office.replace("office@", "office:s3cret@")
    assert _count(with_password) == 2
    assert main(["registry", "import", "--db", with_password, "--workers", str(csv_path)]) == 0
    assert "--db carries a password" in capsys.readouterr().err


def test_ledger_migrate_with_config_makes_the_ledger_beside_the_file(tmp_path, monkeypatch):
    conf = tmp_path / "etc"
    conf.mkdir()
    monkeypatch.chdir(tmp_path)
    assert main(["ledger", "migrate", "--config", _central_toml(conf, "sqlite:///ledger.db")]) == 0
    assert (conf / "ledger.db").exists()
