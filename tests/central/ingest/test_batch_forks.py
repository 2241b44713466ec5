"""Two new signed events claiming one seq inside the same batch (SQLite and PostgreSQL): the first
gets the link, the second is a FORKED break naming both; the chain around them is still checked."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select

from central.db import load_all_tables, make_engine
from central.ingest import chain as chain_check
from central.ingest import event_store
from central.ledger.schema import event_links
from wire import chain
from wire.events import Event, TapPayload, new_event_id

T = dt.datetime(2026, 3, 1, 12, tzinfo=dt.UTC)
KEY = b"k" * 32
SIGNER = chain.new_private_key()


def _chain(n: int, uid: str = "") -> list[Event]:
    out, prev = [], chain.GENESIS
    for seq in range(1, n + 1):
        ev = Event(event_id=new_event_id(), port="santos", gate_id="g1", boot_id="b", seq=seq, occurred_at=T,
                   clock_trusted=True, mono_ns=seq, prev=prev,
                   payload=TapPayload(uid=f"{uid}{seq:08X}", reader_id="r1", reader_kind="control", decision="admit"))
        out.append(chain.seal(ev, SIGNER, KEY)[0])
        prev = chain.event_hash(out[-1])
    return out


def test_a_seq_claimed_twice_in_one_batch_is_a_fork(db_url):
    good, other = _chain(3), _chain(3, "FF")
    engine = make_engine(db_url)
    load_all_tables().create_all(engine)
    try:
        batch = [good[0], good[1], other[1], good[2]]
        with engine.begin() as c:
            inserted = event_store.write_batch(c, [event_store.Accepted("t", e, b"{}") for e in batch], [], T)
            found = chain_check.record(c, inserted, [], T)
        assert [(b.kind, b.seq_from, b.seq_to) for b in found] == [("FORKED", 2, 2)]
        assert good[1].event_id in found[0].detail and other[1].event_id in found[0].detail
        with engine.connect() as c:
            held = {r.seq: bytes(r.hash).hex() for r in c.execute(select(event_links))}
        assert held == {e.seq: chain.event_hash(e) for e in good}
    finally:
        engine.dispose()
