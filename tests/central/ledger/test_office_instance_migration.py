"""Migration 0037 (``office_processes.instance`` and ``proc_start``) on SQLite and PostgreSQL: the
rows of a 0036 ledger (offices running while it is upgraded) become the default instance with no
start time, and a live one of them still blocks a ``central run`` of its port without ``--instance``
(its pid on another host, within the heartbeat bound) but not one with an ``--instance``; the
downgrade takes the columns away and keeps the rows."""

from __future__ import annotations

import datetime as dt

import pytest
from alembic import command
from sqlalchemy import inspect, text

from central.db import make_engine
from central.ledger.instance_claim import OfficeRunning, live_instances
from central.ledger.liveness import STALE_S, Liveness
from central.ledger.migrate import alembic_config, upgrade


def _rows(engine) -> list:
    with engine.connect() as c:
        return c.execute(text("SELECT id, kind, home_port, instance, proc_start FROM office_processes "
                              "ORDER BY id")).all()


def test_rows_of_0036_become_the_default_instance_and_still_block_it(db_url):
    upgrade(db_url, "0036")
    engine = make_engine(db_url)
    seen = dt.datetime.now(dt.UTC)
    try:
        with engine.begin() as c:
            for rid, kind in (("p1", "central run"), ("p2", "office serve")):
                c.execute(text("INSERT INTO office_processes (id, kind, home_port, host, pid, started_at, seen_at) "
                               "VALUES (:id, :kind, 'santos', 'escritorio-2', 4242, :t, :t)"),
                          {"id": rid, "kind": kind, "t": seen})
        assert live_instances(db_url, "santos", now=seen, stale_s=STALE_S) == []  # check-config: no column yet
        assert upgrade(db_url, "0037") == "0037"
        assert [(h.id, h.instance, h.pid) for h in live_instances(db_url, "santos", now=seen, stale_s=STALE_S)] == [
            ("p1", "", 4242)]  # the office serve row claims nothing
        assert _rows(engine) == [("p1", "central run", "santos", "", None), ("p2", "office serve", "santos", "", None)]
        with pytest.raises(OfficeRunning, match="another office without --instance of port santos \\(pid 4242 on "
                                                "host escritorio-2"):
            Liveness(db_url, "central run", "santos", refresh_s=3600).__enter__()
        with Liveness(db_url, "central run", "santos", instance="a", refresh_s=3600) as me:
            assert [r.id for r in _rows(engine)] == sorted(["p1", "p2", me.id])
        command.downgrade(alembic_config(db_url), "0036")
        columns = {col["name"] for col in inspect(engine).get_columns("office_processes")}
        assert "instance" not in columns and "proc_start" not in columns and "pid" in columns
        with engine.connect() as c:
            assert c.execute(text("SELECT id FROM office_processes ORDER BY id")).scalars().all() == ["p1", "p2"]
        assert upgrade(db_url, "0037") == "0037"
        assert [r.instance for r in _rows(engine)] == ["", ""]
    finally:
        engine.dispose()
