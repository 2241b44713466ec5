"""The ledger tier on a real Patroni cluster (issue 37 item 2; testkit/patroni.py: 3 etcd members, 3
PostgreSQL 15 nodes in synchronous mode, strict). The office connects with a multi-host URL
(``target_session_attrs=read-write``) and keeps its ingest going across a failover: the writer
retries the unacknowledged batch until the new primary takes it (central/ingest/writer.py).

The strict check: every event id whose message the office acknowledged to the broker (after its
commit) is on the new primary after the old one was SIGKILLed in the middle of the stream; the run
ends with ``testkit.fault_check.check_fault_run`` (every journal event in the ledger exactly once,
no sequence gap, shifts and pay identical to a fault-free run, ``portgate evidence audit`` exit 0)."""

from __future__ import annotations

import threading
import time
import uuid

import msgspec
import pytest
from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from central.config import CentralConfig, IngestSettings, WebSettings
from central.db import make_engine
from central.ingest.keys import add_gate
from central.ingest.service import Ingest
from central.ingest.worker import IngestWorker
from central.ledger.migrate import upgrade
from central.ledger.schema import dead_letters, events
from central.web.app import create_app
from central.web.users import add_user
from edge.journal import Journal
from edge.sync import Sync
from portgate.config import read_secret
from testkit.fault_check import ReplayLog, check_fault_run, shift_tap, signing_gate
from testkit.full import full_or
from testkit.patroni import HaLedger, find_tools
from testkit.wait import wait_until
from tests.central.web.conftest import PASSWORD, SECRET, logged_in
from wire.connection import MqttConfig

pytestmark = [pytest.mark.postgres, pytest.mark.mqtt]


@pytest.fixture
def ha():
    assert find_tools(), "patroni and etcd are not installed: scripts/setup.sh installs them (as root)"
    cluster = HaLedger().start()
    yield cluster
    cluster.stop()


class AckLog:
    """The event ids of every message the office acknowledged to the broker (an observation of the
    real worker: its ``_take`` notes which message id carried which event, its client's
    ``ack_many`` is what sends the PUBACKs after the writer's commit)."""

    def __init__(self, monkeypatch) -> None:
        self.by_mid: dict[int, str] = {}
        self.acked: set[str] = set()
        self.lock = threading.Lock()
        take = IngestWorker._take
        log = self

        def observed_take(worker, mid, topic, payload, qos):
            if bytes(topic).endswith(b"/events"):
                with log.lock:
                    log.by_mid[mid] = msgspec.json.decode(payload)["event_id"]
            return take(worker, mid, topic, payload, qos)

        monkeypatch.setattr(IngestWorker, "_take", observed_take)

    def watch(self, worker: IngestWorker) -> None:
        send = worker.client.ack_many

        def observed(mids):
            with self.lock:
                self.acked.update(self.by_mid[m] for m in mids if m in self.by_mid)
            return send(mids)

        worker.client.ack_many = observed


def server_port(url: str) -> int:
    """The port of the server a new connection of ``url`` reaches, for a write."""
    engine = make_engine(url)
    try:
        with engine.begin() as c:
            assert not c.execute(text("SELECT pg_is_in_recovery()")).scalar_one()
            return c.execute(text("SELECT inet_server_port()")).scalar_one()
    finally:
        engine.dispose()


def ids_on(url: str) -> set[str]:
    engine = make_engine(url)
    try:
        with engine.connect() as c:
            return set(c.execute(select(events.c.event_id)).scalars())
    finally:
        engine.dispose()


