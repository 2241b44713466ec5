"""Gate events through the office's ingest path as the writer runs it (verdicts, checks, insert,
links, chain breaks), without a broker: the audit and link tests' ledgers."""

from __future__ import annotations

import datetime as dt

from central.ingest import chain as chain_check
from central.ingest.event_store import Accepted, batch_verdicts, check, write_batch
from wire import topics
from wire.events import encode


def ingest(engine, ring, evs, now: dt.datetime, port: str = "santos") -> list:
    """Ingest ``evs`` (each must be accepted) of ``port`` in one transaction at ``now``; the breaks recorded."""
    items = [(topics.gate_events(port, e.gate_id), encode(e)) for e in evs]
    memo: dict = {}
    pre, decoded = batch_verdicts(items, port, ring, memo)
    ok = [check(t, raw, port, ring, v, memo, e) for (t, raw), v, e in zip(items, pre, decoded)]
    assert all(isinstance(v, Accepted) for v in ok), [getattr(v, "reason", "") for v in ok]
    with engine.begin() as conn:
        inserted = write_batch(conn, ok, [], now)
        return chain_check.record(conn, inserted, [], now, ok)
