"""Two new signed events claiming one seq inside the same batch (SQLite and PostgreSQL): the first
gets the link, the second is a FORKED break naming both; the chain around them is still checked."""

from __future__ import annotations

import datetime as dt

import pytest

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


def test_links_of_two_batches_in_one_transaction_and_after_a_rollback(db_url):
    """The link insert of each database: a batch after another in the same transaction, and a batch
    after a rolled back one, each store exactly their own links; a link already held (another
    writer's, inserted behind the batch's read) is kept, the batch's other links go in."""
    good = _chain(6)
    engine = make_engine(db_url)
    load_all_tables().create_all(engine)
    try:
        def batch(conn, part):
            inserted = event_store.write_batch(conn, [event_store.Accepted("t", e, b"{}") for e in part], [], T)
            return chain_check.record(conn, inserted, [], T)

        with engine.connect() as c:
            with c.begin() as tx:
                assert batch(c, good[4:6]) == []
                tx.rollback()
            with c.begin():
                assert batch(c, good[0:2]) == []
                assert batch(c, good[2:3]) == []
        with engine.begin() as c:
            held_by_another = chain_check.link_row(good[4]) | {"hash": b"\x01" * 32}
            rows = {(good[3].gate_id, good[3].seq): chain_check.link_row(good[3]),
                    (good[4].gate_id, good[4].seq): chain_check.link_row(good[4])}
            c.execute(event_links.insert(), [{k: v for k, v in held_by_another.items() if k != "event_id"}])
            chain_check._insert_links(c, list(rows.values()))
        with engine.connect() as c:
            held = {r.seq: bytes(r.hash) for r in c.execute(select(event_links))}
        assert held == {**{e.seq: bytes.fromhex(chain.event_hash(e)) for e in good[:4]}, 5: b"\x01" * 32}
    finally:
        engine.dispose()


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_fresh_links_go_straight_into_the_table_on_postgresql(db_url):
    """PostgreSQL: with no link held meanwhile, the rows are copied straight into ``event_links``
    (no staging table made); the links are the same."""
    good = _chain(4)
    engine = make_engine(db_url)
    load_all_tables().create_all(engine)
    try:
        with engine.begin() as c:
            inserted = event_store.write_batch(c, [event_store.Accepted("t", e, b"{}") for e in good], [], T)
            assert chain_check.record(c, inserted, [], T) == []
            assert c.exec_driver_sql("SELECT to_regclass('pg_temp.ingest_links')").scalar() is None
        with engine.connect() as c:
            held = {r.seq: bytes(r.hash).hex() for r in c.execute(select(event_links))}
        assert held == {e.seq: chain.event_hash(e) for e in good}
    finally:
        engine.dispose()
