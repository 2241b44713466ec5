"""The ledger writer of an ingest worker (central/ingest/writer.py, link.py): in its own process by
default, or in a thread; killed, blocked by a locked database, stopped while blocked."""

from __future__ import annotations

import os
import signal
import sqlite3
import time

import msgspec
import pytest
from sqlalchemy import select

from central.config import CentralConfig, IngestSettings
from central.ingest.service import Ingest
from central.ledger.schema import gate_progress
from portgate.errors import ConfigError
from tests.central.ingest.conftest import PORT, now, process_alive
from testkit.wait import wait_until
from tests.central.ingest.payloads import tap

pytestmark = pytest.mark.mqtt


def test_the_writer_runs_in_its_own_process_by_default(broker, office, make_gate):
    ingest = office.start(broker)
    link = ingest.workers[0].link
    assert link.pid is not None and link.pid != os.getpid() and process_alive(link.pid)
    gate = make_gate("g1")
    for i in range(20):
        gate.journal.append(tap(i), now=now())
    gate.start(broker)
    wait_until(lambda: len(office.events("g1")) == 20, what="committed by the writer process")
    # the writer reports after its commit: the count follows the rows by a moment
    wait_until(lambda: ingest.workers[0].stats["inserted"] == 20, what="the commit reported to the worker")
    pid = link.pid
    office.stop_all()
    wait_until(lambda: not process_alive(pid), timeout=60, what="writer process ended with its worker")
    assert link._proc.exitcode == 0, "a clean stop lets the writer finish; it is not killed"


def test_a_killed_writer_process_is_restarted_and_every_event_lands_once(broker, office, make_gate):
    ingest = office.start(broker, batch_size=50)
    worker = ingest.workers[0]
    gate = make_gate("g1")
    gate.journal.append_many([tap(i) for i in range(3000)], now=now())
    gate.start(broker, window=200, rate=0)
    wait_until(lambda: len(office.events("g1")) > 0, what="ingest under way")
    first = worker.link.pid
    os.kill(first, signal.SIGKILL)
    wait_until(lambda: worker.link.restarts >= 1, what="writer restarted")
    assert worker.link.pid != first
    wait_until(lambda: len(office.events("g1")) == 3000, timeout=60, what="all events committed")
    rows = office.events("g1")
    assert sorted(r.seq for r in rows) == list(range(1, 3001))
    assert len({r.event_id for r in rows}) == 3000
    assert worker.alive()
    wait_until(lambda: office.contiguous("g1") == 3000, what="progress complete")


def test_a_thread_writer_gives_the_same_ledger(broker, office, make_gate):
    ingest = office.start(broker, writer="thread")
    assert ingest.workers[0].link.__class__.__name__ == "WriterThread"
    gate = make_gate("g1")
    for i in range(30):
        gate.journal.append(tap(i), now=now())
    gate.start(broker)
    wait_until(lambda: len(office.events("g1")) == 30, what="committed by the writer thread")
    assert sorted(r.seq for r in office.events("g1")) == list(range(1, 31))
    wait_until(lambda: ingest.workers[0].stats["inserted"] == 30, what="the commit reported to the worker")


def test_an_in_memory_ledger_is_refused_whatever_the_writer(broker, keys_dir):
    """Each connection to ``sqlite://`` is its own empty database: neither a writer process nor a
    writer thread would see the tables (found by a tester: the thread writer failed every commit)."""
    for writer in ("process", "thread"):
        config = CentralConfig(database_url="sqlite://", port=PORT, keys_dir=str(keys_dir),
                               ingest=IngestSettings(writer=writer))
        with pytest.raises(ConfigError) as err:
            Ingest(config)
        assert err.value.key == "database_url"


def _lock(path) -> sqlite3.Connection:
    """Hold SQLite's write lock from another connection (a real fault: another writer, a backup)."""
    conn = sqlite3.connect(path, isolation_level=None, timeout=5)
    conn.execute("BEGIN EXCLUSIVE")
    return conn