def test_a_primary_sigkilled_mid_stream_loses_no_acknowledged_event(tmp_path, ha, broker, monkeypatch):
    """A gate (its own journal and sync code) publishes a stream of taps to mosquitto; the office's
    ingest commits them to the Patroni cluster through the multi-host URL, and the office web
    application serves pages from it; the primary is SIGKILLed in the middle of the stream.
    - The URL reached the leader before, and reaches the promoted standby after (writes accepted).
    - The web application answers 503 "reconnecting" (pt-BR) while the ledger fails over, never 500,
      and serves the page again afterwards without a restart.
    - Every id the office acknowledged is on the new primary (no acknowledged commit lost:
      synchronous mode, strict), and every journal event is in the ledger exactly once, no gap."""
    acks = AckLog(monkeypatch)
    keys = tmp_path / "keys"
    keys.mkdir()
    add_gate(keys, "g1")
    upgrade(ha.url)
    killed = ha.primary()
    assert server_port(ha.url) == ha.port_of(killed)
    web_engine = make_engine(ha.url)
    with Session(web_engine) as s, s.begin():
        add_user(s, "clerk", role="office", password=PASSWORD, name="Clerk", actor="test")
    web = create_app(web_engine, WebSettings(), SECRET, background=False)
    client, _ = logged_in(web, "clerk")
    assert client.get("/workers").status_code == 200
    config = CentralConfig(
        database_url=ha.url, port="santos", keys_dir=str(keys),
        mqtt=MqttConfig(host=broker.host, port=broker.port, client_id="ledger-santos"),
        ingest=IngestSettings(batch_size=20, gap_grace_s=0.5, replay_every_s=1.0, tail_grace_s=1.0,
                              writer="thread"))
    ingest = Ingest(config, create_tables=False).start()
    for w in ingest.workers:
        acks.watch(w)
    assert ingest.wait_connected(90)
    j = Journal(tmp_path / "g1.journal.db", port="santos", gate_id="g1", key=read_secret(keys / "g1.key"),
                boot_id=str(uuid.uuid4()), signer=signing_gate(keys, tmp_path / "g1", "g1"))
    replays = ReplayLog()
    replays.watch(j)
    sync = Sync(MqttConfig(host=broker.host, port=broker.port, reconnect_min_s=0.2, reconnect_max_s=1),
                j, port="santos", gate_id="g1").start()
    n = full_or(300, 3000)
    statuses: list[int] = []
    stopped = False
    try:
        for i in range(n):
            payload, at = shift_tap(0, i)  # entry and exit taps of registered workers
            j.append(payload, now=at)
            sync.notify()
            if i == n // 3:
                wait_until(lambda: len(acks.acked) >= 20, timeout=30, what="first acknowledged events")
                before = set(acks.acked)
                ha.kill(killed)  # in the middle of the stream: batches are being committed

                def refused():  # a backend of the killed postmaster may still answer a moment
                    page = client.get("/workers")
                    statuses.append(page.status_code)
                    return page if page.status_code == 503 else None

                try:
                    page = wait_until(refused, timeout=30, interval=0.2, what="the page answering 503")
                except AssertionError as exc:
                    raise AssertionError(f"{exc} with the primary gone: statuses {statuses}") from None
                assert "indisponível agora (troca de servidor)" in page.text, page.text[:300]
                assert page.headers["Retry-After"] == "5"
            time.sleep(0.01)
        wait_until(lambda: ha.primary() not in (None, killed), timeout=60, what="a new leader elected")
        new = ha.primary()

        def page_back():
            statuses.append(client.get("/workers").status_code)
            return statuses[-1] == 200

        wait_until(page_back, timeout=60, interval=0.5, what="the office page served again")
        assert set(statuses) <= {200, 503}, statuses  # reconnecting, never a 500
        assert server_port(ha.url) == ha.port_of(new) != ha.port_of(killed)
        wait_until(lambda: len(ids_on(ha.node_url(new))) >= n, timeout=120,
                   what=f"{n} events on the new primary")
        wait_until(lambda: j.outbox_depth() == 0, timeout=30, what="the gate's outbox drained")
        on_new = ids_on(ha.node_url(new))
        assert before <= on_new, f"acknowledged before the kill but lost: {len(before - on_new)}"
        assert acks.acked <= on_new, f"acknowledged but lost: {len(acks.acked - on_new)}"
        engine = make_engine(ha.node_url(new))
        with engine.connect() as c:
            seqs = sorted(c.execute(select(events.c.seq).where(events.c.gate_id == "g1")).scalars())
            dead = c.execute(select(func.count()).select_from(dead_letters)).scalar_one()
        engine.dispose()
        assert seqs == list(range(1, n + 1)) and dead == 0  # exactly once, no gap
        print(f"acknowledged before the kill: {len(before)}; in all: {len(acks.acked)}; "
              f"commit retries: {sum(w.stats['commit_retries'] for w in ingest.workers)}")
        assert sum(w.stats["commit_retries"] for w in ingest.workers) >= 1  # the failover was met mid-stream
        sync.stop()
        ingest.stop()
        stopped = True
        done = check_fault_run(ha.node_url(new), [j.path], keys, tmp_path / "check", replays=replays)
        print(f"PostgreSQL primary killed mid-batch: {done.line()}")
    finally:
        if not stopped:
            sync.stop()
            ingest.stop()
        client.close()
        web_engine.dispose()
