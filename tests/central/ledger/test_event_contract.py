"""Signed events that break the wire contract (``wire/events.py`` field bounds) are dead letters
before the database, the same on SQLite and PostgreSQL: an ``event_id`` that is not a lower-case
UUID, ids and registrations longer than their 64-character columns, payloads over 100 kB."""

from __future__ import annotations

import datetime as dt
import uuid

import msgspec
import pytest
from sqlalchemy import func, select

from central.db import load_all_tables, make_engine
from central.ingest.keys import KeyRing, add_gate
from central.ingest.event_store import Accepted, DeadLetter, check, write_batch
from central.ledger.schema import dead_letters, events
from portgate.config import read_secret
from wire import topics
from wire.events import AlertPayload, Event, TapPayload, encode, new_event_id, sign

AT = dt.datetime(2026, 11, 30, 7, 0, tzinfo=dt.UTC)
TOPIC = topics.gate_events("santos", "g1")


def _event(**fields) -> Event:
    base = dict(event_id=new_event_id(), port="santos", gate_id="g1", boot_id="b-1", seq=1, occurred_at=AT,
                clock_trusted=True, mono_ns=1,
                payload=TapPayload(uid="04A1B2C3", reader_id="r1", reader_kind="control", decision="admit",
                                   registration="1001"))
    base.update(fields)
    return Event(**base)


BROKEN = {
    "empty event_id": dict(event_id=""),
    "1,000,000-character event_id": dict(event_id="a" * 1_000_000),
    "upper-case event_id": dict(event_id=str(uuid.uuid4()).upper()),
    "event_id not a UUID": dict(event_id="not-a-uuid-but-36-characters-long-xx"),
    "65-character boot_id": dict(boot_id="b" * 65),
    "empty boot_id": dict(boot_id=""),
    "65-character registration": dict(payload=TapPayload(uid="04A1", reader_id="r1", reader_kind="control",
                                                         decision="admit", registration="1" * 65)),
    "100 kB payload": dict(payload=AlertPayload(code="X", detail="d" * 100_001)),
    "4001-character detail": dict(payload=AlertPayload(code="X", detail="d" * 4001)),
}


@pytest.fixture
def keys(tmp_path):
    key = read_secret(add_gate(tmp_path, "g1"))
    return KeyRing(tmp_path), key


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_signed_event_outside_the_contract_is_a_dead_letter_on_both_databases(case, db_url, keys):
    ring, key = keys
    raw = encode(sign(_event(**BROKEN[case]), key))
    verdict = check(TOPIC, raw, "santos", ring)
    assert isinstance(verdict, DeadLetter), case
    assert verdict.reason.startswith(("malformed", "oversize")), verdict.reason
    engine = make_engine(db_url)
    load_all_tables().create_all(engine)
    try:
        with engine.begin() as conn:
            write_batch(conn, [], [verdict], AT)
        with engine.connect() as conn:
            assert conn.execute(select(func.count()).select_from(events)).scalar() == 0
            assert conn.execute(select(func.count()).select_from(dead_letters)).scalar() == 1
    finally:
        engine.dispose()


def test_two_events_with_an_empty_id_are_both_dead_letters_not_a_duplicate(db_url, keys):
    ring, key = keys
    verdicts = [check(TOPIC, encode(sign(_event(event_id="", seq=s), key)), "santos", ring) for s in (1, 2)]
    assert all(isinstance(v, DeadLetter) for v in verdicts)
    engine = make_engine(db_url)
    load_all_tables().create_all(engine)
    try:
        with engine.begin() as conn:
            write_batch(conn, [], verdicts, AT)
        with engine.connect() as conn:
            assert conn.execute(select(func.count()).select_from(dead_letters)).scalar() == 2
    finally:
        engine.dispose()


def test_an_event_at_the_bounds_is_accepted_and_stored_on_both_databases(db_url, keys):
    ring, key = keys
    event = _event(boot_id="b" * 64, payload=TapPayload(
        uid="0" * 512, reader_id="r" * 64, reader_kind="control", decision="admit", registration="1" * 64,
        message="m" * 4000, flags=["F" * 64] * 64))
    verdict = check(TOPIC, encode(sign(event, key)), "santos", ring)
    assert isinstance(verdict, Accepted), getattr(verdict, "reason", None)
    engine = make_engine(db_url)
    load_all_tables().create_all(engine)
    try:
        with engine.begin() as conn:
            assert len(write_batch(conn, [verdict], [], AT)) == 1
        with engine.connect() as conn:
            row = conn.execute(select(events.c.boot_id, events.c.registration)).one()
        assert row == ("b" * 64, "1" * 64)
    finally:
        engine.dispose()


def test_the_generated_event_schema_carries_the_bounds():
    schema = msgspec.json.schema(Event)
    props = schema["$defs"]["Event"]["properties"]
    assert props["event_id"]["pattern"].startswith("^[0-9a-f]{8}-")
    assert props["boot_id"]["maxLength"] == 64
