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

The steps, for a batch of ``(topic, raw)``: ``prepare_batch`` (decode the signing gates' events
once, ``runs``), ``tail_checks`` (one signature per run: what the helper processes verify,
``central.ingest.verify``), ``check_all`` (the Ed25519 checks), ``finish_batch``/``cover`` (the
verdict of every event; a failed run verified event by event). The writer process runs them all
when it verifies a batch itself (``central.ingest.event_store.batch_verdicts``). No I/O, no clock.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Sequence

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from central.ingest.check import MAX_MESSAGE_BYTES
from portgate.errors import BadInput
from wire.chain import KEY_EVENT, SEGMENT_EVENT
from wire.events import AlertPayload, Event, canonical_bytes, decode

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
    found, bodies, digests = runs(jobs)
    tails = check_all(tail_checks(jobs, found, bodies), verify)
    return cover(jobs, found, bodies, digests, tails, verify), bodies


#: One signature to verify: (signature, signed bytes, raw public keys newest first).
Check = tuple[bytes, bytes, Sequence[bytes]]


def tail_checks(jobs: Sequence[Job], found: list[list[int]], bodies: dict[int, bytes]) -> list[Check]:
    """One ``Check`` per run of ``runs(jobs)`` (``found``, ``bodies``): its last event's signature
    (empty if not hex) over its canonical bytes, for its keys. What a helper process verifies
    (central/ingest/verify.py): a few hundred bytes per run instead of every event."""
    out = []
    for run in found:
        tail = run[-1]
        event, keys = jobs[tail]
        out.append((_sig(event) or b"", bodies[tail], keys))
    return out


def check_all(checks: Sequence[Check], verify: Verify = ed25519_ok) -> list[list[bool]]:
    """One bool per key of each check: ``verify(signature, body, key)``."""
    return [[verify(sig, body, k) for k in keys] for sig, body, keys in checks]


def cover(jobs: Sequence[Job], found: list[list[int]], bodies: dict[int, bytes], digests: dict[int, str],
          tails: Sequence[Sequence[bool]], verify: Verify = ed25519_ok) -> list[Verdict | None]:
    """``chain_verdicts`` from ``runs(jobs)`` (``found``, ``bodies``, ``digests``) and the verdicts of
    their ``tail_checks`` (``tails``, one bool list per run, in order): a run whose tail holds for
    some key gives those bools to all its events; a run of several events whose tail holds for none
    has each other event verified here (``verify``, its own signature), so a bad event is named
    exactly. Raises ``ValueError`` if ``tails`` does not have one entry per run."""
    if len(tails) != len(found):
        raise ValueError(f"{len(tails)} tail verdicts for {len(found)} runs")
    out: list[Verdict | None] = [None] * len(jobs)
    for run, bools in zip(found, tails):
        tail = run[-1]
        keys = jobs[tail][1]
        if len(bools) != len(keys):
            raise ValueError(f"{len(bools)} tail verdicts for {len(keys)} keys")
        covered = any(bools) or len(run) == 1
        for i in run:
            if not covered and i != tail:
                own = [verify(_sig(jobs[i][0]), bodies[i], k) for k in keys]
            else:
                own = bools
            out[i] = (own, digests[i])
    return out


@dataclasses.dataclass(frozen=True, slots=True)
class Prepared:
    """A batch made ready for its signatures to be verified (``prepare_batch``): ``decoded``: per
    item, the decoded event (None: not decoded, not a signing gate's event or malformed); per job
    (a decoded event of a signing gate), ``slots`` its item position and key list, ``jobs`` its
    ``central.ingest.runs.Job``; ``found``, ``bodies``, ``digests``: ``runs(jobs)``."""

    decoded: list
    slots: list[tuple[int, Sequence]]
    jobs: list
    found: list[list[int]]
    bodies: dict[int, bytes]
    digests: dict[int, str]

    def tail_checks(self) -> list:
        """The signatures to verify: one per run (``central.ingest.runs.tail_checks``)."""
        return tail_checks(self.jobs, self.found, self.bodies)


def prepare_batch(items: Sequence[tuple[str, bytes]], keys_of) -> Prepared:
    """Decode the events of ``items`` (``(topic, raw)``) whose topic's gate has public keys and cut
    them into chain runs (canonical bytes and hashes computed once). ``keys_of(topic)``: ``(key
    list, raw keys newest first)`` of the topic's gate, or ``()`` (not verified: not decoded
    here); called once per topic. Oversize messages and those that do not decode are left to
    ``central.ingest.check.check``."""
    slots: list[tuple[int, Sequence]] = []
    jobs: list = []
    decoded: list[Event | None] = [None] * len(items)
    of_topic: dict[str, tuple] = {}
    for i, (topic, raw) in enumerate(items):
        held = of_topic.get(topic)
        if held is None:
            held = of_topic[topic] = keys_of(topic)
        if not held or len(raw) > MAX_MESSAGE_BYTES:
            continue
        try:
            event = decoded[i] = decode(raw)
        except BadInput:
            continue
        slots.append((i, held[0]))
        jobs.append((event, held[1]))
    found, bodies, digests = runs(jobs)
    return Prepared(decoded, slots, jobs, found, bodies, digests)


def finish_batch(prepared: Prepared, tails) -> list:
    """The ``verified`` entries (``central.ingest.event_store.check``: ``(key list, verdicts, digest,
    canonical bytes)``, or None: no verdict) of each item of a ``prepare_batch``, from the verdicts of its ``tail_checks`` (``tails``: one bool per key of each). A run
    whose tail holds for no key has its other events verified here (``central.ingest.runs.cover``).
    Raises ``ValueError`` if ``tails`` does not fit the runs."""
    p = prepared
    found = cover(p.jobs, p.found, p.bodies, p.digests, tails)
    verified: list = [None] * len(p.decoded)
    frozen: dict[int, tuple[bool, ...]] = {}  # id(a run's bools, shared by its events) -> as a tuple
    for j, ((i, pubs), got) in enumerate(zip(p.slots, found, strict=True)):
        if got is not None:
            bools = frozen.get(id(got[0]))
            if bools is None:
                bools = frozen[id(got[0])] = tuple(got[0])
            verified[i] = (pubs, bools, got[1], p.bodies[j])
    return verified
