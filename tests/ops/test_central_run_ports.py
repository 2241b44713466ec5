"""``portgate central run`` on a ledger shared by several ports (issue 37 item 4,
``central.ledger.home``): one office process per port, each on its own one-port central.toml, is
the deployment of several ports (the cluster demo's), so santos's one-port config starts its
ingest on a ledger that also holds rio, every worker with his port; once workers without a port
are in the ledger and rio is its recorded home port, santos's config would publish them as
santos's roster: the ingest does not start (exit 2, one line). The real service (READY through
sd_notify) on a real mosquitto and SQLite."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import insert

from central.db import make_engine
from central.ingest.event_store import update_progress, write_batch
from central.registry.schema import workers
from tests.central.web.test_ports_web import RIO, _tap
from tests.ops.conftest import run_cli, run_here
from tests.ops.test_central_service import central_toml
from testkit.wait import wait_until

AT = dt.datetime(2026, 3, 10, 12, tzinfo=dt.UTC)


def _worker(conn, reg: str, port: str | None) -> None:
    conn.execute(insert(workers).values(
        registration=reg, name=f"Vigia {reg}", category="vigia", status="active", rotation_number=1,
        health_exam_date=dt.date(2026, 1, 5), booklet_revalidated_year=2026, updated_at=AT, port=port))


def test_a_one_port_office_runs_on_a_shared_ledger_unless_it_is_not_the_home_port(
        tmp_path, broker, notify_socket, start_service):
    cfg = central_toml(tmp_path, broker)  # santos alone, its ledger made by `ledger migrate`
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            _worker(conn, "S001", "santos")
            _worker(conn, "R001", "rio")
            write_batch(conn, [_tap("rio", RIO, 1, AT - dt.timedelta(days=5), [])], [], AT)
            update_progress(conn, [RIO["gate"]], AT)
        svc = start_service(["central", "run", "--config", str(cfg)], notify=notify_socket)
        wait_until(lambda: notify_socket.seen("READY=1") or not svc.alive(), timeout=90, what="READY=1")
        assert svc.alive(), svc.output()
        assert svc.stop() == 0
        with engine.begin() as conn:
            _worker(conn, "X001", None)
    finally:
        engine.dispose()
    rio = tmp_path / "rio.toml"
    rio.write_text(f'database_url = "{url}"\nport = "rio"\nports = ["rio", "santos"]\n'
                   f'keys_dir = "{tmp_path / "keys"}"\n')
    recorded = run_here(["registry", "exam", "X001", "--date", "2026-03-01", "--config", str(rio)])
    assert recorded.returncode == 0, recorded.stderr  # rio's office of both ports records rio as home
    refused = run_cli(["central", "run", "--config", str(cfg)])  # the suite's PORTGATE_LANG=en
    assert refused.returncode == 2, refused
    assert refused.stderr.strip().splitlines() == [
        "portgate: --config: the ledger's workers without a port are rio's (its home port), not santos's: give "
        "them their port (registry import --port) or use a central.toml whose port is rio"], refused.stderr


def test_home_port_set_is_refused_while_central_run_runs_on_the_ledger(tmp_path, broker, notify_socket, start_service):
    """``central run`` keeps its row in ``office_processes`` while it runs (``central.ledger.liveness``):
    ``ledger home-port --set`` is refused meanwhile (it would keep the old home port); its clean stop
    deletes the row and the same command then records the port."""
    from sqlalchemy import select

    from central.ledger.schema import ledger_home, office_processes

    cfg = central_toml(tmp_path, broker)
    engine = make_engine(f"sqlite:///{tmp_path / 'ledger.db'}")
    try:
        svc = start_service(["central", "run", "--config", str(cfg)], notify=notify_socket)
        wait_until(lambda: notify_socket.seen("READY=1") or not svc.alive(), timeout=90, what="READY=1")
        assert svc.alive(), svc.output()

        def kinds():
            with engine.connect() as c:
                return list(c.execute(select(office_processes.c.kind)).scalars())

        assert kinds() == ["central run"]  # written before READY
        refused = run_here(["ledger", "home-port", "--config", str(cfg), "--set", "santos", "--actor", "ops"])
        assert refused.returncode == 2, refused
        assert "1 office process(es) run on this ledger (central run on " in refused.stderr, refused.stderr
        assert svc.stop() == 0
        assert kinds() == []
        done = run_here(["ledger", "home-port", "--config", str(cfg), "--set", "santos", "--actor", "ops"])
        assert done.returncode == 0, done.stderr
        with engine.connect() as c:
            assert list(c.execute(select(ledger_home.c.port)).scalars()) == ["santos"]
    finally:
        engine.dispose()