@pytest.mark.parametrize("writer", ["process", "thread"])
def test_a_locked_database_delays_the_commit_but_loses_nothing(tmp_path, broker, office, make_gate, writer):
    ingest = office.start(broker, writer=writer)
    gate = make_gate("g1")
    gate.start(broker)
    blocker = _lock(tmp_path / "ledger.db")
    try:
        for i in range(40):
            gate.journal.append(tap(i), now=now())
        gate.sync.notify()
        wait_until(lambda: ingest.workers[0].stats["commit_retries"] >= 1, timeout=30,
                   what="the commit failed on the lock and is being retried")
        assert gate.journal.outbox_depth() == 0  # the broker has them; the ledger does not yet
    finally:
        blocker.rollback()
        blocker.close()
    wait_until(lambda: len(office.events("g1")) == 40, timeout=60, what="committed once the lock was released")
    assert sorted(r.seq for r in office.events("g1")) == list(range(1, 41))


def test_stopping_while_the_database_is_locked_acknowledges_nothing(tmp_path, broker, office, make_gate):
    ingest = office.start(broker)
    gate = make_gate("g1")
    gate.start(broker)
    blocker = _lock(tmp_path / "ledger.db")
    try:
        for i in range(25):
            gate.journal.append(tap(i), now=now())
        gate.sync.notify()
        wait_until(lambda: ingest.workers[0].stats["commit_retries"] >= 1, timeout=30, what="commit blocked")
        pid = ingest.workers[0].link.pid
        for running in office.running:
            for w in running.workers:
                w.stop(timeout=2.0)  # the writer cannot finish: it is killed, nothing acknowledged
        office.running.clear()
        wait_until(lambda: not process_alive(pid), timeout=60, what="blocked writer ended")
    finally:
        blocker.rollback()
        blocker.close()
    assert office.events("g1") == []
    office.start(broker)  # same client id: the broker redelivers the 25 unacknowledged messages
    wait_until(lambda: len(office.events("g1")) == 25, timeout=30, what="redelivered after restart")
    with office.engine.connect() as c:
        assert c.execute(select(gate_progress.c.contiguous_seq)).scalar() == 25
    time.sleep(0.5)
    assert len(office.events("g1")) == 25


def test_an_event_the_database_refuses_becomes_a_dead_letter_and_the_batch_still_lands(tmp_path, broker, keys_dir,
                                                                                       pg_cluster):
    """PostgreSQL refuses a NUL character in text (a key holder's event that the JSON schema allows):
    retrying the batch would meet it again forever, so the batch goes in one event at a time and
    that event alone becomes a dead letter with its raw bytes."""
    from tests.central.ingest.conftest import Gate, Office
    from tests.central.ingest.test_rejects import forged, publish, raw_client
    from wire import topics
    from wire.events import encode, sign

    office = Office(tmp_path, keys_dir, url=pg_cluster.create_database("refuse"))
    try:
        ingest = office.start(broker, batch_time_s=0.5)
        gate = Gate(tmp_path, keys_dir, "g1")
        poison = sign(msgspec.structs.replace(forged("g1", gate.key, seq=3),
                                              payload=tap(3, registration="10\u000003")), gate.key)
        c = raw_client(broker)
        t1 = topics.gate_events(PORT, "g1")
        for seq in range(1, 7):
            event = poison if seq == 3 else forged("g1", gate.key, seq=seq)
            publish(c, t1, encode(event))
        wait_until(lambda: len(office.dead()) == 1, timeout=30, what="the refused event dead-lettered")
        assert office.dead()[0].reason.startswith("unstorable: ")
        wait_until(lambda: len(office.events("g1")) == 5, what="the other five stored")
        assert sorted(r.seq for r in office.events("g1")) == [1, 2, 4, 5, 6]
        assert ingest.workers[0].link.restarts == 0 and ingest.workers[0].alive()
        c.loop_stop()
    finally:
        office.stop_all()
        office.engine.dispose()


