"""The office service as systemd runs it: READY/WATCHDOG on NOTIFY_SOCKET, metrics, config errors,
and no secret in its logs."""

from __future__ import annotations

from pathlib import Path

from central.ingest.keys import add_gate
from central.ledger.migrate import upgrade
from portgate.config import write_secret
from tests.ops.conftest import free_port, run_cli, run_here, scrape
from testkit.sqlite_copies import copy_made_once
from testkit.wait import wait_until


def _migrated(path: Path) -> None:
    upgrade(f"sqlite:///{path}")


def central_toml(tmp_path: Path, broker, *, metrics_port: int = 0, user: str | None = None,
                 password: str | None = None, workers: int = 1, url: str | None = None) -> Path:
    keys = tmp_path / "keys"
    keys.mkdir(exist_ok=True)
    if not (keys / "g1.key").exists():
        add_gate(keys, "g1")
    if url is None and not (tmp_path / "ledger.db").exists():  # as `portgate ledger migrate` creates it:
        copy_made_once("ops-migrated", _migrated, tmp_path / "ledger.db")  # migrated once, copied
    lines = [
        f'database_url = "{url or "sqlite:///" + str(tmp_path / "ledger.db")}"',
        'port = "santos"',
        f'keys_dir = "{keys}"',
        f"workers = {workers}",
        f"metrics_port = {metrics_port}",
        "log_json = true",
        "[mqtt]",
        f'host = "{broker.host}"',
        f"port = {broker.port}",
    ]
    if user:
        pw = tmp_path / "mqtt.pw"
        write_secret(pw, password.encode() + b"\n")
        lines += [f'username = "{user}"', f'password_file = "{pw}"']
    path = tmp_path / "central.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_central_ready_watchdog_and_metrics(tmp_path, broker, notify_socket, start_service):
    mport = free_port()
    cfg = central_toml(tmp_path, broker, metrics_port=mport, workers=2)
    svc = start_service(["central", "run", "--config", str(cfg)], notify=notify_socket,
                        watchdog_usec=400_000)
    wait_until(lambda: notify_socket.seen("READY=1") or not svc.alive(), timeout=90, what="READY=1")
    assert svc.alive(), svc.output()
    wait_until(lambda: notify_socket.seen("WATCHDOG=1") >= 3, what="three WATCHDOG=1 pings")
    text = scrape(mport)
    for name in ("portgate_ingest_events_total", "portgate_ingest_dead_letters_total",
                 "portgate_ingest_open_gaps", "portgate_ingest_workers_alive 2.0",
                 'portgate_mqtt_connected{client="ingest-0"} 1.0',
                 'portgate_mqtt_connected{client="ingest-1"} 1.0'):
        assert name in text, name
    assert svc.stop() == 0
    assert notify_socket.seen("STOPPING=1")
    # JSON log lines with the port bound
    assert '"port": "santos"' in svc.output() and '"event": "central_started"' in svc.output()


def test_central_password_never_logged(tmp_path, secure_broker, notify_socket, start_service):
    cfg = central_toml(tmp_path, secure_broker, user="office", password="ledger-pw-Secr3t")
    svc = start_service(["central", "run", "--config", str(cfg)], notify=notify_socket,
                        extra_env={"PORTGATE_LOG_LEVEL": "debug"})
    wait_until(lambda: notify_socket.seen("READY=1") or not svc.alive(), timeout=90, what="READY=1")
    assert svc.alive(), svc.output()
    assert "broker not reached" not in "".join(notify_socket.poll())  # authenticated and connected
    svc.stop()
    out = svc.output()
    assert "central_started" in out
    assert "ledger-pw-Secr3t" not in out


def test_central_bad_config_names_key_exit_2(tmp_path, broker):
    """Both commands in this process (``run_here``: a refusal comes before anything starts); the
    installed command's refusal of ``central run`` is the missing-file test's below."""
    cfg = central_toml(tmp_path, broker)
    cfg.write_text(cfg.read_text().replace("workers = 1", 'workers = "many"'))
    for cmd in (["central", "run", "--config", str(cfg)], ["central", "check-config", str(cfg)]):
        res = run_here(cmd)
        assert res.returncode == 2, res
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and "$.workers" in lines[0] and "Traceback" not in res.stderr, res.stderr


