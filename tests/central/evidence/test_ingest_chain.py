"""The office verifies each signed event and its links on ingest (issue 20): a forged, edited,
unsigned or forked event is a CHAIN_BREAK naming the gate and the seq range; nothing is dropped."""

from __future__ import annotations

import datetime as dt
import shutil

import uuid

import msgspec
import pytest
from sqlalchemy import select

from central.db import make_engine
from central.ingest import chain as chain_check
from central.ingest.keys import KeyRing, add_gate, public_key_path, read_public_keys, register_public_key
from central.ingest.event_store import Accepted, DeadLetter, check, write_batch
from central.ledger.schema import chain_breaks, dead_letters, events
from edge.journal import Journal
from edge.rules.model import Now
from portgate.config import read_secret
from wire import chain, topics
from wire.events import TapPayload, encode, sign

PORT = "santos"
GATE = "g1"
T0 = dt.datetime(2026, 3, 15, 21, 0, tzinfo=dt.UTC)
NOW = Now(wall=T0, mono_ns=5, clock_trusted=True)
TOPIC = topics.gate_events(PORT, GATE)


def tap(i):
    return TapPayload(uid=f"0A04A1{i:04d}", reader_id="r1", reader_kind="control", decision="admit")


@pytest.fixture
def office(tmp_path, sqlite_ledger):
    url = sqlite_ledger(tmp_path / "ledger.db")
    engine = make_engine(url)
    yield engine
    engine.dispose()


@pytest.fixture
def gate(tmp_path):
    keys = tmp_path / "keys"
    hmac_key = read_secret(add_gate(keys, GATE))
    signer = chain.new_private_key()
    register_public_key(keys, GATE, chain.public_pem(signer.public_key()))
    journal = Journal(tmp_path / "j.db", port=PORT, gate_id=GATE, key=hmac_key, boot_id="b1", signer=signer)
    yield journal, KeyRing(keys, recheck_s=0), hmac_key, signer
    journal.close()


def ingest(engine, ring, raws):
    verdicts = [check(TOPIC, raw, PORT, ring) for raw in raws]
    ok = [v for v in verdicts if isinstance(v, Accepted)]
    bad = [v for v in verdicts if isinstance(v, DeadLetter)]
    with engine.begin() as conn:
        inserted = write_batch(conn, ok, bad, T0)
        chain_check.record(conn, inserted, bad, T0)
    return verdicts


def breaks(engine):
    with engine.connect() as conn:
        return [(r.kind, r.gate_id, r.seq_from, r.seq_to) for r in
                conn.execute(select(chain_breaks).order_by(chain_breaks.c.id))]


def stored(engine):
    with engine.connect() as conn:
        return (sorted(conn.execute(select(events.c.seq)).scalars()),
                conn.execute(select(dead_letters.c.reason)).scalars().all())


def test_signed_events_in_any_arrival_order_verify_without_a_break(office, gate):
    journal, ring, _, _ = gate
    evs = [journal.append(tap(i), now=NOW) for i in range(10)]
    raws = [encode(e) for e in evs]
    ingest(office, ring, raws[:4] + raws[5:])
    ingest(office, ring, [raws[4]])  # late: both of its links are checked now
    assert breaks(office) == []
    assert stored(office) == (list(range(1, 11)), [])


def test_forged_edited_and_unsigned_events_are_chain_breaks_and_kept_as_dead_letters(office, gate):
    journal, ring, hmac_key, _ = gate
    evs = [journal.append(tap(i), now=NOW) for i in range(6)]
    forged = sign(msgspec.structs.replace(evs[5], event_id=str(uuid.uuid4()), payload=tap(99), sig="ab" * 64), hmac_key)
    unsigned = sign(msgspec.structs.replace(evs[5], event_id=str(uuid.uuid4()), payload=tap(98), sig="", prev=""), hmac_key)
    edited = encode(evs[4]).replace(b"0A04A10004", b"0A04A10007")
    edited = encode(sign(msgspec.json.decode(edited, type=type(evs[4])), hmac_key))  # the MAC redone
    verdicts = ingest(office, ring, [encode(e) for e in evs[:4]] + [edited, encode(forged), encode(unsigned)])
    assert [type(v).__name__ for v in verdicts] == ["Accepted"] * 4 + ["DeadLetter"] * 3
    assert breaks(office) == [("BAD_SIGNATURE", GATE, 5, 5), ("BAD_SIGNATURE", GATE, 6, 6),
                              ("UNSIGNED", GATE, 6, 6)]
    seqs, dead = stored(office)
    assert seqs == [1, 2, 3, 4] and len(dead) == 3
    assert all(d.startswith(f"CHAIN_BREAK ") and f"gate {GATE} seq" in d for d in dead)
    # the genuine events still arrive and verify: nothing else is lost
    ingest(office, ring, [encode(evs[4]), encode(evs[5])])
    assert stored(office)[0] == [1, 2, 3, 4, 5, 6] and len(breaks(office)) == 3


