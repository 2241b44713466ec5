"""The pure check of one uplink event message at the office: bytes in, a verdict out.

``check(topic, raw, port, known)`` takes the message and what the office knows of the topic's gate
(``GateKeys``: its HMAC key, or why there is none; its registered Ed25519 public keys, newest last)
and returns ``Accepted`` or ``DeadLetter`` with the reason: not a gate topic / wrong port, oversize,
malformed (not JSON, schema violation, unsupported schema version), topic/gate mismatch (a gate
publishing as another), unknown gate (no key), an unusable key file, bad MAC, and for a gate with a
registered signing key a chain break (``CHAIN_BREAK <kind> gate <g> seq <n>: ...``: UNSIGNED,
BAD_SIGNATURE, UNKNOWN_KEY; docs/evidence.md). No SQL, no file, no clock, no MQTT: the
caller (``central.ingest.event_store.check``) looks the keys up and applies a ``SIGNING_KEY``
rollover the verdict names (``Accepted.learned``).

``link_breaks`` is the pure half of the chain check in the batch's transaction
(``central.ingest.chain.record``): the new signed events' links against the links the ledger holds
around them (the known chain heads) → the rows to insert and the breaks (PREV_MISMATCH, FORKED).
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
from collections.abc import Sequence

from portgate.errors import BadInput
from wire import SCHEMA_VERSION, chain, topics
from wire import downlink as dl
from wire.events import AlertPayload, Event, canonical_bytes, decode

MAX_MESSAGE_BYTES = 131_072  # an uplink message larger than this is refused before decoding
PREFIX = "CHAIN_BREAK"


@dataclasses.dataclass(frozen=True, slots=True)
class DeadLetter:
    topic: str
    reason: str
    raw: bytes
    gate_id: str | None = None
    event_id: str | None = None
    seq: int | None = None  # set on a chain break


@dataclasses.dataclass(frozen=True, slots=True)
class Accepted:
    topic: str
    event: Event
    raw: bytes
    learned: object | None = None  # an Ed25519 public key a valid SIGNING_KEY event names (to register)
    digest: str | None = None  # hex SHA-256 of its canonical bytes, if already computed (``link_row``)


@dataclasses.dataclass(frozen=True, slots=True)
class GateKeys:
    """What the office knows of one gate. ``hmac``: its key (None: unknown gate); ``hmac_error``:
    why its key file cannot be used (the message of ``KeyUnreadable``). ``public``: its registered
    Ed25519 public keys, oldest first (empty: HMAC only); ``public_error``: why its ``.pub`` file
    cannot be used."""

    hmac: bytes | None
    public: Sequence = ()
    hmac_error: str | None = None
    public_error: str | None = None


UNKNOWN = GateKeys(None)


def topic_gate(topic: str, port: str) -> str | DeadLetter:
    """The gate of an events topic of ``port``, or the ``DeadLetter`` of a message on any other
    topic (``raw`` left empty: the caller's ``check`` fills it in). Cached per topic."""
    t_gate = _event_topics.get((topic, port))
    if t_gate is not None:
        return t_gate
    try:
        t_port, t_gate, leaf = topics.parse_gate_topic(topic)
    except BadInput:
        return DeadLetter(topic, "not a gate events topic", b"")
    if t_port != port or leaf != "events":
        return DeadLetter(topic, f"topic is not an events topic of port {port}", b"", t_gate)
    if len(_event_topics) < 100_000:
        _event_topics[(topic, port)] = t_gate
    return t_gate


_event_topics: dict[tuple[str, str], str] = {}  # (valid events topic, port) -> gate id


def oversize(topic: str, raw: bytes, gate_id: str | None = None) -> DeadLetter | None:
    """A ``DeadLetter`` if ``raw`` is longer than ``MAX_MESSAGE_BYTES`` (never decoded), else None."""
    if len(raw) <= MAX_MESSAGE_BYTES:
        return None
    return DeadLetter(topic, f"oversize: {len(raw)} bytes, more than {MAX_MESSAGE_BYTES}", raw, gate_id)


def check(topic: str, raw: bytes, port: str, known: GateKeys,
          verified: Sequence[bool] | None = None, decoded: Event | None = None,
          digest: str | None = None, body: bytes | None = None) -> Accepted | DeadLetter:
    """Validate one uplink message against ``known`` (the keys of the topic's gate). Never
    raises: anything wrong becomes a ``DeadLetter``. A message over ``MAX_MESSAGE_BYTES`` is refused
    before it is decoded. ``verified``: the Ed25519 verdicts already computed for this message, one
    per key of ``known.public`` newest first (``central.ingest.runs.chain_verdicts``), or None to
    verify here. ``decoded``: ``decode(raw)`` already done by the caller (else decoded here);
    ``digest``: the hex SHA-256 of its canonical bytes computed with the verdicts (kept in ``Accepted``);
    ``body``: those canonical bytes of ``decoded`` (``mac_ok``)."""
    t_gate = topic_gate(topic, port)
    if isinstance(t_gate, DeadLetter):
        return dataclasses.replace(t_gate, raw=raw)
    too_big = oversize(topic, raw, t_gate)
    if too_big is not None:
        return too_big
    try:
        event = decoded if decoded is not None else decode(raw)
    except BadInput as exc:
        return DeadLetter(topic, f"malformed: {exc.reason}"[:2000], raw, t_gate)
    if event.schema != SCHEMA_VERSION:
        return DeadLetter(topic, f"malformed: unsupported schema {event.schema}", raw, t_gate, event.event_id)
    if event.gate_id != t_gate or event.port != port:
        return DeadLetter(
            topic, f"topic/gate mismatch: event of {event.port}/{event.gate_id} on {topic}", raw, t_gate,
            event.event_id,
        )
    if known.hmac_error is not None:
        return DeadLetter(topic, known.hmac_error, raw, event.gate_id, event.event_id)
    if known.hmac is None:
        return DeadLetter(topic, f"unknown gate {event.gate_id}", raw, event.gate_id, event.event_id)
    if not mac_ok(event, known.hmac, raw, body if decoded is not None else None):
        return DeadLetter(topic, "bad MAC", raw, event.gate_id, event.event_id)
    if known.public_error is not None:
        return DeadLetter(topic, known.public_error, raw, event.gate_id, event.event_id)
    broken, learned = signature_problem(event, known.public, verified)
    if broken is not None:
        return DeadLetter(topic, broken, raw, event.gate_id, event.event_id, event.seq)
    return Accepted(topic, event, raw, learned, digest)


def signature_problem(event: Event, pubs: Sequence, verified: Sequence[bool] | None = None):
    """``(None, learned)`` if the event's signature holds by one of ``pubs`` (oldest first) or the
    gate has none (HMAC only); ``learned`` is the new key a valid ``SIGNING_KEY`` event names (not
    yet among them) or None. Else ``(reason, None)``: ``CHAIN_BREAK <kind> gate <g> seq <n>:
    <detail>`` with kind UNSIGNED, UNKNOWN_KEY or BAD_SIGNATURE. ``verified``: one verdict per key
    of ``pubs`` newest first, already computed (used only if it has one per key)."""
    if not pubs:
        return None, None
    if verified is not None and event.sig and len(verified) == len(pubs) and any(verified):
        return _held(event, pubs[len(pubs) - 1 - verified.index(True)])
    where = f"{PREFIX} {{}} gate {event.gate_id} seq {event.seq}: "
    if not event.sig:
        return where.format("UNSIGNED") + "event without signature from a signing gate", None
    if verified is not None and len(verified) != len(pubs):
        verified = None
    for i, key in enumerate(reversed(pubs)):  # the newest key first
        if verified[i] if verified is not None else chain.signature_ok(event, key):
            return _held(event, key)
    new = chain.key_change(event)
    if new is not None and chain.signature_ok(event, new):
        return where.format("UNKNOWN_KEY") + (
            f"the gate names key {chain.fingerprint(new)}, not signed by a registered key "
            "(register it with portgate central add-gate --public-key)"), None
    return where.format("BAD_SIGNATURE") + (
        "signature does not verify with the gate's registered key(s): edited, or forged "
        "without the gate's private key"), None


def _held(event: Event, key) -> tuple[None, object | None]:
    """``signature_problem``'s answer for an event whose signature holds by ``key``."""
    if isinstance(event.payload, AlertPayload):
        new = chain.key_change(event)
        if new is not None and chain.fingerprint(new) != chain.fingerprint(key):
            return None, new
    return None, None


_macs: dict[bytes, hmac.HMAC] = {}  # key -> HMAC-SHA256 with the key already absorbed


def mac_ok(event: Event, key: bytes, raw: bytes, body: bytes | None = None) -> bool:
    """``wire.events.verify`` with the keyed HMAC state cached per key (``copy()`` per message).

    ``body``: ``canonical_bytes(event)`` already computed (``central.ingest.runs.batch_chain``):
    a MAC over it that holds is the verdict; one that does not is checked as below.

    Fast path: a gate sends ``encode(event)``, i.e. the canonical bytes with the ``mac`` value
    filled in, so blanking that value in the wire bytes gives the canonical bytes without
    re-encoding. If that does not verify (another encoder, or a forged MAC), the canonical bytes are
    computed from the decoded event as ``wire.events.verify`` does, so the verdict is the same.
    """
    base = _macs.get(key)
    if base is None:
        base = _macs[key] = hmac.new(key, digestmod=hashlib.sha256)
    quoted = event.mac.encode()
    if body is not None:
        mac = base.copy()
        mac.update(body)
        if hmac.compare_digest(mac.hexdigest().encode(), quoted):
            return True
    candidate = raw.replace(b'"mac":"' + quoted + b'"', b'"mac":""', 1)
    if event.sig:  # a signed event: the signature is blanked in the canonical bytes too
        candidate = candidate.replace(b'"sig":"' + event.sig.encode() + b'"', b'"sig":""', 1)
    if candidate is not raw and len(candidate) != len(raw):
        mac = base.copy()
        mac.update(candidate)
        if hmac.compare_digest(mac.hexdigest().encode(), quoted):
            return True
    mac = base.copy()
    mac.update(canonical_bytes(event))
    return hmac.compare_digest(mac.hexdigest(), event.mac)


def check_status(topic: str, payload: bytes, port: str, known: GateKeys) -> dl.GateStatus | DeadLetter:
    """A gate's retained status (``GateStatus``, its ``sent_seq`` drives the tail repair), or a
    ``DeadLetter`` ``bad status: …`` if it does not parse, names another port or gate than its
    topic, comes from a gate without a usable key, claims a ``sent_seq`` outside 0..2**63-1, or is
    unsigned or badly signed (``wire.downlink.verify_status`` with the gate's key: a broker
    password alone must not make the office ask for replays). Oversize: ``oversize: …``."""
    gate_id = None
    try:
        t_port, gate_id, _leaf = topics.parse_gate_topic(topic)
        too_big = oversize(topic, payload, gate_id)
        if too_big is not None:
            return too_big
        status = dl.decode(payload, dl.GateStatus, where=topic)
        if (status.port, status.gate_id) != (t_port, gate_id) or t_port != port:
            raise BadInput(f"status of {status.port}/{status.gate_id} on {topic}", where=topic)
        if status.sent_seq is not None and not 0 <= status.sent_seq < 2**63:
            raise BadInput(f"sent_seq {status.sent_seq} out of range", where=topic)
        if known.hmac_error is not None:
            raise BadInput(known.hmac_error, where=topic)  # cannot be checked: not trusted
        if known.hmac is None:
            raise BadInput(f"unknown gate {gate_id}", where=topic)
        if not status.mac:
            raise BadInput("unsigned (a gate of an older release?)", where=topic)
        if not dl.verify_status(status, known.hmac):
            raise BadInput("bad MAC", where=topic)
    except BadInput as exc:
        return DeadLetter(topic, f"bad status: {exc}", payload, gate_id)
    return status


# -- links between consecutive signed events -----------------------------------------------------

@dataclasses.dataclass(frozen=True, slots=True)
class BreakRow:
    gate_id: str
    seq_from: int
    seq_to: int
    kind: str
    detail: str
    event_id: str | None


def link_row(event: Event, digest: str | None = None) -> dict:
    """The ``event_links`` row of a signed event: its hash (32 bytes; ``digest``, hex, if given, else
    computed), its ``prev`` (32 bytes), whether it opens a segment, and its ``event_id`` (named in a
    FORKED break; not stored: the link's event is ``events`` at the same gate and seq)."""
    return {"gate_id": event.gate_id, "seq": event.seq, "event_id": event.event_id,
            "hash": bytes.fromhex(digest or chain.event_hash(event)), "prev": bytes.fromhex(event.prev),
            "segment": isinstance(event.payload, AlertPayload) and chain.segment_loss(event) is not None}


def rejected_breaks(rejected: Sequence[DeadLetter]) -> list[BreakRow]:
    """The chain breaks among a batch's dead letters (those whose reason starts ``CHAIN_BREAK``)."""
    found = []
    for d in rejected:
        if d.reason.startswith(PREFIX) and d.gate_id is not None and d.seq is not None:
            kind = d.reason.split()[1]
            found.append(BreakRow(d.gate_id, d.seq, d.seq, kind, d.reason[:2000], d.event_id))
    return found


def link_breaks(rows: dict[tuple[str, int], dict], have: dict[tuple[str, int], dict]):
    """``(fresh, breaks)``: of the new link ``rows`` ((gate, seq) -> ``link_row``, each a newly
    stored event), those whose seq is not yet held (``have``: the ledger's links at seq-1..seq+1 of
    each, ``hash``/``prev``/``segment``, and ``event_id`` of the held event where known), and the
    breaks they show. A held seq is FORKED (the new event is another event: the ledger deduplicates
    by event id); a link between seq n-1 and n is checked once, when the second of the two arrives
    (arrival order is free), and ``prev`` not being the hash of n-1 is PREV_MISMATCH (an event
    opening a segment names the gate's last head instead: not checked)."""
    out: list[BreakRow] = []
    fresh = []
    for key, row in rows.items():
        old = have.get(key)
        if old is not None:
            if old.get("event_id") != row["event_id"]:
                out.append(forked(key[0], key[1], old.get("event_id"), row["event_id"]))
            continue
        fresh.append(row)
    merged = {**have, **{(r["gate_id"], r["seq"]): r for r in fresh}}
    for row in fresh:
        g, s = row["gate_id"], row["seq"]
        before = merged.get((g, s - 1))
        if before is not None and not row["segment"] and before["hash"] != row["prev"]:
            out.append(_mismatch(g, s - 1, s, row["event_id"]))
        after = have.get((g, s + 1))  # a later seq that arrived first: its link is checked now
        if after is not None and not after["segment"] and after["prev"] != row["hash"]:
            out.append(_mismatch(g, s, s + 1, row["event_id"]))
    return fresh, out


def forked(gate: str, seq: int, held: str | None, new: str) -> BreakRow:
    """The FORKED break of event ``new`` claiming ``seq`` of ``gate``, already held by ``held``."""
    return BreakRow(gate, seq, seq, "FORKED", f"{PREFIX} FORKED gate {gate} seq {seq}: events "
                    f"{held or '(unknown)'} and {new} both claim it", new)


def _mismatch(gate: str, a: int, b: int, event_id: str) -> BreakRow:
    return BreakRow(gate, a, b, "PREV_MISMATCH",
                    f"{PREFIX} PREV_MISMATCH gate {gate} seq {a}..{b}: prev of seq {b} is not the hash "
                    f"of seq {a} (an event was replaced, or the gate's journal forked)", event_id)
