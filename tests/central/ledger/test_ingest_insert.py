"""The ingest's batch insert (central/ingest/event_store.py ``write_batch``) stores every column as the
event says, on SQLite (multi-row ``VALUES``) and on PostgreSQL (binary ``COPY`` into a staging
table, then ``INSERT ... SELECT``), and returns exactly the rows it inserted."""

from __future__ import annotations

import datetime as dt
import json

import msgspec
from sqlalchemy import select

from central.db import load_all_tables, make_engine
from central.ingest.event_store import Accepted, DeadLetter, write_batch
from central.ledger.schema import dead_letters, events
from wire import topics
from wire.events import INT64_MAX, AlertPayload, ConfiscationPayload, Event, TapPayload, encode, new_event_id

AT = dt.datetime(2026, 11, 30, 7, 5, 9, 123456, tzinfo=dt.UTC)
RECEIVED = dt.datetime(2026, 11, 30, 7, 5, 10, 654321, tzinfo=dt.UTC)
PAYLOADS = [
    TapPayload(uid="04A1B2C3", reader_id="r1", reader_kind="control", decision="admit", registration="1001",
               message='Entrada liberada — "boa jornada", {ok}', flags=["A,B", "C\\D"]),
    AlertPayload(code="OUTBOX_HIGH_WATER", detail="90 % cheio; {x: [1, 2]}"),
    ConfiscationPayload(uid="04FFEE01", registration=None, inspector_uid="04AA0001", inspector_registration="9001",
                        reason_flag="BORROWED_CARD", article="83.611 art. 20 i"),
    TapPayload(uid="00000000", reader_id="r2", reader_kind="badge", decision="deny"),
]


def _event(i: int, payload, *, seq: int, mono_ns: int) -> Accepted:
    event = Event(event_id=new_event_id(), port="santos", gate_id="g1", boot_id="b-1", seq=seq,
                  occurred_at=AT + dt.timedelta(seconds=i), clock_trusted=i % 2 == 0, mono_ns=mono_ns,
                  payload=payload, mac=f"{i:064x}")
    return Accepted(topics.gate_events("santos", "g1"), event, encode(event) + b"\x00\xff")


def _batch() -> list[Accepted]:
    edges = [(1, 0), (2, -INT64_MAX - 1), (INT64_MAX - 1, INT64_MAX), (3, 1)]
    return [_event(i, p, seq=s, mono_ns=m) for i, (p, (s, m)) in enumerate(zip(PAYLOADS, edges, strict=True))]


def test_every_column_is_stored_as_the_event_says(db_url):
    engine = make_engine(db_url)
    load_all_tables().create_all(engine)
    batch = _batch()
    with engine.begin() as conn:
        inserted = write_batch(conn, batch, [], RECEIVED)
    assert [e.event_id for _id, e in inserted] == [a.event.event_id for a in batch]
    assert [row_id for row_id, _e in inserted] == sorted(row_id for row_id, _e in inserted)
    with engine.connect() as conn:
        rows = {r.event_id: r for r in conn.execute(select(events))}
    assert {row_id for row_id, _e in inserted} == {r.id for r in rows.values()}
    for a in batch:
        e, r = a.event, rows[a.event.event_id]
        payload = json.loads(r.payload) if isinstance(r.payload, str) else r.payload
        assert payload == msgspec.to_builtins(e.payload)
        assert (r.port, r.gate_id, r.boot_id, r.seq, r.clock_trusted, r.mono_ns, r.mac) == (
            e.port, e.gate_id, e.boot_id, e.seq, e.clock_trusted, e.mono_ns, e.mac)
        assert r.type == type(e.payload).__struct_config__.tag
        assert r.registration == getattr(e.payload, "registration", None)
        assert r.decision == getattr(e.payload, "decision", None)
        assert bytes(r.raw) == a.raw
        assert _utc(r.occurred_at) == e.occurred_at and _utc(r.received_at) == RECEIVED
    engine.dispose()


