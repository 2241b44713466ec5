"""The audit of the columns the office reads against each event's signed ``raw`` (central/evidence/
audit_columns.py, ``portgate evidence audit``): a registration, decision, time or payload edited in
the ``events`` row (``raw`` untouched: its signature still holds) is COLUMN_MISMATCH, a copied row a
COLUMN_MISMATCH (event id) and DUPLICATE_SEQ, a ``raw`` stored as text RAW_NOT_BYTES, never a
traceback; each exit 1, an untouched ledger exit 0 with the same counts. Real ingest, real keys, the
real CLI, on SQLite and PostgreSQL (``migrated_url``)."""

from __future__ import annotations

import datetime as dt
import sqlite3
import uuid

import msgspec
import pytest
from sqlalchemy import select

from central.db import make_engine
from central.ingest.keys import KeyRing
from central.ledger.schema import chain_breaks, events
from portgate.config import read_secret
from tests.central.evidence.ingested import ingest, two_gates
from testkit.cli import run_here
from wire import chain
from wire.events import TapPayload, encode, sign

T0 = dt.datetime(2026, 3, 15, 12, 0, tzinfo=dt.UTC)
CLEAN = "audited 6 signed event(s) up to ledger id 9: 0 failure(s), 0 new recorded"


def tap(i):
    return TapPayload(uid=f"0A04A1{i:04d}", reader_id="r1", reader_kind="control", decision="admit",
                      registration=f"V{i:03d}")


def _ledger(tmp_path, url):
    """Gate g1's six signed events (ledger ids 1-6) and g2's three HMAC-only ones (7-9) through the
    office's ingest into the ledger ``url``."""
    keys, _hkey, signer, evs, plain = two_gates(tmp_path, tap, T0)
    evs += plain
    engine = make_engine(url)
    assert ingest(engine, KeyRing(keys, recheck_s=0), evs, T0) == []
    return engine, keys, evs, signer


@pytest.fixture
def ledger(tmp_path, migrated_url):
    engine, keys, evs, signer = _ledger(tmp_path, migrated_url)
    yield engine, migrated_url, keys, evs, signer
    engine.dispose()


@pytest.fixture
def sqlite_file(tmp_path, sqlite_ledger):
    path = tmp_path / "ledger.db"
    engine, keys, evs, _signer = _ledger(tmp_path, sqlite_ledger(path))
    yield engine, f"sqlite:///{path}", path, keys, evs
    engine.dispose()


def cli(url, keys):
    return run_here(["evidence", "audit", "--db", url, "--keys-dir", str(keys), "--nice", "0"])


def recorded(engine):
    with engine.connect() as c:
        return [(r.kind, r.gate_id, r.seq_from, r.event_id) for r in c.execute(
            select(chain_breaks).order_by(chain_breaks.c.id))]


def edit(engine, ledger_id, **values):
    with engine.begin() as conn:
        conn.execute(events.update().where(events.c.id == ledger_id).values(**values))


def fails(run) -> list[str]:
    return [line for line in run.stdout.splitlines() if line.startswith("FAIL: ")]


def test_an_untouched_ledger_passes_with_the_same_counts(ledger):
    engine, url, keys, _evs, _signer = ledger
    run = cli(url, keys)
    assert (run.returncode, run.stdout.strip()) == (0, CLEAN), run.stdout + run.stderr
    assert recorded(engine) == []


def test_an_edited_registration_and_decision_is_a_column_mismatch_once(ledger):
    engine, url, keys, evs, _signer = ledger
    edit(engine, 3, registration="V017", decision="deny")  # what the reads page and exports show
    run = cli(url, keys)
    assert run.returncode == 1, run.stdout + run.stderr
    assert fails(run) == [
        f"FAIL: CHAIN_BREAK COLUMN_MISMATCH gate g1 seq 3: audit: ledger id 3: event {evs[2].event_id}: registration "
        "stored 'V017', signed 'V002'; decision stored 'deny', signed 'admit' (the office's pages and exports read "
        "the stored columns)"]
    assert run.stdout.strip().endswith("audited 6 signed event(s) up to ledger id 9: 1 failure(s), 1 new recorded")
    assert recorded(engine) == [("COLUMN_MISMATCH", "g1", 3, evs[2].event_id)]
    again = cli(url, keys)
    assert again.returncode == 1 and "(already recorded)" in again.stdout and len(recorded(engine)) == 1


@pytest.mark.parametrize("column, value, shown", [
    ("occurred_at", T0 + dt.timedelta(hours=3), "occurred_at stored 2026-03-15T15:00:00+00:00, signed "
                                                "2026-03-15T12:00:00+00:00"),
    ("payload", {"uid": "0A04A10000", "reader_id": "r1", "reader_kind": "control", "decision": "admit",
                 "registration": "V017", "type": "tap"}, "payload stored {"),
    ("mono_ns", 5, "mono_ns stored 5, signed 0"),
])
def test_an_edited_time_payload_or_clock_is_a_column_mismatch(ledger, column, value, shown):
    engine, url, keys, evs, _signer = ledger
    edit(engine, 1, **{column: value})
    run = cli(url, keys)
    assert run.returncode == 1, run.stdout + run.stderr
    [line] = fails(run)
    assert line.startswith(f"FAIL: CHAIN_BREAK COLUMN_MISMATCH gate g1 seq 1: audit: ledger id 1: event "
                           f"{evs[0].event_id}: {shown}"), line
    assert recorded(engine) == [("COLUMN_MISMATCH", "g1", 1, evs[0].event_id)]


