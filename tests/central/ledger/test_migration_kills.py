"""An office SIGKILLed at random points of its first ledger migration on a new SQLite file always
migrates on the next start (one transaction per upgrade, DDL and ``alembic_version`` row together)
and then ingests every event; the schema it ends with is the one a clean run makes."""

from __future__ import annotations

import datetime as dt
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import func, select

from central.db import make_engine
from central.ingest.event_store import Accepted, write_batch
from central.ledger.migrate import head
from central.ledger.schema import events
from testkit.cli import run_here
from testkit.full import full_or
from wire import topics
from wire.events import Event, TapPayload, encode, new_event_id

PORTGATE = [sys.executable, "-m", "app.cli"]
# 8 kills inside the migration in the suite (each a killed `ledger migrate` process and a restart in
# process), 100 with PORTGATE_FULL=1 (testkit/full.py); PORTGATE_KILL_TRIALS=N for any other number
TRIALS = int(os.environ.get("PORTGATE_KILL_TRIALS", full_or(8, 100)))
AT = dt.datetime(2026, 11, 30, 7, 0, tzinfo=dt.UTC)


def _migrate(path: Path) -> subprocess.Popen:
    return subprocess.Popen([*PORTGATE, "ledger", "migrate", "--db", f"sqlite:///{path}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _schema(path: Path) -> list[tuple[str, str, str]]:
    con = sqlite3.connect(path)
    try:
        return sorted(con.execute("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"))
    finally:
        con.close()


def _ingest(path: Path, n: int) -> int:
    batch = []
    for seq in range(1, n + 1):
        event = Event(event_id=new_event_id(), port="santos", gate_id="g1", boot_id="b-1", seq=seq,
                      occurred_at=AT + dt.timedelta(seconds=seq), clock_trusted=True, mono_ns=seq,
                      payload=TapPayload(uid="04A1B2C3", reader_id="r1", reader_kind="control",
                                         decision="admit", registration="1001"),
                      mac=f"{seq:064x}")
        batch.append(Accepted(topics.gate_events("santos", "g1"), event, encode(event)))
    engine = make_engine(f"sqlite:///{path}")
    try:
        with engine.begin() as conn:
            write_batch(conn, batch, [], AT)
        with engine.connect() as conn:
            return conn.execute(select(func.count()).select_from(events)).scalar()
    finally:
        engine.dispose()


def _run_to_end(path: Path) -> float:
    """Run a migration to its end; return the seconds from the file's creation to the exit."""
    proc = _migrate(path)
    while not path.exists() and proc.poll() is None:
        time.sleep(0.001)
    born = time.monotonic()
    out, err = proc.communicate()
    assert proc.returncode == 0, err
    assert out.strip() == f"at revision {head()}"
    return time.monotonic() - born


def _restart_here(path: Path) -> None:
    """The next start's migration to its end, through ``app.cli.main`` in this process
    (``testkit.cli.run_here``): the kill needs a real process, the restart only the command's code
    on the file the kill left (a new connection rolls a hot journal back as a new process does)."""
    done = run_here(["ledger", "migrate", "--db", f"sqlite:///{path}"])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"at revision {head()}"


@pytest.mark.slow
def test_first_migration_killed_at_random_points_always_restarts(tmp_path):
    reference = tmp_path / "reference.db"
    span = _run_to_end(reference)
    want = _schema(reference)
    rng = random.Random(int.from_bytes(os.urandom(4)))
    killed_mid_migration = 0
    # TRIALS kills inside the migration: a migration done before its kill (the reference's span
    # measured at another load) is played again, up to 3 * TRIALS starts
    for trial in range(3 * TRIALS):
        if killed_mid_migration >= TRIALS:
            break
        path = tmp_path / f"office-{trial}.db"
        proc = _migrate(path)
        while not path.exists() and proc.poll() is None:
            time.sleep(0.0005)
        time.sleep(rng.uniform(0, span))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            killed_mid_migration += path.exists()
        proc.communicate()
        _restart_here(path)
        assert _schema(path) == want, f"trial {trial}: schema differs from a clean migration"
        assert _ingest(path, 5) == 5
    assert killed_mid_migration >= TRIALS // 2, "too few kills landed inside the migration"
