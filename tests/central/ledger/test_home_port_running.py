"""``portgate ledger home-port --set`` while office processes run on the ledger (issue 37 item 4):
``central run`` and ``office serve`` read the home port when they start and would keep the old one,
so each keeps a row in ``office_processes`` while it runs (``central.ledger.liveness``, 0036) and
``--set`` is refused while a row was refreshed within ``STALE_S`` seconds (pt-BR first, exit 2,
nothing written), naming the processes and telling the operator to stop them first; ``--force``
changes it anyway with the processes named in its audit row and a warning. A row no longer refreshed
(a process killed) stops counting. Real SQLite and PostgreSQL; a real ``office serve`` process
(``central run``: tests/ops/test_central_run_ports.py)."""

from __future__ import annotations

import datetime as dt
import os
import signal
import socket
import subprocess
import sys

import pytest
from sqlalchemy import insert, select

from app.demo.mosquitto import free_port
from central.db import make_engine
from central.ledger import liveness
from central.ledger.liveness import Liveness, running
from central.ledger.schema import office_processes
from testkit.wait import wait_until
from tests.central.ledger.test_home_port_command import EN, PT, _cmd, _state, ledger  # noqa: F401 (a fixture)

SET = ("--set", "paranagua", "--move-portless", "--actor", "chefe.silva")


def _process(engine, *, seen_ago_s: float, kind: str = "office serve", pid: int = 4242) -> None:
    seen = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=seen_ago_s)
    with engine.begin() as c:
        c.execute(insert(office_processes).values(id=f"p{pid}", kind=kind, home_port="santos", host="escritorio-1",
                                                  pid=pid, started_at=seen, seen_at=seen))


def test_a_running_office_refuses_the_change_until_forced(ledger):
    _url, santos, _para, engine = ledger
    _process(engine, seen_ago_s=5)
    r = _cmd(santos, *SET)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert ("1 processo(s) do escritório rodam neste livro-razão (office serve em escritorio-1 (pid 4242)) e leram o "
            "porto de origem ao iniciar: continuariam com o antigo. Pare-os primeiro") in r.stderr, r.stderr
    assert "--force muda mesmo assim" in r.stderr
    r = _cmd(santos, *SET, env=EN)
    assert r.returncode == 2 and "1 office process(es) run on this ledger (office serve on escritorio-1 (pid 4242))" \
        in r.stderr, r.stderr
    assert _state(engine) == ([], [])
    forced = _cmd(santos, *SET, "--force")
    assert forced.returncode == 0, forced.stderr
    assert ("aviso: 1 processo(s) do escritório (office serve em escritorio-1 (pid 4242)) continuam com o porto de "
            "origem antigo até serem reiniciados") in forced.stderr, forced.stderr
    assert _state(engine) == (["paranagua"], [("chefe.silva", "*", {
        "changed": {"port": ["", "paranagua"]}, "portless_workers": 2,
        "forced_while_running": ["office serve escritorio-1 pid 4242 (home santos)"]})])


def test_a_process_no_longer_refreshed_does_not_count_and_force_needs_set(ledger):
    _url, santos, _para, engine = ledger
    _process(engine, seen_ago_s=liveness.STALE_S + 30)  # killed: its row stays, not refreshed
    r = _cmd(santos, "--force")
    assert r.returncode == 2 and "--force só vale com --set PORTO" in r.stderr, r.stderr
    done = _cmd(santos, *SET)
    assert done.returncode == 0, done.stderr
    assert "aviso" not in done.stderr
    assert _state(engine)[1][0][2] == {"changed": {"port": ["", "paranagua"]}, "portless_workers": 2}


def test_liveness_keeps_its_row_fresh_and_removes_it_at_its_stop(ledger):
    url, _santos, _para, engine = ledger
    _process(engine, seen_ago_s=liveness.PRUNE_S + 60, pid=1)  # a day-old dead process: pruned at a start
    with Liveness(url, "central run", "santos", refresh_s=0.2) as alive:
        with engine.connect() as c:
            assert list(c.execute(select(office_processes.c.id))) == [(alive.id,)]
            first = c.execute(select(office_processes.c.seen_at)).scalar_one()

        def refreshed():
            with engine.connect() as c:
                return c.execute(select(office_processes.c.seen_at)).scalar_one() > first

        wait_until(refreshed, timeout=120, what="seen_at refreshed")
        with engine.connect() as c:
            (p,) = running(c, dt.datetime.now(dt.UTC))
        assert (p.kind, p.home_port, p.host, p.pid) == ("central run", "santos", socket.gethostname(), os.getpid())
        with engine.begin() as c:  # deleted by hand meanwhile: the next refresh writes it again
            c.execute(office_processes.delete())
        wait_until(lambda: _ids(engine) == [alive.id], timeout=120, what="row written again")
    assert _ids(engine) == []


def _ids(engine) -> list[str]:
    with engine.connect() as c:
        return list(c.execute(select(office_processes.c.id)).scalars())


def test_a_liveness_that_cannot_write_does_not_stop_the_office(tmp_path):
    """A ledger not migrated to 0036 (no table): the office runs, the failure is logged, no row."""
    url = f"sqlite:///{tmp_path / 'old.db'}"
    from central.ledger.migrate import upgrade

    upgrade(url, "0035")
    with Liveness(url, "office serve", "santos", refresh_s=0.1) as alive:
        assert alive.id
    engine = make_engine(url)
    try:
        with pytest.raises(Exception, match="office_processes"), engine.connect() as c:
            c.execute(select(office_processes))
    finally:
        engine.dispose()


def test_a_real_office_serve_is_seen_until_it_stops(ledger, tmp_path):
    _url, santos, _para, engine = ledger
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "office", "serve", "--config", santos,
                             "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        def seen():
            assert proc.poll() is None, proc.stderr.read().decode()
            with engine.connect() as c:
                return [p.pid for p in running(c, dt.datetime.now(dt.UTC))] == [proc.pid]

        wait_until(seen, timeout=120, what="office serve's row")
        r = _cmd(santos, *SET)
        assert r.returncode == 2, (r.stdout, r.stderr)
        assert f"office serve em {socket.gethostname()} (pid {proc.pid})" in r.stderr, r.stderr
        assert _state(engine) == (["santos"], [])  # recorded by office serve's start (need_home), unchanged
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
    said = proc.stderr.read().decode()  # its log, for a row left behind (office.liveness_failed, a signal)
    assert _ids(engine) == [], (proc.returncode, said[-3000:])  # a clean stop deletes its row
    done = _cmd(santos, *SET)
    assert done.returncode == 0, done.stderr
    assert _state(engine)[0] == ["paranagua"]
