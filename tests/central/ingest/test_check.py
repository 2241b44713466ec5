"""The pure ingest check (central/ingest/check.py): message bytes + the gate's keys -> verdict,
in memory (no broker, no database, no key files)."""

from __future__ import annotations

import datetime as dt

import msgspec
import pytest

from central.ingest.check import (
    MAX_MESSAGE_BYTES, UNKNOWN, Accepted, DeadLetter, GateKeys, check, check_status, link_breaks, link_row, mac_ok,
    rejected_breaks,
)
from wire import chain, topics
from wire import downlink as dl
from wire.events import AlertPayload, Event, TapPayload, canonical_bytes, decode, encode, new_event_id, sign

PORT = "santos"
KEY = b"a" * 64
T0 = dt.datetime(2026, 3, 15, 4, 20, tzinfo=dt.UTC)
SIGNER = chain.new_private_key()
OTHER = chain.new_private_key()
TOPIC = topics.gate_events(PORT, "g1")


def event(seq: int, *, gate: str = "g1", port: str = PORT, payload=None, prev: str = "") -> Event:
    return Event(event_id=new_event_id(), port=port, gate_id=gate, boot_id="b", seq=seq, occurred_at=T0,
                 clock_trusted=True, mono_ns=seq, prev=prev,
                 payload=payload or TapPayload(uid=f"{seq:08X}", reader_id="r1", reader_kind="control",
                                               decision="admit", registration="1001"))


def signed_chain(n: int, signer=SIGNER) -> list[Event]:
    out, head = [], chain.GENESIS
    for seq in range(1, n + 1):
        ev, head = chain.seal(event(seq, prev=head), signer, KEY)
        out.append(ev)
    return out


HMAC_ONLY = GateKeys(KEY)
SIGNING = GateKeys(KEY, (SIGNER.public_key(),))


def reason(verdict) -> str:
    assert isinstance(verdict, DeadLetter), verdict
    return verdict.reason


def test_a_good_hmac_event_is_accepted_with_its_bytes():
    raw = encode(sign(event(1), KEY))
    verdict = check(TOPIC, raw, PORT, HMAC_ONLY)
    assert isinstance(verdict, Accepted) and verdict.raw == raw and verdict.event.seq == 1
    assert verdict.learned is None


def _forged_mac() -> bytes:
    return encode(msgspec.structs.replace(sign(event(1), KEY), mac="0" * 64))


@pytest.mark.parametrize("topic, raw, known, expected", [
    ("portgate/v1/santos/office/requests", encode(sign(event(1), KEY)), HMAC_ONLY, "not a gate events topic"),
    (topics.gate_events("rio", "g1"), encode(sign(event(1), KEY)), HMAC_ONLY, "topic is not an events topic of port santos"),
    (TOPIC, b"{not json", HMAC_ONLY, "malformed: "),
    (TOPIC, encode(sign(event(1, gate="g2"), KEY)), HMAC_ONLY, "topic/gate mismatch: event of santos/g2 on"),
    (TOPIC, encode(sign(event(1), KEY)), UNKNOWN, "unknown gate g1"),
    (TOPIC, encode(sign(event(1), KEY)), GateKeys(None, hmac_error="key of gate g1 not used: chmod 600"),
     "key of gate g1 not used: chmod 600"),
    (TOPIC, _forged_mac(), HMAC_ONLY, "bad MAC"),
    (TOPIC, encode(sign(event(1), b"b" * 64)), HMAC_ONLY, "bad MAC"),
    (TOPIC, encode(sign(event(1), KEY)), GateKeys(KEY, public_error="public key of gate g1 unreadable: x"),
     "public key of gate g1 unreadable: x"),
    (TOPIC, encode(sign(event(1), KEY)), SIGNING, "CHAIN_BREAK UNSIGNED gate g1 seq 1: "),
])
def test_each_bad_message_becomes_a_dead_letter_with_its_reason(topic, raw, known, expected):
    verdict = check(topic, raw, PORT, known)
    assert reason(verdict).startswith(expected)
    assert verdict.raw == raw


def test_an_unsupported_schema_is_malformed():
    raw = encode(sign(msgspec.structs.replace(event(1), schema=99), KEY))
    assert reason(check(TOPIC, raw, PORT, HMAC_ONLY)) == "malformed: unsupported schema 99"


def test_an_oversize_message_is_refused_before_decoding(mocker):
    decode = mocker.spy(__import__("central.ingest.check", fromlist=["decode"]), "decode")
    raw = b"x" * (MAX_MESSAGE_BYTES + 1)
    assert reason(check(TOPIC, raw, PORT, HMAC_ONLY)).startswith(f"oversize: {len(raw)} bytes")
    assert decode.call_count == 0


