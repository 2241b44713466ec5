"""The 3-node NATS JetStream cluster of the tests and benchmarks: ``app.cluster.nats`` (moved there so
``portgate demo --cluster`` runs it without the test kit)."""

from app.cluster.nats import CLUSTER_NAME, EXE_CANDIDATES, NatsCluster, NatsNode, find_exe, start_cluster

__all__ = ["CLUSTER_NAME", "EXE_CANDIDATES", "NatsCluster", "NatsNode", "find_exe", "js_asked", "start_cluster"]


def js_asked(servers: list[str], call, total_s: float = 180.0, ask_s: float = 10.0, **connect):
    """``await call(js)`` (a JetStream API call on a fresh connection to ``servers``), asked again
    every ``ask_s`` seconds until answered or ``total_s`` have passed
    (``central.ingest.jetstream_ask.asked_again``): on a loaded machine a replicated cluster may
    be electing and leave a request unanswered (CI: a stream's creation unanswered for 60 s). For
    idempotent calls only (look-ups, a stream created with the same config). ``connect``: more
    ``nats.connect`` keywords (``user``, ``password``)."""
    import asyncio

    import nats

    from central.ingest.jetstream_ask import asked_again

    async def run():
        nc = await nats.connect(servers=list(servers), **connect)
        try:
            js = nc.jetstream(timeout=ask_s)
            return await asked_again(lambda: call(js), total_s, "test set-up")
        finally:
            await nc.close()

    return asyncio.run(run())
