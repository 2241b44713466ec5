"""``central.ingest.jetstream_pull.LeanPull`` on a real 3-node NATS cluster (issue 37): a batch comes
from one pull request without an asyncio task per message (nats-py's ``fetch`` made one per message:
the ingest thread's CPU bound on the cluster bench), an empty fetch waits and then takes what comes,
nothing delivered is lost or delivered twice, a request ended early by a status (409) is not
repeated in a loop, and a request whose status never comes (lost with its node) is given up."""

from __future__ import annotations

import asyncio
import json

import nats
import pytest
from nats.js.api import AckPolicy, ConsumerConfig, StorageType, StreamConfig

from central.ingest import jetstream_pull
from central.ingest.jetstream_pull import LeanPull
from testkit.nats import find_exe, start_cluster

pytestmark = [pytest.mark.nats]

ACK_WAIT_S = 120.0  # far beyond every wait below: a message seen twice came back by a bug, not by ack_wait


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    assert find_exe(), "nats-server is not installed: scripts/setup.sh installs it (as root)"
    c = start_cluster(tmp_path_factory.mktemp("nats"))
    yield c
    c.stop()


class Counting:
    """The real connection; counts the pull requests published through it and drops the first
    ``drop`` of them (a request lost with the node that held it)."""

    def __init__(self, nc, drop: int = 0) -> None:
        self.nc, self.drop, self.requests = nc, drop, 0

    def __getattr__(self, name):
        return getattr(self.nc, name)

    async def publish(self, subject, payload=b"", reply="", headers=None):
        if subject.startswith("$JS.API.CONSUMER.MSG.NEXT."):
            self.requests += 1
            if self.drop:
                self.drop -= 1
                return None
        return await self.nc.publish(subject, payload, reply=reply, headers=headers)


async def setup(cluster, name: str, n: int, **consumer):
    """A stream ``name`` (3 replicas) with ``n`` messages stored and a durable pull consumer ``name``."""
    nc = await nats.connect(servers=cluster.nats_urls)
    js = nc.jetstream(timeout=60)
    await js.add_stream(StreamConfig(name=name, subjects=[f"{name}.>"], num_replicas=3, storage=StorageType.FILE))
    for i in range(n):
        await js.publish(f"{name}.e", str(i).encode())
    if consumer:  # fields nats-py's ConsumerConfig lacks (max_batch): the JetStream API's own request
        config = {"durable_name": name, "ack_policy": "explicit", "ack_wait": int(ACK_WAIT_S * 1e9), **consumer}
        reply = await nc.request(f"$JS.API.CONSUMER.DURABLE.CREATE.{name}.{name}",
                                 json.dumps({"stream_name": name, "config": config}).encode(), timeout=60)
        assert b'"error"' not in reply.data, reply.data
    else:
        await js.add_consumer(name, ConsumerConfig(name=name, durable_name=name, ack_policy=AckPolicy.EXPLICIT,
                                                   ack_wait=ACK_WAIT_S))
    return nc, js