def test_a_forked_journal_is_a_fork_and_a_prev_mismatch(office, gate, tmp_path):
    journal, ring, hmac_key, signer = gate
    for i in range(7):
        journal.append(tap(i), now=NOW)
    journal.close()
    shutil.copy(tmp_path / "j.db", tmp_path / "copy.db")  # a gate restored from a backup
    a = Journal(tmp_path / "j.db", port=PORT, gate_id=GATE, key=hmac_key, boot_id="b2", signer=signer)
    b = Journal(tmp_path / "copy.db", port=PORT, gate_id=GATE, key=hmac_key, boot_id="b3", signer=signer)
    mine = a.events_between(1, 7) + [a.append(tap(8), now=NOW)]
    theirs = [b.append(tap(80), now=NOW), b.append(tap(81), now=NOW)]
    a.close(), b.close()
    ingest(office, ring, [encode(e) for e in mine])
    ingest(office, ring, [encode(e) for e in theirs])
    assert breaks(office) == [("FORKED", GATE, 8, 8), ("PREV_MISMATCH", GATE, 8, 9)]
    seqs, dead = stored(office)
    assert seqs == [1, 2, 3, 4, 5, 6, 7, 8, 8, 9] and dead == []  # both histories kept, named


def test_a_key_rollover_signed_by_the_registered_key_is_learned(office, gate, tmp_path):
    journal, ring, _, _ = gate
    journal.append(tap(1), now=NOW)
    new = chain.new_private_key()
    roll = journal.rotate_key(new, now=NOW)
    after = journal.append(tap(2), now=NOW)
    ingest(office, ring, [encode(e) for e in journal.events_between(1, 3)])
    assert breaks(office) == [] and stored(office)[0] == [1, 2, 3]
    keys = read_public_keys(public_key_path(tmp_path / "keys", GATE))
    assert [chain.fingerprint(k) for k in keys][-1] == chain.fingerprint(new.public_key())
    assert roll.seq == 2 and after.seq == 3


def test_a_gate_naming_an_unregistered_key_is_refused(office, gate):
    journal, ring, _, _ = gate
    journal.append(tap(1), now=NOW)
    journal._signer = None  # the key event of a replaced key whose old half is gone
    journal._key_event(chain.new_private_key(), chain.public_raw(gate[3].public_key()), None)
    verdicts = ingest(office, ring, [encode(e) for e in journal.events_between(1, 2)])
    assert breaks(office) == [("UNKNOWN_KEY", GATE, 2, 2)]
    assert "register it with portgate central add-gate --public-key" in verdicts[1].reason


def test_an_older_journal_copy_restored_at_the_gate_is_a_recorded_loss_not_a_prev_mismatch(office, gate, tmp_path):
    """The tester's case: gate stopped, a ``.dump`` taken some seqs earlier restored, gate started.
    The gate's alert names the loss and the last head (docs/gate.md "Quarantine"), so the office
    records the never-sent seqs in ``gate_losses`` and no chain break (before: PREV_MISMATCH)."""
    import sqlite3

    from central.ingest.event_store import record_losses
    from central.ledger.schema import gate_losses

    journal, ring, hmac_key, signer = gate
    for i in range(4):
        journal.append(tap(i), now=NOW)
    journal.close()
    backup = sqlite3.connect(tmp_path / "backup.db")  # the operator's backup, restorable with .dump
    with sqlite3.connect(tmp_path / "j.db") as src:
        backup.executescript("\n".join(src.iterdump()))
    backup.close()
    j = Journal(tmp_path / "j.db", port=PORT, gate_id=GATE, key=hmac_key, boot_id="b2", signer=signer)
    for i in range(6):
        j.append(tap(10 + i), now=NOW)
    j.mark_sent(range(1, 9))  # the office has 1..8; 9 and 10 never left the gate
    sent = j.events_between(1, 8)
    j.close()
    (tmp_path / "j.db").unlink()
    (tmp_path / "backup.db").rename(tmp_path / "j.db")
    j = Journal(tmp_path / "j.db", port=PORT, gate_id=GATE, key=hmac_key, boot_id="b3", signer=signer)
    after = j.outbox_batch(10)
    assert [e.seq for e in after] == [11] and after[0].payload.code == "STORE_QUARANTINED"
    after.append(j.append(tap(20), now=NOW))
    j.close()
    ingest(office, ring, [encode(e) for e in sent])
    verdicts = [check(TOPIC, encode(e), PORT, ring) for e in after]
    with office.begin() as conn:
        inserted = write_batch(conn, verdicts, [], T0)
        losses = record_losses(conn, inserted, T0)
        chain_check.record(conn, inserted, [], T0)
    assert [(x.seq_from, x.seq_to) for x in losses] == [(9, 10)]
    with office.connect() as conn:
        assert conn.execute(select(gate_losses.c.seq_from, gate_losses.c.seq_to)).all() == [(9, 10)]
    assert breaks(office) == []
    assert stored(office) == ([1, 2, 3, 4, 5, 6, 7, 8, 11, 12], [])
