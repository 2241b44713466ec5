"""The signed chain of a gate journal (issue 20): continuous across restarts, a documented segment
after a quarantine, key rollover as an event; every tampering named by ``check_chain``."""

from __future__ import annotations

import datetime as dt
import sqlite3

import uuid

import msgspec
import pytest

from edge.journal import Journal
from edge.rules.model import Now
from edge.signing import load_or_create
from wire import chain
from wire.events import AlertPayload, TapPayload, decode, encode, sign, verify

GATE = "g-test"
KEY = b"k" * 32
T0 = dt.datetime(2026, 3, 15, 21, 0, tzinfo=dt.UTC)
NOW = Now(wall=T0, mono_ns=5, clock_trusted=True)


def tap(uid="0A04A10001"):
    return TapPayload(uid=uid, reader_id="r1", reader_kind="control", decision="admit")


def journal(path, signer, boot="boot-1"):
    return Journal(path, port="santos", gate_id=GATE, key=KEY, boot_id=boot, signer=signer)


def stored(path) -> list:
    c = sqlite3.connect(path)
    rows = [decode(body) for (body,) in c.execute("SELECT body FROM journal ORDER BY seq")]
    c.close()
    return rows


@pytest.fixture
def signer(tmp_path):
    return load_or_create(tmp_path / "state")


def test_the_private_key_is_made_once_with_mode_0600(tmp_path):
    a = load_or_create(tmp_path / "state")
    assert (tmp_path / "state" / "signing.key").stat().st_mode & 0o777 == 0o600
    b = load_or_create(tmp_path / "state")
    assert chain.public_raw(a.public_key()) == chain.public_raw(b.public_key())


def test_a_gate_restarted_20_times_keeps_one_chain(tmp_path, signer):
    path = tmp_path / "j.db"
    for boot in range(20):
        j = journal(path, signer, boot=f"boot-{boot}")
        for n in range(3):
            ev = j.append(tap(f"0A04A1{boot:02d}{n:02d}"), now=NOW)
            assert verify(ev, KEY)  # the HMAC stays beside the signature
        j.close()
    events = stored(path)
    assert len(events) == 60 and len({e.boot_id for e in events}) == 20
    assert events[0].prev == chain.GENESIS
    assert all(b.prev == chain.event_hash(a) for a, b in zip(events, events[1:]))
    report = chain.check_chain(GATE, events, signer.public_key(), first_seq=1)
    assert report.breaks == () and report.verified == 60 and report.head_seq == 60
    assert report.head == journal(path, signer).head()[1]


def test_a_quarantined_journal_starts_a_segment_naming_the_last_head_and_the_loss(tmp_path, signer):
    from testkit.journal_faults import tear

    path = tmp_path / "j.db"
    j = journal(path, signer)
    for _ in range(10):
        j.append(tap(), now=NOW)
    j.mark_sent(range(1, 7))
    before = stored(path)
    j.close()
    tear(path)
    j2 = journal(path, signer, boot="boot-2")
    first = j2.outbox_batch(1)[0]
    assert first.payload.code == "STORE_QUARANTINED" and first.seq == 11
    assert f"last_head_seq=10 last_head={chain.event_hash(before[-1])}" in first.payload.detail
    assert first.prev == chain.event_hash(before[-1])
    j2.append(tap(), now=NOW)
    after = j2.events_between(11, 12)
    j2.close()
    # everything the office got before (1..6) plus the new segment: the loss 7..10 is documented
    report = chain.check_chain(GATE, before[:6] + after, signer.public_key(), first_seq=1)
    assert report.breaks == ()
    assert report.segments == (chain.Segment(GATE, 11, 7, 10, chain.event_hash(before[-1])),)
    # without the documenting alert the same hole is a break
    report = chain.check_chain(GATE, before[:6] + after[1:], signer.public_key(), first_seq=1)
    assert [b.kind for b in report.breaks] == ["MISSING"] and report.breaks[0].seq_from == 7