async def settled(js, name: str):
    """The consumer's info once every ack reached it (a replicated consumer applies acks through its
    raft log: not at once after the flush); waits at most 60 s, then returns what it has."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 60
    while True:
        info = await js.consumer_info(name, name)
        if info.num_ack_pending == 0 or loop.time() > deadline:
            return info
        await asyncio.sleep(0.05)


def test_a_whole_batch_comes_from_one_request_without_a_task_per_message(cluster):
    async def run():
        nc, js = await setup(cluster, "LEANBATCH", 300)
        conn = Counting(nc)
        pull = await LeanPull(conn, "LEANBATCH", "LEANBATCH").start()
        loop = asyncio.get_running_loop()
        created = []
        default = loop.get_task_factory()

        def counting(lp, coro, **kw):
            created.append(coro)
            return default(lp, coro, **kw) if default else asyncio.Task(coro, loop=lp, **kw)

        loop.set_task_factory(counting)
        try:
            first = await pull.fetch(200, 5.0)
        finally:
            loop.set_task_factory(default)
        tasks, requests = len(created), conn.requests
        second = await pull.fetch(200, 5.0)  # the 100 left, ended by the server's status
        for m in first + second:
            await m.ack()
        await nc.flush()
        info = await settled(js, "LEANBATCH")
        await pull.stop()
        await nc.close()
        return first, second, tasks, requests, conn.requests, info

    first, second, tasks, requests, all_requests, info = asyncio.run(run())
    assert [m.data for m in first] == [str(i).encode() for i in range(200)]
    assert [m.data for m in second] == [str(i).encode() for i in range(200, 300)]
    assert requests == 1 and all_requests == 2, "one pull request per batch"
    # nats-py's fetch made one task per message (>= 200 here); a few waits on the arrival event remain
    assert tasks < 20, f"{tasks} asyncio tasks for a batch of 200"
    assert info.num_ack_pending == 0 and info.delivered.consumer_seq == 300, "delivered twice or not acked"


def test_an_empty_fetch_waits_then_takes_what_comes_and_loses_nothing(cluster):
    """The waiting fetch begins while the empty fetch's request is still open (its expiry comes
    from the server just after that fetch returned): it returns at the first delivery, not at the
    end of its wait (an hour here: before the fix it sat out its whole wait with no request open,
    and the test ran into pytest's timeout)."""
    async def run():
        nc, js = await setup(cluster, "LEANWAIT", 0)
        pull = await LeanPull(nc, "LEANWAIT", "LEANWAIT").start()
        empty = await pull.fetch(10, 0.3)
        waiting = asyncio.ensure_future(pull.fetch(10, 3600.0))
        await asyncio.sleep(0.2)
        for i in range(3):
            await js.publish("LEANWAIT.e", str(i).encode())
        got = list(await waiting)
        while len(got) < 3:  # the rest: by the request still open or by a new one
            more = await pull.fetch(10, 30.0)
            assert more, f"only {len(got)} of 3 delivered"
            got += more
        for m in got:
            await m.ack()
        await nc.flush()
        info = await settled(js, "LEANWAIT")
        await pull.stop()
        await nc.close()
        return empty, got, info

    empty, got, info = asyncio.run(run())
    assert empty == []
    assert sorted(m.data for m in got) == [b"0", b"1", b"2"]
    assert info.num_ack_pending == 0 and info.delivered.consumer_seq == 3


def test_a_request_ended_by_a_status_is_not_repeated_in_a_loop(cluster):
    """A batch above the consumer's ``max_batch``: the server answers every request with a
    409 at once; the fetch sends its two requests, then waits out ``wait_s`` with nothing."""
    async def run():
        nc, _js = await setup(cluster, "LEAN409", 3, max_batch=5)
        conn = Counting(nc)
        pull = await LeanPull(conn, "LEAN409", "LEAN409").start()
        got = await pull.fetch(10, 0.5)
        await pull.stop()
        await nc.close()
        return got, conn.requests, pull.statuses, pull.last_refusal

    got, requests, statuses, why = asyncio.run(run())
    assert got == []
    assert requests == 2, f"{requests} pull requests in one fetch"
    assert statuses["409"] == 2
    assert why == "Exceeded MaxRequestBatch of 5"


def test_a_request_whose_status_never_comes_is_given_up(cluster, monkeypatch):
    """The first request is lost (its node died holding it: no message, no status ever): the fetch
    returns nothing, and once the request's expiry and the grace are past the next fetch asks again
    and gets the messages."""
    monkeypatch.setattr(jetstream_pull, "STALE_GRACE_S", 0.1)

    async def run():
        nc, js = await setup(cluster, "LEANLOST", 4)
        conn = Counting(nc, drop=1)
        pull = await LeanPull(conn, "LEANLOST", "LEANLOST").start()
        lost = await pull.fetch(10, 0.05)
        await asyncio.sleep(0.3)
        got = await pull.fetch(10, 30.0)
        for m in got:
            await m.ack()
        await nc.flush()
        info = await settled(js, "LEANLOST")
        await pull.stop()
        await nc.close()
        return lost, got, pull.statuses, info

    lost, got, statuses, info = asyncio.run(run())
    assert lost == []
    assert statuses["stale"] == 1
    assert [m.data for m in got] == [b"0", b"1", b"2", b"3"]
    assert info.num_ack_pending == 0 and info.delivered.consumer_seq == 4