def test_an_unsigned_events_columns_are_compared_with_its_raw(ledger):
    engine, url, keys, evs, _signer = ledger
    edit(engine, 8, registration="V099")  # g2: HMAC only, not among the signed events counted
    run = cli(url, keys)
    assert run.returncode == 1, run.stdout + run.stderr
    assert fails(run) == [f"FAIL: CHAIN_BREAK COLUMN_MISMATCH gate g2 seq 2: audit: ledger id 8: event "
                          f"{evs[7].event_id}: registration stored 'V099', in raw 'V001' (the office's pages "
                          "and exports read the stored columns)"]


def test_a_copied_row_is_a_duplicate_seq_and_an_event_id_mismatch(ledger):
    engine, url, keys, evs, _signer = ledger
    with engine.begin() as conn:
        row = dict(conn.execute(select(events).where(events.c.id == 3)).one()._mapping)
        fake = str(uuid.uuid4())
        conn.execute(events.insert().values({**row, "id": 10, "event_id": fake}))
    run = cli(url, keys)
    assert run.returncode == 1, run.stdout + run.stderr
    assert fails(run) == [
        f"FAIL: CHAIN_BREAK COLUMN_MISMATCH gate g1 seq 3: audit: ledger id 10: event {evs[2].event_id}: event_id "
        f"stored '{fake}', signed '{evs[2].event_id}' (the office's pages and exports read the stored columns)",
        f"FAIL: CHAIN_BREAK DUPLICATE_SEQ gate g1 seq 3: audit: ledger id 10: seq 3 of gate g1 is stored again "
        f"(ledger id 3 holds it first) and no FORKED break of the ingest names event {evs[2].event_id}: a copied "
        "or inserted row"]
    assert run.stdout.strip().endswith("audited 7 signed event(s) up to ledger id 10: 2 failure(s), 2 new recorded")


def test_a_forked_seq_the_ingest_recorded_is_not_a_duplicate(ledger):
    """A second genuine event at g1's seq 6 (the gate's journal forked), signed by the gate, through
    the ingest: stored with its FORKED break; the audit names nothing (the break is the ingest's)."""
    engine, url, keys, evs, signer = ledger
    twin, _digest = chain.seal(msgspec.structs.replace(evs[5], event_id=str(uuid.uuid4()),
                                                       mono_ns=evs[5].mono_ns + 1), signer,
                               read_secret(keys / "g1.key"))
    assert [b.kind for b in ingest(engine, KeyRing(keys, recheck_s=0), [twin], T0)] == ["FORKED"]
    run = cli(url, keys)
    assert (run.returncode, run.stdout.strip()) == (
        0, "audited 7 signed event(s) up to ledger id 10: 0 failure(s), 0 new recorded"), run.stdout + run.stderr


def test_a_raw_stored_as_text_is_a_failure_not_a_traceback(sqlite_file):
    """The tester's edits with sqlite3: seq 5's raw cast to text, seq 4's too where seq 3's sig bytes
    were replaced (the audit reads seq 4 to explain seq 3's BAD_SIGNATURE)."""
    engine, url, path, keys, evs = sqlite_file
    hkey = read_secret(keys / "g1.key")
    edit(engine, 3, raw=encode(sign(msgspec.structs.replace(evs[2], sig="00" * 64), hkey)))
    db = sqlite3.connect(path)
    with db:
        db.execute("update events set raw=cast(raw as text) where id in (4, 5)")
    db.close()
    run = cli(url, keys)
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stdout + run.stderr
    lines = fails(run)
    assert len(lines) == 3, run.stdout
    assert lines[0].startswith(f"FAIL: CHAIN_BREAK BAD_SIGNATURE gate g1 seq 3: audit: ledger id 3: event "
                               f"{evs[2].event_id} is stored but")
    assert lines[0].endswith("(edited, or forged without the gate's key)")  # seq 4 unread: nothing proven
    for line, n in zip(lines[1:], (4, 5)):
        assert line.startswith(f"FAIL: CHAIN_BREAK RAW_NOT_BYTES gate g1 seq {n}: audit: ledger id {n}: event "
                               f"{evs[n - 1].event_id}: the stored raw is str '{{"), line
        assert line.endswith("..., not bytes: the wire bytes are not kept"), line
    assert [k for k, *_ in recorded(engine)] == ["BAD_SIGNATURE", "RAW_NOT_BYTES", "RAW_NOT_BYTES"]


@pytest.mark.parametrize("sql, shown", [
    ("update events set occurred_at='not a time' where id=2",
     "occurred_at stored 'not a time' (unreadable: "),
    ("update events set payload='[1]' where id=2", "payload stored [1], signed {"),
    ("update events set seq='two' where id=2", "seq stored 'two', signed 2"),
    ("update events set clock_trusted='yes' where id=2", "clock_trusted stored 'yes', signed True"),
    ("update events set clock_trusted=2 where id=2", "clock_trusted stored 2, signed True"),
])
def test_a_junk_column_value_is_named_not_a_traceback(sqlite_file, sql, shown):
    engine, url, path, keys, evs = sqlite_file
    db = sqlite3.connect(path)
    with db:
        db.execute(sql)
    db.close()
    run = cli(url, keys)
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stdout + run.stderr
    [line] = [x for x in fails(run) if "COLUMN_MISMATCH" in x]
    assert f"event {evs[1].event_id}: {shown}" in line, line
