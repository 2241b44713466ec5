"""Chain-covered verification (central/ingest/runs.py), in memory with real Ed25519 keys: which
runs a batch is cut into, one signature verified per run, and a bad run's tail falls back to a
per-event check that names the bad event."""

from __future__ import annotations

import msgspec
import pytest

from central.ingest.runs import batch_chain, chain_verdicts, ed25519_ok, raw_keys, runs
from tests.central.ingest.test_check import KEY, SIGNER, event
from wire import chain
from wire.events import AlertPayload, TapPayload, canonical_bytes


def bools(verdicts):
    return [None if v is None else v[0] for v in verdicts]

OTHER = chain.new_private_key()
KEYS = raw_keys([SIGNER.public_key()])


def sealed(seq, prev, signer=SIGNER, **kw):
    return chain.seal(event(seq, prev=prev, **kw), signer, KEY)


def gate_chain(n, first=1, head=chain.GENESIS, **kw):
    out = []
    for seq in range(first, first + n):
        ev, head = sealed(seq, head, **kw)
        out.append(ev)
    return out


def alert(code, detail=""):
    return AlertPayload(code=code, detail=detail)


def seqs(jobs, found):
    return [[jobs[i][0].seq for i in run] for run in found]


class Counting:
    """The real Ed25519 check, counting its calls."""

    def __init__(self):
        self.calls = 0

    def __call__(self, sig, body, key):
        self.calls += 1
        return ed25519_ok(sig, body, key)


def test_a_linked_batch_is_one_run_and_one_verification():
    evs = gate_chain(6)
    jobs = [(e, KEYS) for e in reversed(evs)]  # arrival order is free: runs follow seq
    found = runs(jobs)[0]
    assert seqs(jobs, found) == [[1, 2, 3, 4, 5, 6]]
    count = Counting()
    verdicts = chain_verdicts(jobs, count)
    assert bools(verdicts) == [[True]] * 6
    assert count.calls == 1
    assert [v[1] for v in verdicts] == [chain.event_hash(e) for e in reversed(evs)]  # the link hashes


@pytest.mark.parametrize("cut, expected", [
    ("gap", [[1, 2], [4, 5]]),
    ("mismatch", [[1, 2], [3], [4, 5]]),  # its prev changed: so did its hash
    ("twice", [[1], [2], [2], [3, 4, 5]]),
    ("undecodable", [[1], [3, 4, 5]]),
    ("unsigned", [[1, 2], [4, 5]]),
])
def test_runs_are_cut_at_a_gap_a_mismatch_a_seq_present_twice_and_an_event_without_signature(cut, expected):
    evs = gate_chain(5)
    jobs = [(e, KEYS) for e in evs]
    if cut == "gap":
        del jobs[2]
    elif cut == "mismatch":
        jobs[2] = (msgspec.structs.replace(evs[2], prev="ab" * 32), KEYS)
    elif cut == "twice":
        jobs.insert(2, (sealed(2, chain.event_hash(evs[0]))[0], KEYS))  # a second seq 2 (a fork)
    elif cut == "undecodable":
        jobs[1] = (None, KEYS)
    elif cut == "unsigned":
        jobs[2] = (msgspec.structs.replace(evs[2], sig=""), KEYS)
    found = runs(jobs)[0]
    assert seqs(jobs, found) == expected


def test_a_key_rollover_is_verified_alone_and_ends_the_run_before_it():
    first = gate_chain(3)
    roll, head = sealed(4, chain.event_hash(first[-1]),
                        payload=alert(chain.KEY_EVENT, f"public_key={chain.public_raw(OTHER.public_key())}"))
    after = gate_chain(3, first=5, head=head, signer=OTHER)
    keys = raw_keys([SIGNER.public_key(), OTHER.public_key()])  # newest first: OTHER, SIGNER
    jobs = [(e, keys) for e in first + [roll] + after]
    found = runs(jobs)[0]
    assert seqs(jobs, found) == [[1, 2, 3], [4], [5, 6, 7]]
    count = Counting()
    verdicts = bools(chain_verdicts(jobs, count))
    assert verdicts[:4] == [[False, True]] * 4  # signed by the old key: which key stays exact
    assert verdicts[4:] == [[True, False]] * 3
    assert count.calls == 3 * 2  # one tail per run, each against both keys


