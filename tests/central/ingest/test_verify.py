"""The signature verifier ahead of the writer (central/ingest/verify.py): real helper processes,
real key files; its verdicts are chain-covered (central/ingest/runs.py: one signature per run of
linked events, an edited event named as by ``wire.chain.signature_ok``) and a failure only means
the writer verifies itself."""

from __future__ import annotations

import os
import signal
import time

import msgspec
import pytest
import structlog

from central.ingest import event_store as ledger
from central.ingest.check import Accepted, DeadLetter
from central.ingest.keys import KeyRing, add_gate, register_public_key
from central.ingest.runs import raw_keys
from central.ingest.verify import Verifier, verify_jobs
from portgate.config import read_secret
from tests.central.ingest.test_check import PORT, event, signed_chain
from tests.central.ingest.test_check import SIGNER as check_signer
from wire import chain, topics
from wire.events import canonical_bytes, decode, encode, sign

SIGNER = chain.new_private_key()


@pytest.fixture
def ring(tmp_path):
    keys = tmp_path / "keys"
    for gate in ("g1", "g2"):
        add_gate(keys, gate)
    register_public_key(keys, "g1", chain.public_pem(SIGNER.public_key()))
    return KeyRing(keys, recheck_s=3600)


def ready(v: Verifier) -> Verifier:
    """``v`` once every helper has said READY (a fresh interpreter: 0.2-0.3 s)."""
    deadline = time.monotonic() + 60
    while not all(h.poll_ready() for h in v._helpers):
        assert time.monotonic() < deadline, "the helper never said READY"
        time.sleep(0.01)
    return v


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
    v = ready(Verifier(ring, PORT, 1).start())
    sent = []
    try:
        send = v._helpers[0].send
        v._helpers[0].send = lambda jobs: (sent.append(jobs), send(jobs))
        found, decoded = v.verdicts(v.submit(batch))
    finally:
        v.close()
    pubs = ring.public_keys("g1")
    assert [None if f is None else f[1] for f in found] == [(True,), (False,), None, None, None, None, (True,)]
    assert all(f is None or f[0] is pubs for f in found)
    # the signing gate's events decoded once, here: the writer takes them with their canonical bytes
    assert [d is not None for d in decoded] == [True, True, False, True, False, False, True]
    assert all(f is None or f[3] == canonical_bytes(d) for f, d in zip(found, decoded))
    # the helper is sent the runs' last signatures only: [good 1, forged 2] and [good 3]
    assert [len(jobs) for jobs in sent] == [2]
    verdicts = [ledger.check(t, raw, PORT, ring, f, None, d) for (t, raw), f, d in zip(batch, found, decoded)]
    alone = [ledger.check(t, raw, PORT, ring) for t, raw in batch]
    assert [type(a) for a in verdicts] == [type(a) for a in alone]
    assert [getattr(a, "reason", None) for a in verdicts] == [getattr(a, "reason", None) for a in alone]
    assert verdicts[1].reason.startswith("CHAIN_BREAK BAD_SIGNATURE gate g1 seq 2")
    assert verdicts[0].event is decoded[0] and verdicts[6].event is decoded[6]  # not decoded again


def test_a_verdict_counts_only_for_the_key_list_it_was_computed_with(ring):
    t, raw = items(ring)[1]  # a forgery
    other_list = list(ring.public_keys("g1"))
    digest = chain.event_hash(decode(raw))
    assert isinstance(ledger.check(t, raw, PORT, ring, (other_list, (True,), digest)), DeadLetter)
    ok = ledger.check(t, raw, PORT, ring, (ring.public_keys("g1"), (True,), digest))  # what the list says
    assert isinstance(ok, Accepted) and ok.digest == digest