def test_duplicates_in_the_batch_and_in_the_ledger_are_skipped_and_not_returned(db_url):
    engine = make_engine(db_url)
    load_all_tables().create_all(engine)
    first, second = _batch()[:2], _batch()[2:]
    with engine.begin() as conn:
        assert len(write_batch(conn, first + [first[0]], [], RECEIVED)) == 2  # the second copy: first wins
    later = RECEIVED + dt.timedelta(seconds=1)  # each batch has its own received_at (SQLite finds its rows by it)
    with engine.begin() as conn:
        again = write_batch(conn, [*first, *second], [], later)
    assert [e.event_id for _id, e in again] == [a.event.event_id for a in second]
    with engine.begin() as conn:
        assert write_batch(conn, [*first, *second], [], later + dt.timedelta(seconds=1)) == []
    with engine.connect() as conn:
        assert len(conn.execute(select(events.c.id)).all()) == 4
    engine.dispose()


def test_two_batches_in_one_transaction_each_insert_only_their_own_rows(db_url):
    """(PostgreSQL's staging table is emptied after each batch: the second sees none of the first.)"""
    engine = make_engine(db_url)
    load_all_tables().create_all(engine)
    many = [_event(i, PAYLOADS[0], seq=i + 1, mono_ns=i) for i in range(1200)]  # SQLite: 2 statements
    with engine.begin() as conn:
        one = write_batch(conn, many[:700], [], RECEIVED)
        two = write_batch(conn, many[700:], [], RECEIVED + dt.timedelta(seconds=1))
    assert [e.event_id for _id, e in one] == [a.event.event_id for a in many[:700]]
    assert [e.event_id for _id, e in two] == [a.event.event_id for a in many[700:]]
    with engine.begin() as conn:  # a new transaction on the same connection: nothing left over either
        assert write_batch(conn, many[:1], [], RECEIVED + dt.timedelta(seconds=2)) == []
        assert len(conn.execute(select(events.c.id)).all()) == 1200
    engine.dispose()


def _utc(value: dt.datetime) -> dt.datetime:
    """SQLite gives the stored fields back without an offset (they were written in UTC)."""
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)


def test_an_offset_other_than_utc_is_stored_as_the_same_instant(db_url):
    engine = make_engine(db_url)
    load_all_tables().create_all(engine)
    a = _batch()[0]
    local = dt.datetime(2026, 3, 15, 10, 0, tzinfo=dt.timezone(dt.timedelta(hours=-3)))
    a = Accepted(a.topic, msgspec.structs.replace(a.event, occurred_at=local), a.raw)
    with engine.begin() as conn:
        write_batch(conn, [a], [], RECEIVED)
    with engine.connect() as conn:
        stored = conn.execute(select(events.c.occurred_at)).scalar()
    assert _utc(stored) == dt.datetime(2026, 3, 15, 13, 0, tzinfo=dt.UTC)
    engine.dispose()


def test_a_dead_letter_is_stored_whatever_its_text(db_url):
    """NUL characters (PostgreSQL refuses them in text) and over-long ids or topics: refused, the
    dead letter would have been retried forever and stalled the ingest. The raw bytes stay exact."""
    engine = make_engine(db_url)
    load_all_tables().create_all(engine)
    dead = DeadLetter("portgate/v1/santos/gate/" + "g" * 300 + "/events", "topic/gate mismatch: g1\x00 on g1",
                      b"\x00raw\xff", gate_id="g1\x00" + "x" * 100, event_id="e" * 40)
    with engine.begin() as conn:
        write_batch(conn, [], [dead], RECEIVED)
    with engine.connect() as conn:
        row = conn.execute(select(dead_letters)).one()
    assert bytes(row.raw) == dead.raw
    assert row.reason == "topic/gate mismatch: g1\ufffd on g1"
    assert row.gate_id == ("g1\ufffd" + "x" * 100)[:64] and row.event_id == "e" * 36 and len(row.topic) == 255
    engine.dispose()
