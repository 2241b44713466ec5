"""The JetStream ingest fetches one batch ahead while the writer commits the batch in hand
(central/ingest/jetstream.py ``_consume``), on a real 3-node NATS cluster: the next batch is
delivered during the commit, never more than one, nothing is acknowledged before its own commit,
and on stop the batch fetched ahead is handed back (``nak``) so another office process gets it at
once instead of after ``ack_wait_s``.

The writer's commit is held on an event (a slow ledger commit, which a real database does not
produce on demand); everything else is the real ingest, cluster and ledger."""

from __future__ import annotations

import asyncio
import datetime as dt
import threading
import time
import uuid

import nats
from nats.js.api import StorageType, StreamConfig
import pytest
from sqlalchemy import func, select

from central.config import CentralConfig, IngestSettings, NatsSettings
from central.db import make_engine
from central.ingest.jetstream import JetStreamIngest, port_subjects
from central.ingest.keys import add_gate
from central.ledger.migrate import upgrade
from central.ledger.schema import events
from edge.journal import Journal
from edge.rules.model import Now
from portgate.config import read_secret
from testkit.nats import find_exe, start_cluster
from testkit.wait import wait_until
from wire.connection import MqttConfig
from wire.events import TapPayload

pytestmark = [pytest.mark.nats]

BATCH = 50
EVENTS = 3 * BATCH
ACK_WAIT_S = 120.0  # far beyond every wait below: a message seen again came back by a nak, not by ack_wait


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    assert find_exe(), "nats-server is not installed: scripts/setup.sh installs it (as root)"
    c = start_cluster(tmp_path_factory.mktemp("nats"))
    yield c
    c.stop()


def config(tmp_path, cluster, stream: str, port: str) -> CentralConfig:
    """Each test its own port (one cluster for the module; two streams may not capture one subject)."""
    return CentralConfig(
        database_url=f"sqlite:///{tmp_path / 'ledger.db'}", port=port, keys_dir=str(tmp_path / "keys"),
        mqtt=MqttConfig(protocol="3.1.1", hosts=[f"{h}:{p}" for h, p in cluster.mqtt_hosts],
                        client_id=f"ledger-{port}"),
        ingest=IngestSettings(batch_size=BATCH, writer="thread"),
        nats=NatsSettings(servers=cluster.nats_urls, stream=stream, durable=f"{stream}-ledger",
                          ack_wait_s=ACK_WAIT_S, fetch_wait_s=0.2, max_ack_pending=BATCH))


def signed_events(tmp_path, port: str, n: int) -> list[bytes]:
    keys = tmp_path / "keys"
    keys.mkdir()
    add_gate(keys, "g1")
    j = Journal(tmp_path / "g1.journal.db", port=port, gate_id="g1", key=read_secret(keys / "g1.key"),
                boot_id=str(uuid.uuid4()))
    now = Now(wall=dt.datetime.now(dt.UTC), mono_ns=time.monotonic_ns(), clock_trusted=True)
    j.append_many([TapPayload(uid=f"F1{i:06X}", reader_id="r-control", reader_kind="control", decision="deny",
                              rules_failed=["G1"], message="Cartão desconhecido") for i in range(n)], now=now)
    return [body for _seq, body in j.outbox_wire(n)]


def publish(cluster, cfg: CentralConfig, bodies: list[bytes]) -> None:
    """Into the port's stream, made here as the ingest makes it (which then uses it as it is), each
    stored before the next (JetStream's ack): all there before the ingest's first fetch."""
    async def run():
        nc = await nats.connect(servers=cluster.nats_urls)
        try:
            js = nc.jetstream(timeout=60)
            await js.add_stream(StreamConfig(name=f"{cfg.nats.stream}_{cfg.port}", subjects=port_subjects(cfg.port),
                                             num_replicas=3, storage=StorageType.FILE))
            for body in bodies:
                await js.publish(f"portgate.v1.{cfg.port}.gate.g1.events", body)
        finally:
            await nc.close()

    asyncio.run(run())


def consumer(cluster, cfg: CentralConfig):
    async def ask():
        nc = await nats.connect(servers=cluster.nats_urls)
        try:
            return await nc.jetstream(timeout=60).consumer_info(f"{cfg.nats.stream}_{cfg.port}", cfg.nats.durable)
        finally:
            await nc.close()

    return asyncio.run(ask())


def ledger_count(engine) -> int:
    with engine.connect() as c:
        return c.execute(select(func.count()).select_from(events)).scalar_one()


def held(ingest: JetStreamIngest) -> tuple[threading.Event, threading.Event]:
    """Hold every commit of ``ingest``'s writer until ``release`` is set; ``entered`` is set when a
    batch reached the writer."""
    entered, release = threading.Event(), threading.Event()
    process = ingest._writer.process

    def slow_commit(batch_id, items, *args, **kw):
        entered.set()
        assert release.wait(120), "the test never released the commit"
        return process(batch_id, items, *args, **kw)

    ingest._writer.process = slow_commit
    return entered, release