def test_a_segment_start_opens_a_run_of_its_own():
    evs = gate_chain(3)
    seg, head = sealed(4, "cd" * 32, payload=alert(chain.SEGMENT_EVENT,
                                                   "resumed_at=4 lost_after=3 last_head_seq=3 last_head=" + "cd" * 32))
    rest = gate_chain(2, first=5, head=head)
    jobs = [(e, KEYS) for e in evs + [seg] + rest]
    found = runs(jobs)[0]
    assert seqs(jobs, found) == [[1, 2, 3], [4, 5, 6]]
    assert bools(chain_verdicts(jobs)) == [[True]] * 6


def test_gates_and_key_lists_make_separate_runs():
    a = gate_chain(3)
    b = gate_chain(3, gate="g2")
    jobs = [x for pair in zip(a, b) for x in ((pair[0], KEYS), (pair[1], KEYS))]
    found = runs(jobs)[0]
    assert sorted(seqs(jobs, found)) == [[1, 2, 3], [1, 2, 3]]
    other = raw_keys([OTHER.public_key()])
    mixed = [(a[0], KEYS), (a[1], other), (a[2], KEYS)]
    assert sorted(seqs(mixed, runs(mixed)[0])) == [[1], [2], [3]]  # 1 and 3 are not consecutive


def test_an_invalid_tail_falls_back_to_each_event_and_names_the_bad_one():
    evs = gate_chain(5)
    # event 3's content edited and the chain re-linked after it, the new tail signed with the HMAC key's
    # holder's own Ed25519 key: every link holds, only signatures can tell
    forged_tail = gate_chain(3, first=3, head=chain.event_hash(evs[1]), signer=OTHER)
    jobs = [(e, KEYS) for e in evs[:2] + forged_tail]
    assert seqs(jobs, runs(jobs)[0]) == [[1, 2, 3, 4, 5]]
    count = Counting()
    assert bools(chain_verdicts(jobs, count)) == [[True], [True], [False], [False], [False]]
    assert count.calls == 5


def test_an_edited_inner_event_breaks_its_link_and_is_verified_alone():
    evs = gate_chain(5)
    edited = msgspec.structs.replace(evs[2], payload=TapPayload(uid="FFFFFFFF", reader_id="r1",
                                                                reader_kind="control", decision="admit"))
    jobs = [(e, KEYS) for e in evs[:2] + [edited] + evs[3:]]
    found = runs(jobs)[0]
    assert seqs(jobs, found) == [[1, 2, 3], [4, 5]]
    verdicts = bools(chain_verdicts(jobs))
    assert verdicts == [[True], [True], [False], [True], [True]]  # named: seq 3 only


def test_an_inner_event_whose_sig_alone_is_altered_is_covered_by_its_successor():
    evs = gate_chain(3)
    inner = msgspec.structs.replace(evs[1], sig="00" * 64)  # content untouched
    jobs = [(evs[0], KEYS), (inner, KEYS), (evs[2], KEYS)]
    assert bools(chain_verdicts(jobs)) == [[True]] * 3  # not checked at ingest (docs/evidence.md)
    alone = [(inner, KEYS)]
    assert bools(chain_verdicts(alone)) == [[False]]  # as a run's tail it is checked


def test_no_signature_no_decode_gives_no_verdict():
    ev = gate_chain(1)[0]
    assert bools(chain_verdicts([(None, KEYS), (msgspec.structs.replace(ev, sig=""), KEYS), (ev, KEYS)])) == [
        None, None, [True]]
    assert ed25519_ok(b"x", b"y", b"short") is False


def test_batch_chain_gives_the_verdicts_and_each_runs_canonical_bytes():
    evs = gate_chain(4)
    edited = msgspec.structs.replace(evs[1], payload=TapPayload(uid="FF", reader_id="r1", reader_kind="control",
                                                                decision="admit"))
    jobs = [(e, KEYS) for e in [evs[0], edited, evs[2], evs[3]]] + [(None, KEYS)]
    got, bodies = batch_chain(jobs)
    assert got == chain_verdicts(jobs)
    assert bools(got) == [[True], [False], [True], [True], None]
    assert bodies == {i: canonical_bytes(e) for i, (e, _k) in enumerate(jobs[:4])}  # what the MAC covers