def test_a_signed_event_of_a_registered_key_is_accepted():
    for ev in signed_chain(3):
        assert isinstance(check(TOPIC, encode(ev), PORT, SIGNING), Accepted)


def test_an_event_forged_with_the_hmac_key_alone_is_a_bad_signature_chain_break():
    good = signed_chain(1)[0]
    edited = msgspec.structs.replace(good, payload=TapPayload(uid="FFFFFFFF", reader_id="r1", reader_kind="control",
                                                              decision="admit", registration="9999"))
    forged = chain.seal(edited, OTHER, KEY)[0]  # right MAC, signature by a key the office does not know
    verdict = check(TOPIC, encode(forged), PORT, SIGNING)
    assert reason(verdict).startswith("CHAIN_BREAK BAD_SIGNATURE gate g1 seq 1: ")
    assert verdict.seq == 1 and verdict.event_id == forged.event_id


def test_a_key_rollover_signed_by_the_registered_key_names_the_key_to_learn():
    new = OTHER.public_key()
    roll = AlertPayload(code=chain.KEY_EVENT, detail=f"public_key={chain.public_raw(new)} previous=x")
    ev = chain.seal(event(2, payload=roll, prev="1" * 64), SIGNER, KEY)[0]
    verdict = check(TOPIC, encode(ev), PORT, SIGNING)
    assert isinstance(verdict, Accepted)
    assert chain.fingerprint(verdict.learned) == chain.fingerprint(new)


def test_a_key_rollover_signed_only_by_the_new_key_is_an_unknown_key_break():
    new = OTHER.public_key()
    roll = AlertPayload(code=chain.KEY_EVENT, detail=f"public_key={chain.public_raw(new)} previous=none")
    ev = chain.seal(event(2, payload=roll, prev="1" * 64), OTHER, KEY)[0]
    assert reason(check(TOPIC, encode(ev), PORT, SIGNING)).startswith("CHAIN_BREAK UNKNOWN_KEY gate g1 seq 2")


@pytest.mark.parametrize("verified, accepted", [
    ((True,), True),
    ((False,), False),  # a verdict computed elsewhere is what counts
    ((True, True), True),  # not one verdict per key: ignored, verified here
    ((False, False), True),
])
def test_precomputed_signature_verdicts_are_used_when_they_match_the_keys(verified, accepted):
    raw = encode(signed_chain(1)[0])
    assert isinstance(check(TOPIC, raw, PORT, SIGNING, verified), Accepted) is accepted



@pytest.mark.parametrize("key_index", [0, 1])
def test_a_rollover_with_precomputed_verdicts_names_the_key_to_learn_whichever_key_signed(key_index):
    new = chain.new_private_key().public_key()
    roll = AlertPayload(code=chain.KEY_EVENT, detail=f"public_key={chain.public_raw(new)} previous=x")
    signer = (OTHER, SIGNER)[key_index]  # newest first: OTHER is the newer registered key
    ev = chain.seal(event(2, payload=roll, prev="1" * 64), signer, KEY)[0]
    known = GateKeys(KEY, (SIGNER.public_key(), OTHER.public_key()))
    verified = (key_index == 0, key_index == 1)
    verdict = check(TOPIC, encode(ev), PORT, known, verified, decode(encode(ev)))
    assert isinstance(verdict, Accepted)
    assert chain.fingerprint(verdict.learned) == chain.fingerprint(new)
    again = chain.seal(event(3, payload=AlertPayload(code=chain.KEY_EVENT, detail=f"public_key="
                                                     f"{chain.public_raw(signer.public_key())}"), prev="1" * 64), signer, KEY)[0]
    assert check(TOPIC, encode(again), PORT, known, verified).learned is None  # the key that signed: nothing new


@pytest.mark.parametrize("body", ["canonical", "other bytes"])
def test_the_mac_over_given_canonical_bytes_holds_and_other_bytes_fall_back_to_the_check(body):
    ev = signed_chain(1)[0]
    raw = encode(ev)
    given = canonical_bytes(ev) if body == "canonical" else b"not the canonical bytes"
    assert mac_ok(ev, KEY, raw, given)  # a wrong body never makes a good MAC fail
    forged = msgspec.structs.replace(ev, mac="0" * 64)
    assert not mac_ok(forged, KEY, encode(forged), canonical_bytes(forged))  # nor a bad one hold
    verdict = check(TOPIC, encode(forged), PORT, SIGNING, (True,), decode(encode(forged)), None, given)
    assert reason(verdict) == "bad MAC"

# -- statuses ------------------------------------------------------------------------------------

STATUS_TOPIC = topics.gate_status(PORT, "g1")