def test_the_next_batch_is_fetched_while_one_commits_and_acked_only_after_its_commit(tmp_path, cluster):
    cfg = config(tmp_path, cluster, "AHEAD", "santos")
    bodies = signed_events(tmp_path, cfg.port, EVENTS)
    upgrade(cfg.database_url)
    engine = make_engine(cfg.database_url)
    ingest = JetStreamIngest(cfg, create_tables=False)
    entered, release = held(ingest)
    publish(cluster, cfg, bodies)
    ingest.start()
    try:
        assert ingest.wait_connected(60)
        assert entered.wait(60), "no batch reached the writer"
        # the first batch is being committed; the second has been delivered to this process meanwhile
        # (max_ack_pending was raised to two batches for it), the third has not
        info = wait_until(lambda: (i := consumer(cluster, cfg)).num_ack_pending == 2 * BATCH and i,
                          timeout=60, what=f"{2 * BATCH} messages delivered and unacknowledged during the commit")
        assert info.num_pending == EVENTS - 2 * BATCH, "more than one batch fetched ahead"
        assert info.config.max_ack_pending >= 2 * BATCH
        assert ledger_count(engine) == 0 and ingest.stats["acked"] == 0, "acknowledged before the commit"
        release.set()
        wait_until(lambda: ledger_count(engine) == EVENTS, timeout=60, what=f"{EVENTS} events in the ledger")
        info = wait_until(lambda: (i := consumer(cluster, cfg)).num_ack_pending == 0 and i, timeout=60,
                          what="every message acknowledged")
        assert info.delivered.consumer_seq == EVENTS, "a message was delivered twice"
        assert ingest.stats["inserted"] == EVENTS and ingest.stats["duplicates"] == 0
    finally:
        release.set()
        ingest.stop()
        engine.dispose()


def test_a_committed_batch_is_acked_before_the_next_commit_ends(tmp_path, cluster):
    """A committed batch's acks do not wait for the next batch's commit (nor come before their
    own): with every commit held one at a time, batch 1 is acknowledged (and only it) while batch 2
    sits in the writer, batch 3 fetched ahead (two batches unacknowledged, the consumer's limit)."""
    cfg = config(tmp_path, cluster, "OVERLAP", "paranagua")
    bodies = signed_events(tmp_path, cfg.port, EVENTS)
    upgrade(cfg.database_url)
    engine = make_engine(cfg.database_url)
    ingest = JetStreamIngest(cfg, create_tables=False)
    entered, turns = threading.Semaphore(0), threading.Semaphore(0)
    process = ingest._writer.process

    def one_at_a_time(batch_id, items, *args, **kw):
        entered.release()
        assert turns.acquire(timeout=120), "the test never let this commit through"
        return process(batch_id, items, *args, **kw)

    ingest._writer.process = one_at_a_time
    publish(cluster, cfg, bodies)
    ingest.start()
    try:
        assert ingest.wait_connected(60)
        assert entered.acquire(timeout=60), "batch 1 never reached the writer"
        assert ingest.stats["acked"] == 0 and ledger_count(engine) == 0  # nothing before its commit
        turns.release()  # batch 1 commits
        assert entered.acquire(timeout=60), "batch 2 never reached the writer"
        wait_until(lambda: ingest.stats["acked"] == BATCH, timeout=60, what="batch 1 acknowledged during batch 2's commit")
        info = wait_until(lambda: (i := consumer(cluster, cfg)).num_ack_pending == 2 * BATCH and i, timeout=60,
                          what="batches 2 and 3 delivered and unacknowledged")
        assert info.num_pending == EVENTS - 3 * BATCH and ledger_count(engine) == BATCH
        for _ in range(2):
            turns.release()
        wait_until(lambda: ledger_count(engine) == EVENTS, timeout=60, what=f"{EVENTS} events in the ledger")
        wait_until(lambda: consumer(cluster, cfg).num_ack_pending == 0, timeout=60, what="every message acknowledged")
        assert ingest.stats["acked"] == EVENTS and ingest.stats["duplicates"] == 0
    finally:
        for _ in range(3):
            turns.release()
        ingest.stop()
        engine.dispose()


def test_on_stop_the_batch_fetched_ahead_goes_back_at_once(tmp_path, cluster):
    """Stopping while a batch commits: that batch is committed and acknowledged, the one fetched
    ahead is handed back (nak): the next office process to fetch gets it at once, not after
    ``ack_wait_s`` (120 s), and the rest; every event in the ledger exactly once."""
    cfg = config(tmp_path, cluster, "BACK", "itajai")
    bodies = signed_events(tmp_path, cfg.port, EVENTS)
    upgrade(cfg.database_url)
    engine = make_engine(cfg.database_url)
    first = JetStreamIngest(cfg, create_tables=False)
    entered, release = held(first)
    publish(cluster, cfg, bodies)
    first.start()
    try:
        assert first.wait_connected(60)
        assert entered.wait(60), "no batch reached the writer"
        wait_until(lambda: consumer(cluster, cfg).num_ack_pending == 2 * BATCH, timeout=60,
                   what="a batch fetched ahead during the commit")
        first.begin_stop()
        release.set()
        first.stop(timeout=30)
        assert not first.alive()
        assert ledger_count(engine) == BATCH and first.stats["acked"] == BATCH
        assert first.stats["handed_back"] == BATCH
        # the committed batch acknowledged; the one handed back still counts as pending until it
        # is delivered again (JetStream keeps a nak'ed message pending, queued for redelivery)
        wait_until(lambda: consumer(cluster, cfg).ack_floor.stream_seq == BATCH, timeout=30,
                   what="the committed batch acknowledged")
    finally:
        release.set()
        first.stop()
    second = JetStreamIngest(cfg, create_tables=False).start()
    try:
        assert second.wait_connected(60)
        # within 60 s: the batch handed back is delivered now, not after ack_wait_s (120 s)
        wait_until(lambda: ledger_count(engine) == EVENTS, timeout=60,
                   what=f"{EVENTS} events in the ledger before ack_wait_s")
        wait_until(lambda: consumer(cluster, cfg).num_ack_pending == 0, timeout=60, what="every message acknowledged")
        assert second.stats["inserted"] == EVENTS - BATCH and second.stats["duplicates"] == 0
    finally:
        second.stop()
        engine.dispose()
