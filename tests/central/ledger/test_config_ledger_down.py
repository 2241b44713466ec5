"""The ledger's port check of a command given ``--config`` (``central.ledger.home.check_config``)
when PostgreSQL cannot be reached: refused connections, a listener that never answers, a server
SIGSTOPped. A fresh tester got a traceback (``sqlalchemy.exc.OperationalError: (psycopg.errors.
ConnectionTimeout)``, exit 1, no waiting notice) from ``pay overdue``, ``registry list``, ``central
run``... with ``--config``, where ``--db`` said it waited and then ``banco ... inacessível`` ("database ... not reachable");
``central add-gate --config`` (the gate id looked up in the ledger) and ``ledger home-port`` fail the same way.
The check opens the ledger through ``central.db.make_engine`` (the waiting notice under a command)
and says its failure with ``central.db.read_failure``, as every other access: the same notice, one
line, exit 1 (systemd restarts ``central run`` on it). Real ``portgate`` processes (``python -m
app.cli``), the twelve of the silent listener and the stopped server started together so their waits
overlap (one module fixture, ``down_runs``; each test asserts its own six)."""

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


def _start_all(config: str) -> dict[str, subprocess.Popen]:
    env = {**os.environ, "PORTGATE_LANG": "pt"}
    return {name: subprocess.Popen([sys.executable, "-m", "app.cli", *args, "--config", config],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            for name, args in COMMANDS.items()}


def _finish_all(started: dict[str, subprocess.Popen]) -> dict[str, subprocess.CompletedProcess]:
    """Each process's outcome (180 s each at most: ``TimeoutExpired`` after that)."""
    done = {}
    for name, proc in started.items():
        out, err = proc.communicate(timeout=180)
        done[name] = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    return done


def _kill_running(started: dict[str, subprocess.Popen]) -> None:
    for proc in started.values():
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


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


@pytest.fixture(scope="module")
def own_cluster():
    """A cluster of this module's own (it is stopped with SIGSTOP). Its ledger is not migrated: the
    frozen server answers no connection, so no command reaches a table."""
    pg = PostgresCluster()
    pg.start()
    yield pg
    pg.stop(remove_in_background=True)


@pytest.fixture(scope="module")
def down_runs(request, tmp_path_factory):
    """The six commands against a real listener that accepts and never answers (a node cut off; its
    URL names ``connect_timeout=6``) and the six against ``own_cluster`` SIGSTOPped, all twelve
    processes running at once so the waits overlap (the silent listener's six start first, while the
    cluster is made): ``{"silent": (port, runs), "stopped": (port, runs)}``, each ``runs`` the six
    ``CompletedProcess`` by command."""
    started = {}
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen(16)
        silent = srv.getsockname()[1]
        url = f"postgresql+psycopg://postgres@/ledger?host=127.0.0.1:{silent}&connect_timeout=6"
        try:
            started["silent"] = _start_all(_config(tmp_path_factory.mktemp("silent"), url, "silent"))
            cluster = request.getfixturevalue("own_cluster")
            with frozen(cluster):
                started["stopped"] = _start_all(_config(tmp_path_factory.mktemp("stopped"), cluster.url, "stopped"))
                done = {kind: _finish_all(procs) for kind, procs in started.items()}
        finally:
            for procs in started.values():  # a failure above: nothing left running
                _kill_running(procs)
    return {"silent": (silent, done["silent"]), "stopped": (cluster.port, done["stopped"])}


def test_a_ledger_that_never_answers(down_runs):
    port, done = down_runs["silent"]
    _one_line_after_the_notice(done, port, "connection timeout expired")


def test_a_ledger_that_refuses(tmp_path):
    """Refused at once, no wait to overlap: the six commands run one after the other in this process
    (``testkit.cli.run_here``: the same ``app.cli.main``, without six Python starts; the two other
    tests run the real processes)."""
    with socket.socket() as s:  # a port nobody listens on: refused at once, no wait to tell
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"postgresql+psycopg://postgres@/ledger?host=127.0.0.1:{port}"
    config = _config(tmp_path, url, "refused")
    done = {name: run_here([*args, "--config", config], env={"PORTGATE_LANG": "pt"}) for name, args in COMMANDS.items()}
    _one_line_after_the_notice(done, port, "connection failed", notice=False)


def test_a_stopped_server(down_runs):
    """SIGSTOP: the kernel still accepts the connection, the server never answers; the URL names no
    ``connect_timeout``, so ``central.db.CONNECT_TIMEOUT_S`` (5 s) ends the wait after the notice (3 s)."""
    port, done = down_runs["stopped"]
    _one_line_after_the_notice(done, port, "connection timeout expired")