def test_central_unknown_key_and_open_secret(tmp_path, broker):
    cfg = central_toml(tmp_path, broker, user="office", password="pw")
    good = cfg.read_text()
    res = run_cli(["central", "check-config", str(cfg)])
    assert res.returncode == 0 and res.stdout.startswith("ok: "), res
    cfg.write_text(good + "\n[ingest]\nbatch_sise = 3\n")
    res = run_here(["central", "check-config", str(cfg)])
    assert res.returncode == 2 and "$.ingest.batch_sise" in res.stderr, res.stderr
    cfg.write_text(good)
    (tmp_path / "mqtt.pw").chmod(0o644)
    for cmd in (["central", "check-config", str(cfg)], ["central", "run", "--config", str(cfg)]):
        res = run_here(cmd)  # refused before anything starts: in this process, as above
        assert res.returncode == 2 and "chmod 600" in res.stderr, res.stderr
        assert "$.mqtt.password_file" in res.stderr or "mqtt.pw" in res.stderr
        assert "pw\n" not in res.stderr.replace("mqtt.pw", "")


def test_central_run_refuses_a_sqlite_ledger_file_that_does_not_exist(tmp_path, broker):
    """A mistyped path used to become a new, empty ledger (migrations ran, the gates' events went
    there): now one line naming the file and the command that creates a ledger, exit 2, no file.
    The installed command (``python -m app.cli``): this module's refusal of ``central run`` by a real
    process (the other refusals run in this process)."""
    missing = tmp_path / "none.db"  # in a directory that exists (a missing one: tests/test_cli_more_refusal_texts.py)
    cfg = central_toml(tmp_path, broker, url=f"sqlite:///{missing}")
    res = run_cli(["central", "run", "--config", str(cfg)])
    assert res.returncode == 2, res
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("portgate: database_url: "), res.stderr
    assert str(missing) in lines[0] and "portgate ledger migrate" in lines[0]
    assert not missing.exists()


def test_central_run_refuses_an_empty_sqlite_ledger_file_and_ledger_migrate_makes_it_a_ledger(
        tmp_path, broker, notify_socket, start_service):
    """A 0-byte file (a failed copy, a wrong path) is not migrated into a new, empty ledger: one line
    naming the file and how to make a new ledger, exit 2, the file left as it was; `portgate ledger
    migrate` is the explicit way to start a ledger in it, and `central run` then starts. The refusals
    and the migration run in this process (``run_here``: the same ``app.cli.main`` without three Python
    starts); the started service is the installed command."""
    empty = tmp_path / "copied.db"
    empty.touch()
    cfg = central_toml(tmp_path, broker, url=f"sqlite:///{empty}")
    res = run_here(["central", "run", "--config", str(cfg)])
    assert res.returncode == 2, res
    lines = res.stderr.strip().splitlines()
    assert lines == [f"portgate: database_url: SQLite file {str(empty)!r} is empty (0 bytes): a failed copy "
                     "or a wrong path? Restore the ledger or fix the path; to start a new ledger in this file "
                     "run `portgate ledger migrate --db URL`"], res.stderr
    assert empty.stat().st_size == 0 and sorted(p.name for p in tmp_path.glob("copied.db*")) == ["copied.db"]
    served = run_here(["office", "serve", "--config", str(cfg), "--port", str(free_port())])
    assert served.returncode == 2 and "is empty (0 bytes)" in served.stderr, served
    assert len(served.stderr.strip().splitlines()) == 1
    migrated = run_here(["ledger", "migrate", "--config", str(cfg)])
    assert migrated.returncode == 0, migrated
    assert empty.stat().st_size > 0
    svc = start_service(["central", "run", "--config", str(cfg)], notify=notify_socket)
    wait_until(lambda: notify_socket.seen("READY=1") or not svc.alive(), timeout=90, what="READY=1")
    assert svc.alive(), svc.output()
    assert svc.stop() == 0