def test_a_snapshot_request_that_fails_in_an_unexpected_way_does_not_stop_the_ingest(tmp_path, broker, office,
                                                                                     make_gate):
    """Found by a tester: a CSV path that became a directory raised IsADirectoryError on the
    requests thread, which died; its unacknowledged requests then filled the session's receive
    window and no event came in any more, while the watchdog still saw a live worker."""
    import datetime as dt

    from central.config import PublishSettings
    from tests.central.ingest.test_rejects import publish, raw_client
    from wire import downlink as dl
    from wire import topics

    (tmp_path / "cards.csv").mkdir()
    config = office.config(broker, batch_size=3)
    config = msgspec.structs.replace(config, publish=PublishSettings(cards_csv=str(tmp_path / "cards.csv")))
    ingest = Ingest(config, engine=office.engine).start()
    office.running.append(ingest)
    assert ingest.wait_connected()
    c = raw_client(broker)
    for _ in range(15):  # more than the receive window (3 * batch_size)
        request = dl.SnapshotRequest(gate_id="g1", kind="cards", have_version=None, at=dt.datetime.now(dt.UTC))
        publish(c, topics.gate_requests(PORT, "g1"), dl.encode(request))
    gate = make_gate("g1")
    for i in range(20):
        gate.journal.append(tap(i), now=now())
    gate.start(broker)
    wait_until(lambda: len(office.events("g1")) == 20, what="events still ingested after the failed requests")
    assert ingest.workers[0].alive()
    c.loop_stop()


def test_batch_size_and_workers_below_one_are_refused(tmp_path):
    from portgate.config import load_toml

    for body in ("workers = 0\n", "[ingest]\nbatch_size = 0\n"):
        path = tmp_path / "central.toml"
        path.write_text(f'database_url = "sqlite:///x.db"\nport = "s"\nkeys_dir = "k"\n{body}')
        with pytest.raises(ConfigError) as err:
            load_toml(path, CentralConfig)
        assert "workers" in str(err.value) or "batch_size" in str(err.value)


@pytest.mark.parametrize("body, key", [
    ("batch_time_s = inf", "batch_time_s"),  # killed the flusher (a wait that long overflows)
    ("batch_time_s = 1e-6", "batch_time_s"),  # a busy loop
    ("gap_grace_s = -1.0", "gap_grace_s"),
    ("replay_every_s = nan", "replay_every_s"),
    ('share_group = "a/b"', "share_group"),  # run refused it; check-config said ok
])
def test_check_config_refuses_ingest_settings_that_run_cannot_use(tmp_path, body, key):
    from app.checkconfig import check_central

    keys = tmp_path / "keys"
    keys.mkdir()
    path = tmp_path / "central.toml"
    path.write_text(f'database_url = "sqlite:///{tmp_path / "x.db"}"\nport = "s"\nkeys_dir = "{keys}"\n'
                    f"[ingest]\n{body}\n")
    with pytest.raises(ConfigError) as err:
        check_central(path)
    assert key in str(err.value)


def test_an_unreadable_gate_key_dead_letters_that_gate_and_the_others_go_on(broker, office, make_gate, keys_dir):
    """A key file that cannot be read (here a directory in its place; in production a file the
    service user may not read) used to end the writer process again and again, silently: the
    ledger stopped for every gate. Now that gate's events are dead letters saying why."""
    from tests.central.ingest.test_rejects import forged, publish, raw_client
    from wire import topics
    from wire.events import encode

    ingest = office.start(broker)
    g1 = make_gate("g1")
    (keys_dir / "g2.key").mkdir(mode=0o700)  # passes the mode check, then cannot be read
    c = raw_client(broker)
    publish(c, topics.gate_events(PORT, "g2"), encode(forged("g2", b"k" * 32, seq=1)))
    for i in range(10):
        g1.journal.append(tap(i), now=now())
    g1.start(broker)
    wait_until(lambda: len(office.events("g1")) == 10, what="g1 still ingested")
    wait_until(lambda: len(office.dead()) == 1, what="g2's event dead-lettered")
    assert "key of gate g2 unreadable" in office.dead()[0].reason
    assert ingest.workers[0].link.restarts == 0 and ingest.workers[0].alive()
    c.loop_stop()


def test_an_unreachable_database_server_at_start_exits_1_so_systemd_retries(tmp_path, broker, keys_dir):
    import subprocess
    import sys

    from testkit.postgres import free_port

    path = tmp_path / "central.toml"
    path.write_text(f'database_url = "postgresql+psycopg://portgate@127.0.0.1:{free_port()}/ledger"\n'
                    f'port = "{PORT}"\nkeys_dir = "{keys_dir}"\n[mqtt]\nhost = "{broker.host}"\nport = {broker.port}\n')
    run = subprocess.run([sys.executable, "-m", "app.cli", "central", "run", "--config", str(path)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 1, run.stderr
    lines = [line for line in run.stderr.splitlines() if line.startswith("portgate:")]
    assert len(lines) == 1 and "not reachable" in lines[0]