def status(sent_seq, *, gate="g1", key=KEY, reason="progress") -> bytes:
    st = dl.GateStatus(port=PORT, gate_id=gate, boot_id="b", state="online", reason=reason, at=T0, sent_seq=sent_seq)
    return dl.encode(dl.sign_status(st, key) if key else st)


@pytest.mark.parametrize("raw, known, expected", [
    (status(2**63), HMAC_ONLY, "sent_seq 9223372036854775808 out of range"),
    (status(-1), HMAC_ONLY, "sent_seq -1 out of range"),
    (status(5, key=None), HMAC_ONLY, "unsigned (a gate of an older release?)"),
    (status(5, key=b"b" * 64), HMAC_ONLY, "bad MAC"),
    (status(5, gate="g2"), HMAC_ONLY, "status of santos/g2 on"),
    (status(5), UNKNOWN, "unknown gate g1"),
    (status(5), GateKeys(None, hmac_error="key of gate g1 unreadable"), "key of gate g1 unreadable"),
    (b"junk", HMAC_ONLY, ""),
])
def test_a_status_that_cannot_be_trusted_is_a_dead_letter(raw, known, expected):
    verdict = check_status(STATUS_TOPIC, raw, PORT, known)
    assert reason(verdict).startswith(f"bad status: {STATUS_TOPIC}: {expected}") and verdict.raw == raw


def test_a_signed_status_gives_its_claim():
    verdict = check_status(STATUS_TOPIC, status(2**63 - 1), PORT, HMAC_ONLY)
    assert isinstance(verdict, dl.GateStatus) and verdict.sent_seq == 2**63 - 1


# -- links ---------------------------------------------------------------------------------------

CH = signed_chain(5)


def rows(*seqs, events=CH) -> dict:
    return {("g1", s): link_row(events[s - 1]) for s in seqs}


def kinds(breaks) -> list[tuple[str, int, int]]:
    return [(b.kind, b.seq_from, b.seq_to) for b in breaks]


@pytest.mark.parametrize("new, held, fresh, breaks", [
    ((1, 2, 3), (), [1, 2, 3], []),  # in order
    ((3, 2), (1,), [3, 2], []),  # reordered: 3 before 2, each link checked once both are there
    ((2,), (1, 2), [], []),  # a duplicate (same event again): nothing new, no break
    ((4,), (2,), [4], []),  # a gap: nothing to compare yet
    ((5,), (), [5], []),
])
def test_links_of_a_good_chain_in_any_order_show_no_break(new, held, fresh, breaks):
    got_fresh, got = link_breaks(rows(*new), rows(*held))
    assert [r["seq"] for r in got_fresh] == fresh
    assert kinds(got) == breaks


def test_an_edited_event_breaks_both_of_its_links():
    other = signed_chain(5, OTHER)  # another journal: same seqs, other hashes
    new = {("g1", 3): link_row(other[2])}
    _fresh, got = link_breaks(new, rows(2, 4))
    assert kinds(got) == [("PREV_MISMATCH", 2, 3), ("PREV_MISMATCH", 3, 4)]


def test_a_second_event_with_a_held_seq_is_a_fork():
    other = signed_chain(2, OTHER)
    fresh, got = link_breaks({("g1", 2): link_row(other[1])}, rows(1, 2))
    assert fresh == [] and kinds(got) == [("FORKED", 2, 2)]
    assert other[1].event_id in got[0].detail and CH[1].event_id in got[0].detail


def test_a_deleted_event_shows_when_its_successor_meets_the_one_before():
    # seq 3 never arrives; the gate's seq 4 names the hash of 3 (not of 2): a break only once 3 is
    # replaced by another event, never by the hole alone (the gap repair asks for it)
    _fresh, got = link_breaks(rows(4), rows(2))
    assert got == []


def test_a_segment_start_is_not_compared_with_the_event_before_it():
    seg = AlertPayload(code=chain.SEGMENT_EVENT, detail="resumed_at=3 lost_after=1 last_head_seq=1 last_head=x")
    ev = chain.seal(event(3, payload=seg, prev="f" * 64), SIGNER, KEY)[0]
    _fresh, got = link_breaks({("g1", 3): link_row(ev)}, rows(2))
    assert got == []


def test_chain_dead_letters_become_breaks_and_others_do_not():
    dead = [DeadLetter(TOPIC, "CHAIN_BREAK BAD_SIGNATURE gate g1 seq 7: x", b"", "g1", "e7", 7),
            DeadLetter(TOPIC, "bad MAC", b"", "g1", "e8")]
    assert kinds(rejected_breaks(dead)) == [("BAD_SIGNATURE", 7, 7)]
