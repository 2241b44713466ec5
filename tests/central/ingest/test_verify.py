"""The signature verifier ahead of the writer (central/ingest/verify.py): real helper processes,
real key files; its verdicts are chain-covered (central/ingest/runs.py: one signature per run of
linked events, an edited event named as by ``wire.chain.signature_ok``) and a failure only means
the writer verifies itself."""

from __future__ import annotations

import msgspec
import pytest
import structlog

from central.ingest import event_store as ledger
from central.ingest.check import Accepted, DeadLetter
from central.ingest.keys import KeyRing, add_gate, register_public_key
from central.ingest.verify import Verifier, verify_jobs
from portgate.config import read_secret
from tests.central.ingest.test_check import PORT, event, signed_chain
from wire import chain, topics
from wire.events import decode, encode, sign

SIGNER = chain.new_private_key()


@pytest.fixture
def ring(tmp_path):
    keys = tmp_path / "keys"
    for gate in ("g1", "g2"):
        add_gate(keys, gate)
    register_public_key(keys, "g1", chain.public_pem(SIGNER.public_key()))
    return KeyRing(keys, recheck_s=3600)


def items(ring):
    key = read_secret(ring.keys_dir / "g1.key")
    good = [chain.seal(msgspec.structs.replace(e, mac=""), SIGNER, key)[0] for e in signed_chain(3)]
    forged = chain.seal(msgspec.structs.replace(good[1], mono_ns=999), chain.new_private_key(), key)[0]  # edited
    t1, t2 = topics.gate_events(PORT, "g1"), topics.gate_events(PORT, "g2")
    return [(t1, encode(good[0])), (t1, encode(forged)), (t1, b"junk"), (t1, encode(sign(event(9), key))),
            (t2, encode(sign(event(1, gate="g2"), read_secret(ring.keys_dir / "g2.key")))),
            ("not/a/topic", b"x"), (t1, encode(good[2]))]


def test_the_verdicts_are_the_signature_check_of_each_signed_event(ring):
    batch = items(ring)
    v = Verifier(ring, PORT, 1).start()
    try:
        found = v.verdicts(v.submit(batch))
    finally:
        v.close()
    pubs = ring.public_keys("g1")
    assert [None if f is None else f[1] for f in found] == [(True,), (False,), None, None, None, None, (True,)]
    assert all(f is None or f[0] is pubs for f in found)
    verdicts = [ledger.check(t, raw, PORT, ring, f) for (t, raw), f in zip(batch, found)]
    alone = [ledger.check(t, raw, PORT, ring) for t, raw in batch]
    assert [type(a) for a in verdicts] == [type(a) for a in alone]
    assert [getattr(a, "reason", None) for a in verdicts] == [getattr(a, "reason", None) for a in alone]
    assert verdicts[1].reason.startswith("CHAIN_BREAK BAD_SIGNATURE gate g1 seq 2")


def test_a_verdict_counts_only_for_the_key_list_it_was_computed_with(ring):
    t, raw = items(ring)[1]  # a forgery
    other_list = list(ring.public_keys("g1"))
    digest = chain.event_hash(decode(raw))
    assert isinstance(ledger.check(t, raw, PORT, ring, (other_list, (True,), digest)), DeadLetter)
    ok = ledger.check(t, raw, PORT, ring, (ring.public_keys("g1"), (True,), digest))  # what the list says
    assert isinstance(ok, Accepted) and ok.digest == digest


def test_a_helper_killed_gives_no_verdicts_and_the_next_batch_has_a_new_one(ring):
    batch = items(ring)
    v = Verifier(ring, PORT, 1).start()
    try:
        first = v._helpers[0]
        pending = v.submit(batch)
        first.proc.kill()
        first.proc.wait()
        with structlog.testing.capture_logs() as logs:
            dead = v.verdicts(pending)  # answered before the kill, or the end of its output
            if dead is not None:
                dead = v.verdicts(v.submit(batch))  # a write to the dead helper: no verdicts
            after = v.verdicts(v.submit(batch))
        assert dead is None and v.failures == 1 and v._helpers[0] is not first
        assert [e["event"] for e in logs].count("ingest.verifier_failed") == 1
        assert after is not None and after[0][1] == (True,) and after[1][1] == (False,)
    finally:
        v.close()
    assert first.proc.poll() is not None


def test_helpers_start_only_for_an_office_with_signing_gates(tmp_path, ring):
    keys = tmp_path / "plain"
    add_gate(keys, "g1")
    plain = Verifier(KeyRing(keys), PORT, 1).start()
    assert plain._helpers == []  # no .pub file: nothing started
    plain.close()
    signing = Verifier(ring, PORT, 1).start()
    try:
        assert len(signing._helpers) == 1
    finally:
        signing.close()
    assert signing.submit(items(ring)) is None  # closed: nothing started again


def test_a_gate_registered_later_starts_the_helper_at_its_first_signed_event(tmp_path):
    keys = tmp_path / "later"
    add_gate(keys, "g1")
    add_gate(keys, "g2")
    ring = KeyRing(keys, recheck_s=0)
    v = Verifier(ring, PORT, 1).start()
    try:
        assert v._helpers == []
        register_public_key(keys, "g1", chain.public_pem(SIGNER.public_key()))
        found = v.verdicts(v.submit(items(ring)))
        assert found[0][1] == (True,) and len(v._helpers) == 1
    finally:
        v.close()


def test_no_helpers_means_the_writer_verifies(ring):
    v = Verifier(ring, PORT, 0).start()
    assert v.submit(items(ring)) is None and v.verdicts(None) is None
    v.close()


def test_the_helper_function_refuses_nothing_it_cannot_read():
    ev = signed_chain(1)[0]
    assert verify_jobs([(b"junk", [b"k" * 32]), (encode(ev), [b"short"])]) == [None, ([False], chain.event_hash(ev))]


def test_a_rollover_in_a_batch_is_seen_by_the_next_event_of_the_same_batch(ring):
    """The batch's key memo drops a gate's keys when an event registers a new one."""
    key = read_secret(ring.keys_dir / "g1.key")
    new = chain.new_private_key()
    from wire.events import AlertPayload

    roll = AlertPayload(code=chain.KEY_EVENT, detail=f"public_key={chain.public_raw(new.public_key())} previous=x")
    first = chain.seal(event(1, payload=roll, prev=chain.GENESIS), SIGNER, key)[0]
    second = chain.seal(event(2, prev=chain.event_hash(first)), new, key)[0]
    t = topics.gate_events(PORT, "g1")
    memo: dict = {}
    verdicts = [ledger.check(t, encode(e), PORT, ring, None, memo) for e in (first, second)]
    assert [type(v) for v in verdicts] == [Accepted, Accepted]
    assert len(ring.public_keys("g1")) == 2
