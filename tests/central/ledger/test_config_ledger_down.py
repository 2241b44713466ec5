"""The ledger's port check of a command given ``--config`` (``central.ledger.home.check_config``)
when PostgreSQL cannot be reached: refused connections, a listener that never answers, a server
SIGSTOPped. A fresh tester got a traceback (``sqlalchemy.exc.OperationalError: (psycopg.errors.
ConnectionTimeout)``, exit 1, no waiting notice) from ``pay overdue``, ``registry list``, ``central
run``... with ``--config``, where ``--db`` said it waited and then ``banco ... inacessível`` ("database ... not reachable");
``central add-gate --config`` (the gate id looked up in the ledger) and ``ledger home-port`` fail the same way.
The check opens the ledger through ``central.db.make_engine`` (the waiting notice under a command)
and says its failure with ``central.db.read_failure``, as every other access: the same notice, one
line, exit 1 (systemd restarts ``central run`` on it). Real ``portgate`` processes (``python -m
app.cli``), started together so their waits overlap."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

from testkit.cli import run_here
from testkit.postgres import PostgresCluster, frozen

NOTICE = "Aguardando o livro-razão (banco de dados) em 127.0.0.1:{port}"
COMMANDS = {  # a reading command, a writing one of two groups, the ingest service
    "registry list": ("registry", "list"),
    "pay overdue": ("pay", "overdue"),
    "registry exam": ("registry", "exam", "X1", "--date", "2026-03-01"),
    "central run": ("central", "run"),
    "central add-gate": ("central", "add-gate", "--gate-id", "g-new", "--port", "santos"),  # looks the gate up
    "ledger home-port": ("ledger", "home-port", "--set", "santos", "--actor", "chefe"),  # checks nothing first
}


def _config(tmp_path, url: str, name: str) -> str:
    keys = tmp_path / "keys"
    keys.mkdir(exist_ok=True)
    path = tmp_path / f"{name}.toml"
    path.write_text(f'database_url = "{url}"\nport = "santos"\nports = ["santos", "paranagua"]\n'
                    f'keys_dir = "{keys}"\n')
    return str(path)


def _run_all(config: str) -> dict[str, subprocess.CompletedProcess]:
    env = {**os.environ, "PORTGATE_LANG": "pt"}
    started = {name: subprocess.Popen([sys.executable, "-m", "app.cli", *args, "--config", config],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
               for name, args in COMMANDS.items()}
    done = {}
    for name, proc in started.items():
        out, err = proc.communicate(timeout=180)
        done[name] = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    return done


def _one_line_after_the_notice(done: dict[str, subprocess.CompletedProcess], port: int, why: str,
                               notice: bool = True) -> None:
    for name, run in done.items():
        assert run.returncode == 1, (name, run.returncode, run.stderr)
        assert "Traceback" not in run.stderr, (name, run.stderr)
        lines = run.stderr.strip().splitlines()
        assert lines[-1].startswith("portgate: banco postgresql+psycopg://") and \
            f"inacessível: {why}" in lines[-1], (name, lines)  # pt-BR, the driver's reason as it said it
        if notice:
            assert lines[:-1] == [line for line in lines[:-1] if line.startswith(NOTICE.format(port=port))], \
                (name, lines)
            # the notice (a 3 s timer) at most once, then the one line: on a loaded machine the 5 s
            # connect timeout of a stopped server can end the wait before the timer's thread ran
            assert len(lines) in (1, 2), (name, lines)
        else:
            assert len(lines) == 1, (name, lines)


@pytest.fixture
def silent_port():
    """A real listener that accepts and never answers (a node cut off)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    yield srv.getsockname()[1]
    srv.close()


def test_a_ledger_that_never_answers(silent_port, tmp_path):
    url = f"postgresql+psycopg://postgres@/ledger?host=127.0.0.1:{silent_port}&connect_timeout=6"
    _one_line_after_the_notice(_run_all(_config(tmp_path, url, "silent")), silent_port, "connection timeout expired")


def test_a_ledger_that_refuses(tmp_path):
    """Refused at once, no wait to overlap: the six commands run one after the other in this process
    (``testkit.cli.run_here``: the same ``app.cli.main``, without six Python starts; the two tests
    above run the real processes)."""
    with socket.socket() as s:  # a port nobody listens on: refused at once, no wait to tell
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"postgresql+psycopg://postgres@/ledger?host=127.0.0.1:{port}"
    config = _config(tmp_path, url, "refused")
    done = {name: run_here([*args, "--config", config], env={"PORTGATE_LANG": "pt"}) for name, args in COMMANDS.items()}
    _one_line_after_the_notice(done, port, "connection failed", notice=False)


@pytest.fixture(scope="module")
def own_cluster():
    """A cluster of this module's own (it is stopped with SIGSTOP). Its ledger is not migrated: the
    frozen server answers no connection, so no command reaches a table."""
    pg = PostgresCluster()
    pg.start()
    yield pg
    pg.stop(remove_in_background=True)


def test_a_stopped_server(own_cluster, tmp_path):
    """SIGSTOP: the kernel still accepts the connection, the server never answers; the URL names no
    ``connect_timeout``, so ``central.db.CONNECT_TIMEOUT_S`` (5 s) ends the wait after the notice (3 s)."""
    config = _config(tmp_path, own_cluster.url, "stopped")
    with frozen(own_cluster):
        done = _run_all(config)
    _one_line_after_the_notice(done, own_cluster.port, "connection timeout expired")
