"""Two ``portgate central run`` on one config (issue 37): a second process of the same home port and
``--instance`` used to take the MQTT sessions of the first and back (the same client ids, a flapping
pair); now it does not start: exit 2 (systemd's ``RestartPreventExitStatus=2``), one line naming the
running one, its pid and host and the heartbeat bound (pt-BR, English with ``--lang en``)
(``central.ledger.instance_claim``); ``central check-config`` names the live ones. Distinct ``--instance`` names both run. A SIGKILLed office
restarted at once under the same instance (systemd's ``Restart=on-failure``, 2 s later) runs: its
dead row's heartbeat is recent but its pid is gone. A row of another host counts until its
heartbeat is ``STALE_S`` old; an office whose instance was taken over stops. The real service (READY through sd_notify) on a real mosquitto, SQLite
and PostgreSQL; the claim's cases on both databases: tests/central/ledger/test_office_instance_claim.py."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import signal
import socket

import pytest
from sqlalchemy import insert, select, update

from central.db import make_engine
from central.ledger.liveness import STALE_S
from central.ledger.migrate import upgrade
from central.ledger.schema import office_processes
from testkit.postgres import PostgresCluster
from testkit.wait import wait_until
from testkit.cli import run_here
from tests.ops.conftest import run_cli
from tests.ops.test_central_service import central_toml

PT = {**os.environ, "PORTGATE_LANG": "pt"}
HOST = socket.gethostname()


@pytest.fixture
def pg():
    cluster = PostgresCluster()  # scripts/setup.sh installs PostgreSQL: a missing server fails here
    cluster.start()
    yield cluster
    cluster.stop()


def _ready(notify_socket, svc, n: int) -> None:
    wait_until(lambda: notify_socket.seen("READY=1") >= n or not svc.alive(), timeout=180, what=f"READY=1 #{n}")
    assert svc.alive(), svc.output()


def _rows(engine) -> list:
    with engine.connect() as c:
        t = office_processes.c
        return c.execute(select(t.instance, t.pid, t.host, t.proc_start, t.seen_at)
                         .where(t.kind == "central run").order_by(t.instance)).all()


def _one_line(result) -> str:
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


def test_a_second_office_of_one_instance_is_refused_and_another_instance_runs(
        tmp_path, broker, notify_socket, start_service):
    cfg = str(central_toml(tmp_path, broker))
    engine = make_engine(f"sqlite:///{tmp_path / 'ledger.db'}")
    try:
        first = start_service(["central", "run", "--config", cfg], notify=notify_socket)
        _ready(notify_socket, first, 1)
        line = _one_line(run_cli(["central", "run", "--config", cfg], env=PT))
        assert re.fullmatch(
            f"portgate: outro escritório sem --instance do porto santos \\(pid {first.proc.pid} no host "
            f"{re.escape(HOST)}, último sinal de vida há \\d+ s\\) está rodando neste livro-razão: inicie este com "
            f"--instance NOME ou pare aquele \\(um escritório que morreu deixa de contar {STALE_S:.0f} s após o "
            "último sinal de vida\\)", line), line
        line = _one_line(run_cli(["--lang", "en", "central", "run", "--config", cfg], env=PT))
        assert line.startswith(f"portgate: another office without --instance of port santos (pid {first.proc.pid} on "
                               f"host {HOST}, heartbeat "), line
        assert line.endswith(f"s ago) is running on this ledger: start this one with --instance NAME or stop that "
                             f"one (an office that died stops counting {STALE_S:.0f} s after its last heartbeat)")
        second = start_service(["central", "run", "--config", cfg, "--instance", "b"], notify=notify_socket)
        _ready(notify_socket, second, 2)
        assert [(r.instance, r.pid) for r in _rows(engine)] == [("", first.proc.pid), ("b", second.proc.pid)]
        line = _one_line(run_cli(["central", "run", "--config", cfg, "--instance", "b"]))  # the suite's English
        assert line.startswith(f"portgate: another office 'b' of port santos (pid {second.proc.pid} on host {HOST}, "), \
            line
        assert "start this one with another --instance NAME or stop that one" in line
        checked = run_here(["central", "check-config", cfg], env={"PORTGATE_LANG": "pt"})  # systemd's ExecStartPre
        assert checked.returncode == 0 and checked.stdout.startswith("ok: "), (checked.stdout, checked.stderr)
        assert checked.stderr.splitlines() == [
            f"nota: 2 escritório(s) do porto santos rodam neste livro-razão (sem --instance (pid {first.proc.pid} no "
            f"host {HOST}), 'b' (pid {second.proc.pid} no host {HOST})): um `portgate central run` desta configuração "
            "só parte com uma --instance que nenhum deles tenha"], checked.stderr
        assert first.alive() and second.alive()
        assert second.stop() == 0 and first.stop() == 0
        assert _rows(engine) == []
        checked = run_here(["central", "check-config", cfg])
        assert checked.returncode == 0 and checked.stderr == "", checked.stderr
    finally:
        engine.dispose()


def test_a_sigkilled_office_is_restarted_at_once_under_its_instance(
        tmp_path, broker, pg, notify_socket, start_service):
    """PostgreSQL; the first restart after the killed process was reaped (systemd), the second while
    it is still a zombie (killed, not reaped yet)."""
    upgrade(pg.url)
    cfg = str(central_toml(tmp_path, broker, url=pg.url))
    engine = make_engine(pg.url)
    try:
        svc = start_service(["central", "run", "--config", cfg, "--instance", "a"], notify=notify_socket)
        _ready(notify_socket, svc, 1)
        for n, reap in ((2, True), (3, False)):
            [row] = _rows(engine)
            assert (row.instance, row.pid, row.host) == ("a", svc.proc.pid, HOST) and row.proc_start is not None
            svc.proc.send_signal(signal.SIGKILL)
            if reap:
                svc.proc.wait()
            else:
                os.waitid(os.P_PID, svc.proc.pid, os.WEXITED | os.WNOWAIT)  # dead, not reaped
            dead = svc
            svc = start_service(["central", "run", "--config", cfg, "--instance", "a"], notify=notify_socket)
            assert (dt.datetime.now(dt.UTC) - row.seen_at).total_seconds() < STALE_S  # its heartbeat still counts
            _ready(notify_socket, svc, n)
            assert [(r.instance, r.pid) for r in _rows(engine)] == [("a", svc.proc.pid)]
            [taken] = [x for x in svc.output().splitlines() if "office.instance_taken_over" in x]
            # log_json = true: a JSON line as every other (it was logged before logging was configured)
            assert json.loads(taken)["service"] == "central", taken
            dead.proc.wait()
        assert svc.stop() == 0
    finally:
        engine.dispose()


def test_another_hosts_office_counts_until_its_heartbeat_is_stale(tmp_path, broker, notify_socket, start_service):
    """A row of another host (its process cannot be looked at from here): refused while its heartbeat
    is within ``STALE_S``; a start after that bound takes it over (a SIGKILLed office never blocks
    for longer). The other way round: an office whose row the other host took over (it could not
    write it for ``STALE_S``) stops at its next refresh (exit 0), rather than run beside it."""
    cfg = str(central_toml(tmp_path, broker))
    engine = make_engine(f"sqlite:///{tmp_path / 'ledger.db'}")
    seen = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=5)
    try:
        with engine.begin() as c:
            c.execute(insert(office_processes).values(id="other", kind="central run", home_port="santos",
                                                      instance="a", host="escritorio-2", pid=4242, proc_start=1,
                                                      started_at=seen, seen_at=seen))
        line = _one_line(run_cli(["central", "run", "--config", cfg, "--instance", "a"]))
        assert line.startswith("portgate: another office 'a' of port santos (pid 4242 on host escritorio-2, "), line
        stale = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=STALE_S + 5)
        with engine.begin() as c:
            c.execute(update(office_processes).values(seen_at=stale))
        svc = start_service(["central", "run", "--config", cfg, "--instance", "a"], notify=notify_socket)
        _ready(notify_socket, svc, 1)
        assert [(r.host, r.pid) for r in _rows(engine)] == [(HOST, svc.proc.pid)]
        # the other host took the instance over while this one could not write (its row stale): it stops
        taken = dt.datetime.now(dt.UTC)
        with engine.begin() as c:
            c.execute(office_processes.delete())
            c.execute(insert(office_processes).values(id="other", kind="central run", home_port="santos",
                                                      instance="a", host="escritorio-2", pid=4242, proc_start=1,
                                                      started_at=taken, seen_at=taken))
        wait_until(lambda: not svc.alive(), timeout=180, what="central run stopping")
        assert svc.proc.returncode == 0, svc.output()  # a clean stop: systemd does not restart it
        assert "office.instance_lost" in svc.output() and "escritorio-2" in svc.output(), svc.output()
        assert [(r.host, r.pid) for r in _rows(engine)] == [("escritorio-2", 4242)]
    finally:
        engine.dispose()