def test_a_helper_killed_has_its_batch_verified_in_the_writer_and_the_next_batch_a_new_helper(ring):
    batch = items(ring)
    v = ready(Verifier(ring, PORT, 1).start())
    try:
        first = v._helpers[0]
        pending = v.submit(batch)
        first.proc.kill()
        first.proc.wait()
        with structlog.testing.capture_logs() as logs:
            got = v.verdicts(pending)  # answered before the kill, or verified here
            if v.failures == 0:
                got = v.verdicts(v.submit(batch))  # a write to the dead helper: verified here
            after = v.verdicts(v.submit(batch))
        assert v.failures == 1 and v._helpers[0] is not first
        assert [e["event"] for e in logs].count("ingest.verifier_failed") == 1
        for found, _decoded in (got, after):
            assert [None if f is None else f[1] for f in found] == [(True,), (False,), None, None, None, None,
                                                                     (True,)]
    finally:
        v.close()
    assert first.proc.poll() is not None


def test_a_helper_answer_that_does_not_fit_is_a_failure_and_the_writer_verifies(ring):
    batch = items(ring)
    v = ready(Verifier(ring, PORT, 1).start())
    try:
        v._helpers[0].answer = lambda n: [[True, True]] * n  # two bools for a gate of one key
        with structlog.testing.capture_logs() as logs:
            found, _decoded = v.verdicts(v.submit(batch))
        assert v.failures == 1 and [e["event"] for e in logs].count("ingest.verifier_failed") == 1
        assert [None if f is None else f[1] for f in found] == [(True,), (False,), None, None, None, None, (True,)]
    finally:
        v.close()


def test_a_batch_that_comes_while_the_helper_starts_is_verified_by_the_writer_without_waiting(ring):
    """A writer started over a backlog commits at once: a helper still importing (here: stopped
    before it could say READY) is not waited for, and is used from its READY on."""
    batch = items(ring)
    v = Verifier(ring, PORT, 1).start()
    helper = v._helpers[0]
    os.kill(helper.proc.pid, signal.SIGSTOP)
    try:
        pending = v.submit(batch)
        assert pending[2] is None  # not handed to the stopped helper
        found, _decoded = v.verdicts(pending)
        assert [None if f is None else f[1] for f in found] == [(True,), (False,), None, None, None, None, (True,)]
        os.kill(helper.proc.pid, signal.SIGCONT)
        ready(v)
        pending = v.submit(batch)
        assert pending[2] is helper and v.failures == 0
        assert v.verdicts(pending)[0] == found
    finally:
        os.kill(helper.proc.pid, signal.SIGCONT)
        v.close()


def test_a_helper_that_says_anything_but_ready_is_a_failure_and_replaced(ring):
    batch = items(ring)
    v = Verifier(ring, PORT, 1).start()
    try:
        first = v._helpers[0]
        first.proc.kill()  # it ends before it could say READY
        first.proc.wait()
        with structlog.testing.capture_logs() as logs:
            found, _decoded = v.verdicts(v.submit(batch))  # verified here
        assert v.failures == 1 and v._helpers[0] is not first
        assert [e["event"] for e in logs].count("ingest.verifier_failed") == 1
        assert [None if f is None else f[1] for f in found] == [(True,), (False,), None, None, None, None, (True,)]
    finally:
        v.close()


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
        found, _decoded = v.verdicts(v.submit(items(ring)))
        assert found[0][1] == (True,) and len(v._helpers) == 1
    finally:
        v.close()


def test_no_helpers_means_the_writer_verifies(ring):
    v = Verifier(ring, PORT, 0).start()
    assert v.submit(items(ring)) is None and v.verdicts(None) is None
    v.close()


def test_the_helper_function_refuses_nothing_it_cannot_read():
    ev = signed_chain(1)[0]
    body, sig = canonical_bytes(ev), bytes.fromhex(ev.sig)
    good = raw_keys([check_signer.public_key()])[0]
    assert verify_jobs([(sig, body, [b"short", good]), (b"", body, [good]), (b"x" * 64, body, [good]),
                        (sig, body + b" ", [good])]) == [[False, True], [False], [False], [False]]


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
