"""Chain-covered verification of a batch's signed events (pure; docs/evidence.md "What ingest checks").

Every signed event's ``prev`` is the SHA-256 of the canonical bytes of the same gate's previous
event, and its signature covers its own canonical bytes, ``prev`` included. So one valid signature
on event N authenticates, through the hash links, the canonical bytes (the content) of every
earlier event whose link to its successor holds. ``runs`` cuts a batch into per-gate runs of
consecutive seqs whose links hold; ``chain_verdicts`` verifies ONE signature per run, the last
event's, and gives its verdict to every event of the run. A run is cut (each side verified on its
own) at a seq gap or a link mismatch, before and after a ``SIGNING_KEY`` event (which key signed
stays exact at a rollover), before a ``STORE_QUARANTINED`` segment start (its ``prev`` names the old
head), at a seq present twice in the batch, and at an event that does not decode or carries no
hex signature (not part of any run: verdict None, the writer's check decides). The last event of a
gate in the batch ends its run. If the run's last signature holds for no key, every event of the
run is verified directly, so an edited or forged event is named exactly as by a per-event check.

Not verified here: the ``sig`` bytes of an event inside a run (its content is proven by its
successor's signature; ``portgate evidence verify`` checks every event's own signature).

Used by the helper processes (``central.ingest.verify.verify_jobs``) and by the writer when it
verifies a batch itself (``central.ingest.event_store.batch_verdicts``). No I/O, no clock.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from wire.chain import KEY_EVENT, SEGMENT_EVENT
from wire.events import AlertPayload, Event, canonical_bytes

#: One job: the decoded event (None: it does not decode) and the raw 32-byte public keys of its
#: gate, newest first. One verdict: one bool per key (that key's signature holds) and the hex
#: SHA-256 of the event's canonical bytes (``wire.chain.event_hash``: its ``event_links`` hash).
Job = tuple[Event | None, Sequence[bytes]]
Verdict = tuple[list[bool], str]
Verify = Callable[[bytes, bytes, bytes], bool]  # (signature, message, raw public key) -> holds

_publics: dict[bytes, Ed25519PublicKey | None] = {}  # raw public key -> its object (None: not a key)


def ed25519_ok(sig: bytes, body: bytes, raw_key: bytes) -> bool:
    """True if ``sig`` is the Ed25519 signature of ``body`` by the raw 32-byte ``raw_key`` (a
    malformed key or signature is False; key objects are cached per raw key)."""
    pub = _publics.get(raw_key, False)
    if pub is False:
        if len(_publics) > 10_000:
            _publics.clear()
        try:
            pub = Ed25519PublicKey.from_public_bytes(raw_key)
        except ValueError:
            pub = None
        _publics[raw_key] = pub
    if pub is None:
        return False
    try:
        pub.verify(sig, body)
        return True
    except (InvalidSignature, ValueError):
        return False


def raw_keys(pubs: Sequence[Ed25519PublicKey]) -> list[bytes]:
    """The raw 32 bytes of each of ``pubs`` (oldest first, as a ``KeyRing`` holds them), newest first."""
    return [k.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw) for k in reversed(pubs)]



def _sig(event: Event | None) -> bytes | None:
    if event is None or not event.sig:
        return None
    try:
        return bytes.fromhex(event.sig)
    except ValueError:
        return None


def runs(jobs: Sequence[Job]) -> tuple[list[list[int]], dict[int, bytes], dict[int, str]]:
    """``(runs, bodies, digests)``: the positions in ``jobs`` of each run, in seq order (the last
    one is the run's signed tail); position -> canonical bytes, and -> their hex SHA-256, of every
    event in a run. Events that do not decode or carry no signature are in no run. Groups: same
    port, gate and key list; within one, the rules of the module docstring."""
    groups: dict[tuple, list[tuple[int, int, Event]]] = {}
    held: dict[int, tuple] = {}  # id(key list) -> the list as a tuple (the lists live in ``jobs``)
    for i, (event, keys) in enumerate(jobs):
        if event is None or not event.sig:  # (a decoded sig is 128 hex digits or empty)
            continue
        kt = held.get(id(keys))
        if kt is None:
            kt = held[id(keys)] = tuple(keys)
        group = (event.port, event.gate_id, kt)
        members = groups.get(group)
        if members is None:
            members = groups[group] = []
        members.append((event.seq, i, event))
    out: list[list[int]] = []
    bodies: dict[int, bytes] = {}
    digests: dict[int, str] = {}
    sha256 = hashlib.sha256
    for members in groups.values():
        members.sort()  # by seq, then position (positions differ: no event is compared)
        twice = {s for (s, _i, _e), (t, _j, _f) in zip(members, members[1:]) if s == t}
        run: list[int] = []
        last_seq, last_digest = 0, ""
        for seq, i, event in members:
            body = bodies[i] = canonical_bytes(event)
            digest = digests[i] = sha256(body).hexdigest()
            p = event.payload
            code = p.code if isinstance(p, AlertPayload) else None
            alone = code == KEY_EVENT or seq in twice
            if run and (alone or seq != last_seq + 1 or event.prev != last_digest or code == SEGMENT_EVENT):
                out.append(run)  # not linked to the run before it
                run = []
            run.append(i)
            if alone:
                out.append(run)
                run = []
            last_seq, last_digest = seq, digest
        if run:
            out.append(run)
    return out, bodies, digests


def chain_verdicts(jobs: Sequence[Job], verify: Verify = ed25519_ok) -> list[Verdict | None]:
    """One verdict per job (see ``Job``): for an event in a run whose last signature holds for
    some key, that last event's bools; for the events of a run whose last signature holds for
    none, each its own signature's; None for an event in no run. ``verify``: the Ed25519 check
    (``ed25519_ok``)."""
    return batch_chain(jobs, verify)[0]


def batch_chain(jobs: Sequence[Job], verify: Verify = ed25519_ok) -> tuple[list[Verdict | None], dict[int, bytes]]:
    """``(chain_verdicts(jobs, verify), bodies)``; ``bodies``: position -> canonical bytes
    (``wire.events.canonical_bytes``) of every event in a run, computed once for the hash and the
    signature, and what its MAC covers too (``central.ingest.check.mac_ok``)."""
    out: list[Verdict | None] = [None] * len(jobs)
    found, bodies, digests = runs(jobs)
    for run in found:
        tail = run[-1]
        keys = jobs[tail][1]
        bools = [verify(_sig(jobs[tail][0]), bodies[tail], k) for k in keys]
        covered = any(bools) or len(run) == 1
        for i in run:
            if not covered and i != tail:
                own = [verify(_sig(jobs[i][0]), bodies[i], k) for k in keys]
            else:
                own = bools
            out[i] = (own, digests[i])
    return out, bodies