def test_an_hmac_only_journal_migrates_with_a_key_event_and_a_rollover_is_signed_by_the_old_key(tmp_path, signer):
    path = tmp_path / "j.db"
    old = Journal(path, port="santos", gate_id=GATE, key=KEY, boot_id="b0")
    old.append(tap(), now=NOW)
    old.close()
    j = journal(path, signer)
    j.append(tap(), now=NOW)
    new = chain.new_private_key()
    roll = j.rotate_key(new, now=NOW)
    j.append(tap(), now=NOW)
    j.close()
    events = stored(path)
    assert [e.payload.code for e in events if isinstance(e.payload, AlertPayload)] == ["SIGNING_KEY"] * 2
    assert events[1].prev == chain.event_hash(events[0])  # the legacy row is linked in
    assert chain.signature_ok(roll, signer.public_key())  # the rollover is signed by the old key
    assert chain.signature_ok(events[-1], new.public_key())
    report = chain.check_chain(GATE, events, signer.public_key(), first_seq=1)
    assert report.breaks == () and report.unsigned_legacy == 1 and report.verified == 4
    # the restart after the rollover signs with the new key and does not name a key again
    j = journal(path, new)
    j.append(tap(), now=NOW)
    j.close()
    assert chain.check_chain(GATE, stored(path), signer.public_key(), first_seq=1).breaks == ()


def _chain(tmp_path, signer, n=8):
    j = journal(tmp_path / "j.db", signer)
    for i in range(n):
        j.append(tap(f"0A04A100{i:02d}"), now=NOW)
    j.close()
    return stored(tmp_path / "j.db")


def _kinds(events, signer):
    report = chain.check_chain(GATE, events, signer.public_key(), first_seq=1)
    return [(b.kind, b.seq_from, b.seq_to) for b in report.breaks], report


def test_a_flipped_byte_is_a_bad_signature_of_that_seq_only(tmp_path, signer):
    events = _chain(tmp_path, signer)
    raw = bytearray(encode(events[3]))
    i = raw.index(b"0A04A10003")
    raw[i + 9] = ord("9")  # ...0003 -> ...0009 in the uid
    events[3] = decode(bytes(raw))
    found, report = _kinds(events, signer)
    assert found == [("BAD_SIGNATURE", 4, 4)] and report.verified == 7
    assert "gate g-test seq 4" in str(report.breaks[0])


def test_a_deleted_event_is_missing(tmp_path, signer):
    events = _chain(tmp_path, signer)
    del events[4]
    found, report = _kinds(events, signer)
    assert found == [("MISSING", 5, 5)] and report.verified == 7


def test_two_swapped_events_are_reordered(tmp_path, signer):
    events = _chain(tmp_path, signer)
    events[2], events[5] = events[5], events[2]
    found, report = _kinds(events, signer)
    assert found == [("REORDERED", 3, 6)]
    assert report.verified == 8  # each event still proves itself; only the order is wrong


def test_a_replayed_old_event_is_named(tmp_path, signer):
    events = _chain(tmp_path, signer)
    events.append(events[1])
    found, report = _kinds(events, signer)
    assert found == [("REPLAYED", 2, 2)] and report.verified == 8


def test_an_event_forged_with_the_hmac_key_alone_is_named_and_a_fork(tmp_path, signer):
    events = _chain(tmp_path, signer)
    forged = sign(msgspec.structs.replace(events[6], event_id=str(uuid.uuid4()), payload=tap("0B0B11BADE"), sig="00" * 64),
                  KEY)
    assert verify(forged, KEY)  # the office's HMAC check alone would accept it
    found, report = _kinds(events + [forged], signer)
    assert found == [("FORKED", 7, 7)]
    found, report = _kinds(events[:6] + [forged] + events[7:], signer)
    assert found == [("BAD_SIGNATURE", 7, 7)] and report.verified == 7
    # a forged event re-linked with a fresh key of the forger's own is no better
    other = chain.new_private_key()
    forged2, _ = chain.seal(msgspec.structs.replace(events[6], payload=tap("0B0B11BADE")), other, KEY)
    found, _ = _kinds(events[:6] + [forged2] + events[7:], signer)
    assert found == [("BAD_SIGNATURE", 7, 7)]


def test_public_key_forms_and_bad_keys(signer):
    pub = signer.public_key()
    assert chain.fingerprint(chain.load_public(chain.public_pem(pub))) == chain.fingerprint(pub)
    assert chain.fingerprint(chain.load_public(chain.public_raw(pub))) == chain.fingerprint(pub)
    from portgate.errors import BadInput

    with pytest.raises(BadInput):
        chain.load_public("not a key")
