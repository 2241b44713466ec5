"""Migration 0013 (lean ``event_links``) on SQLite and PostgreSQL: a ledger holding hex links is
upgraded to 32-byte binary links (WITHOUT ROWID on SQLite), the chain check and receipts still read
them, and the downgrade gives the hex rows back with each link's event id."""

from __future__ import annotations

import datetime as dt

from alembic import command
from sqlalchemy import text

from central.db import make_engine
from central.ingest import chain as chain_check
from central.ingest import event_store
from central.ledger.migrate import alembic_config, head, upgrade
from wire import chain
from wire.events import Event, TapPayload, new_event_id

T = dt.datetime(2026, 3, 1, 12, tzinfo=dt.UTC)
KEY = b"k" * 32
SIGNER = chain.new_private_key()


def _chain(n: int) -> list[Event]:
    out, prev = [], chain.GENESIS
    for seq in range(1, n + 1):
        ev = Event(event_id=new_event_id(), port="santos", gate_id="g1", boot_id="b", seq=seq, occurred_at=T,
                   clock_trusted=True, mono_ns=seq, prev=prev,
                   payload=TapPayload(uid=f"{seq:08X}", reader_id="r1", reader_kind="control", decision="admit"))
        ev = chain.seal(ev, SIGNER, KEY)[0]
        out.append(ev)
        prev = chain.event_hash(ev)
    return out


def test_links_are_converted_up_and_back_down(db_url):
    evs = _chain(4)
    upgrade(db_url, "0011")
    engine = make_engine(db_url)
    try:
        with engine.begin() as c:  # a ledger of the 0011 schema holding events and their hex links
            event_store.write_batch(c, [event_store.Accepted("t", e, b"{}") for e in evs], [], T)
            for e in evs:
                c.execute(text("INSERT INTO event_links (gate_id, seq, event_id, hash, prev, segment) "
                               "VALUES (:g, :s, :i, :h, :p, :seg)"),
                          {"g": e.gate_id, "s": e.seq, "i": e.event_id, "h": chain.event_hash(e), "p": e.prev,
                           "seg": False})
        assert upgrade(db_url) == head()
        with engine.connect() as c:
            rows = c.execute(text("SELECT seq, hash, prev FROM event_links ORDER BY seq")).all()
            if engine.dialect.name == "sqlite":
                ddl = c.execute(text("SELECT sql FROM sqlite_master WHERE name = 'event_links'")).scalar()
                assert "WITHOUT ROWID" in ddl
        assert [(s, bytes(h), bytes(p)) for s, h, p in rows] == [
            (e.seq, bytes.fromhex(chain.event_hash(e)), bytes.fromhex(e.prev)) for e in evs]
        # the converted links are the ones the ingest checks against: a replaced seq 5 shows
        fake = _chain(5)[4]
        with engine.begin() as c:
            inserted = event_store.write_batch(c, [event_store.Accepted("t", fake, b"{}")], [], T)
            found = chain_check.record(c, inserted, [], T)
        assert [(b.kind, b.seq_from, b.seq_to) for b in found] == [("PREV_MISMATCH", 4, 5)]
        # a second event claiming a held seq is a fork naming both events
        twin = _chain(2)[1]
        with engine.begin() as c:
            inserted = event_store.write_batch(c, [event_store.Accepted("t", twin, b"{}")], [], T)
            found = chain_check.record(c, inserted, [], T)
        assert [(b.kind, b.seq_from) for b in found] == [("FORKED", 2)]
        assert evs[1].event_id in found[0].detail and twin.event_id in found[0].detail
        command.downgrade(alembic_config(db_url), "0011")
        with engine.connect() as c:
            back = c.execute(text("SELECT seq, event_id, hash, prev FROM event_links ORDER BY seq")).all()
        assert [tuple(r) for r in back] == [(e.seq, e.event_id, chain.event_hash(e), e.prev) for e in evs] + [
            (5, fake.event_id, chain.event_hash(fake), fake.prev)]
    finally:
        engine.dispose()
