"""The signed chain of a gate's events: Ed25519 signatures and ``prev`` hashes (docs/evidence.md).

Every signed event carries ``prev`` = hex SHA-256 of the canonical bytes
(``wire.events.canonical_bytes``) of the same gate's previous event (``GENESIS``, 64 zeros, for
the first event of a journal), and ``sig`` = hex Ed25519 signature of its own canonical bytes by the
gate's private key. The HMAC (``mac``) stays beside the signature over the same bytes: it
authenticates the link to the office's broker cheaply; the signature is what only the gate can make.

Control events of the chain are alerts (``AlertPayload``):

- ``SIGNING_KEY``: the gate signs from this event on with ``public_key=<base64 raw 32 bytes>``; the
  event itself is signed by the key it replaces (``previous=<fingerprint>``) or, on a gate's first
  key (``previous=none``), by the new key.
- ``STORE_QUARANTINED`` (edge/journal.py): a new segment; its ``prev`` is the last head the gate
  knew (``last_head_seq=<n> last_head=<hex>``), and ``lost_after``/``resumed_at`` name the loss.

``check_chain`` (pure) verifies a gate's events as stored and names every break.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
import re
from collections.abc import Iterable

import msgspec
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from portgate.errors import BadInput
from wire.events import AlertPayload, Event, canonical_bytes

GENESIS = "0" * 64
KEY_EVENT = "SIGNING_KEY"
SEGMENT_EVENT = "STORE_QUARANTINED"


def event_hash(event: Event) -> str:
    """Hex SHA-256 of ``canonical_bytes(event)``: what the next event's ``prev`` holds."""
    return hashlib.sha256(canonical_bytes(event)).hexdigest()


def seal(event: Event, private_key: Ed25519PrivateKey, hmac_key: bytes) -> tuple[Event, str]:
    """``event`` (with its ``prev`` set) with ``sig`` (Ed25519) and ``mac`` (HMAC-SHA256) over its
    canonical bytes, and its hash (``event_hash``, computed from the same bytes)."""
    body = canonical_bytes(event)
    sealed = msgspec.structs.replace(event, sig=private_key.sign(body).hex(),
                                     mac=hmac.new(hmac_key, body, hashlib.sha256).hexdigest())
    return sealed, hashlib.sha256(body).hexdigest()


def signature_ok(event: Event, public_key: Ed25519PublicKey) -> bool:
    """True if ``event.sig`` is ``public_key``'s Ed25519 signature of its canonical bytes."""
    try:
        public_key.verify(bytes.fromhex(event.sig), canonical_bytes(event))
        return True
    except (InvalidSignature, ValueError):
        return False


# -- keys ------------------------------------------------------------------------------------------

def public_raw(key: Ed25519PublicKey) -> str:
    """Base64 of the raw 32-byte public key (as named in ``SIGNING_KEY`` events)."""
    return base64.b64encode(key.public_bytes(serialization.Encoding.Raw,
                                             serialization.PublicFormat.Raw)).decode()


def public_pem(key: Ed25519PublicKey) -> str:
    """The public key as PEM SubjectPublicKeyInfo (``openssl pkey -pubin`` reads it)."""
    return key.public_bytes(serialization.Encoding.PEM,
                            serialization.PublicFormat.SubjectPublicKeyInfo).decode()


def fingerprint(key: Ed25519PublicKey) -> str:
    """First 16 hex digits of SHA-256 of the raw public key."""
    return hashlib.sha256(base64.b64decode(public_raw(key))).hexdigest()[:16]


#: Encodings of the Ed25519 points of small order that a key file plausibly holds by mistake
#: (all zero bytes; the neutral point): no private key signs for them, so they are refused.
_WEAK_KEYS = frozenset({bytes(32), b"\x01" + bytes(31)})
_PEM_BEGIN, _PEM_END = b"-----BEGIN PUBLIC KEY-----", b"-----END PUBLIC KEY-----"


def load_public(text: str | bytes) -> Ed25519PublicKey:
    """A public key from PEM (exactly one ``PUBLIC KEY`` block, nothing else but white space) or
    from base64 of the raw 32 bytes. Raises ``BadInput`` for anything else, and for the all-zero
    key and the neutral point."""
    data = text.encode() if isinstance(text, str) else text
    try:
        if b"-----BEGIN" in data:
            block = data.strip()
            if (block.count(b"-----BEGIN") != 1 or not block.startswith(_PEM_BEGIN)
                    or not block.endswith(_PEM_END)):
                raise BadInput("not an Ed25519 public key: give one PEM PUBLIC KEY block and nothing else")
            key = serialization.load_pem_public_key(block)
        else:
            key = Ed25519PublicKey.from_public_bytes(base64.b64decode(data.strip(), validate=True))
    except (ValueError, TypeError) as exc:
        raise BadInput(f"not an Ed25519 public key: {exc}") from exc
    if not isinstance(key, Ed25519PublicKey):
        raise BadInput("not an Ed25519 public key")
    if key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw) in _WEAK_KEYS:
        raise BadInput("not an Ed25519 public key: a weak key (all zero or the neutral point)")
    return key


_KV = re.compile(r"\b([a-z_]+)=(\S+)")


def words(detail: str) -> dict[str, str]:
    """``key=value`` words of an alert's detail (trailing ``;`` stripped)."""
    return {k: v.rstrip(";") for k, v in _KV.findall(detail)}


def key_change(event: Event) -> Ed25519PublicKey | None:
    """The new public key a ``SIGNING_KEY`` event names, or None for any other event."""
    p = event.payload
    if not isinstance(p, AlertPayload) or p.code != KEY_EVENT:
        return None
    raw = words(p.detail).get("public_key")
    try:
        return load_public(raw) if raw else None
    except BadInput:
        return None


def segment_loss(event: Event) -> tuple[int, int] | None:
    """``(first, last)`` seqs a ``STORE_QUARANTINED`` event says were lost (may be empty: first >
    last), or None for any other event."""
    p = event.payload
    if not isinstance(p, AlertPayload) or p.code != SEGMENT_EVENT:
        return None
    w = words(p.detail)
    try:
        return max(int(w["lost_after"]), 0) + 1, int(w["resumed_at"]) - 1
    except (KeyError, ValueError):
        return None


# -- verification ----------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True, slots=True)
class Break:
    """A break in a gate's chain: ``kind`` (BAD_SIGNATURE, UNSIGNED, MISSING, REORDERED, FORKED,
    REPLAYED, PREV_MISMATCH, UNKNOWN_KEY), the gate, the sequence range and a plain detail."""

    kind: str
    gate_id: str
    seq_from: int
    seq_to: int
    detail: str
    # the detail for a person in another language: (``cli.chain.<what>`` msgid's tail, its fields);
    # ``detail`` (English) is what the ledger stores and scripts read
    said: tuple = dataclasses.field(default=(), compare=False)

    def __str__(self) -> str:
        where = f"{self.seq_from}" if self.seq_from == self.seq_to else f"{self.seq_from}..{self.seq_to}"
        return f"CHAIN_BREAK {self.kind} gate {self.gate_id} seq {where}: {self.detail}"


@dataclasses.dataclass(frozen=True, slots=True)
class Segment:
    """A documented segment break: the gate quarantined its journal at ``seq`` and lost
    ``lost_from..lost_to`` (empty if lost_from > lost_to); its ``prev`` names the last head."""

    gate_id: str
    seq: int
    lost_from: int
    lost_to: int
    last_head: str


@dataclasses.dataclass(frozen=True, slots=True)
class ChainReport:
    gate_id: str
    verified: int  # events whose signature and links hold
    head_seq: int
    head: str  # hash of the newest event
    breaks: tuple[Break, ...]
    segments: tuple[Segment, ...]
    unsigned_legacy: int  # HMAC-only events before the gate's first SIGNING_KEY event


def check_chain(gate_id: str, stored: Iterable[Event], key: Ed25519PublicKey | None, *,
                first_seq: int | None = None) -> ChainReport:
    """Verify one gate's events in stored order (pure). ``key``: the gate's registered public key
    (a ``SIGNING_KEY`` event signed by the key in force switches to the key it names). ``first_seq``:
    the chain is expected from this seq (default: the lowest present; 1 means ``prev`` of seq 1 must
    be ``GENESIS``). Events before a gate's first ``SIGNING_KEY`` that carry no signature are
    counted as ``unsigned_legacy``. Every break is named with its seq range; events not involved
    in a break count as verified."""
    breaks: list[Break] = []
    by_seq, bad = _index_events(gate_id, stored, breaks)
    seqs = sorted(by_seq)
    legacy, segments, lost = _check_signatures(gate_id, by_seq, seqs, key, breaks, bad)
    _check_links(gate_id, by_seq, seqs, first_seq, segments, lost, breaks, bad)
    head_seq = seqs[-1] if seqs else 0
    verified = sum(1 for s in seqs if by_seq[s].sig and s not in bad)
    return ChainReport(gate_id, verified, head_seq, event_hash(by_seq[head_seq]) if seqs else GENESIS,
                       tuple(sorted(breaks, key=lambda b: (b.seq_from, b.kind))), tuple(segments), legacy)


def _index_events(gate_id: str, stored: Iterable[Event], breaks: list[Break]
                  ) -> tuple[dict[int, Event], set[int]]:
    """``check_chain``'s first step: the gate's events by seq in stored order, appending REPLAYED
    (an event id again), FORKED (two events on one seq) and REORDERED (seq ranges stored out of
    order) to ``breaks``; returns ``(by_seq, bad seqs)``."""
    seen_ids: dict[str, int] = {}
    by_seq: dict[int, Event] = {}
    bad: set[int] = set()
    last_pos_seq = 0
    disorder: list[tuple[int, int]] = []
    for ev in stored:
        if ev.gate_id != gate_id:
            continue
        if ev.event_id in seen_ids:
            breaks.append(Break("REPLAYED", gate_id, ev.seq, ev.seq,
                                f"event {ev.event_id} appears again after seq {last_pos_seq}",
                                ("replayed", {"event": ev.event_id, "after": last_pos_seq})))
            continue
        seen_ids[ev.event_id] = ev.seq
        if ev.seq in by_seq:
            breaks.append(Break("FORKED", gate_id, ev.seq, ev.seq,
                                f"two events with seq {ev.seq}: {by_seq[ev.seq].event_id} and {ev.event_id}",
                                ("forked", {"seq": ev.seq, "first": by_seq[ev.seq].event_id, "second": ev.event_id})))
            bad.add(ev.seq)
            continue
        if ev.seq < last_pos_seq:
            disorder.append((ev.seq, last_pos_seq))
        last_pos_seq = max(last_pos_seq, ev.seq)
        by_seq[ev.seq] = ev
    for a, b in _merged(disorder):
        breaks.append(Break("REORDERED", gate_id, a, b, f"seq {a}..{b} not stored in seq order",
                            ("reordered", {"first": a, "last": b})))
    return by_seq, bad


def _check_signatures(gate_id: str, by_seq: dict[int, Event], seqs: list[int],
                      key: Ed25519PublicKey | None, breaks: list[Break], bad: set[int]
                      ) -> tuple[int, list[Segment], list[tuple[int, int]]]:
    """``check_chain``'s second step, in seq order: each event's signature under the key in force
    (a ``SIGNING_KEY`` event switches it), appending UNSIGNED, UNKNOWN_KEY and BAD_SIGNATURE breaks
    and marking those seqs bad; returns ``(unsigned legacy count, loss segments, lost seq ranges)``."""
    legacy = 0
    current = key
    signing = False
    segments: list[Segment] = []
    lost: list[tuple[int, int]] = []
    for s in seqs:
        ev = by_seq[s]
        new_key = key_change(ev)
        if not ev.sig:
            if signing or new_key is not None:
                breaks.append(Break("UNSIGNED", gate_id, s, s, "event without signature in a signed chain",
                                    ("unsigned", {})))
                bad.add(s)
            else:
                legacy += 1
            continue
        if current is None and new_key is not None:
            current = new_key  # a first key the office never registered: verified against itself
            breaks.append(Break("UNKNOWN_KEY", gate_id, s, s,
                                f"key {fingerprint(new_key)} is not registered for the gate",
                                ("key_not_registered", {"key": fingerprint(new_key)})))
        if current is None:
            breaks.append(Break("UNKNOWN_KEY", gate_id, s, s, "no public key registered for the gate", ("no_key", {})))
            bad.add(s)
            continue
        ok = signature_ok(ev, current) or (new_key is not None and signature_ok(ev, new_key)
                                           and fingerprint(new_key) == fingerprint(current))
        if not ok:
            breaks.append(Break("BAD_SIGNATURE", gate_id, s, s,
                                f"event {ev.event_id}: signature does not match its bytes "
                                f"(edited, or forged without the gate's key {fingerprint(current)})",
                                ("bad_signature", {"event": ev.event_id, "key": fingerprint(current)})))
            bad.add(s)
            continue
        signing = True
        if new_key is not None:
            current = new_key
        loss = segment_loss(ev)
        if loss is not None:
            segments.append(Segment(gate_id, s, loss[0], loss[1], ev.prev))
            if loss[0] <= loss[1]:
                lost.append(loss)
    return legacy, segments, lost


def _check_links(gate_id: str, by_seq: dict[int, Event], seqs: list[int], first_seq: int | None,
                 segments: list[Segment], lost: list[tuple[int, int]], breaks: list[Break],
                 bad: set[int]) -> None:
    """``check_chain``'s last step: the links and gaps between consecutive present seqs from
    ``first_seq`` (default the lowest present), appending MISSING (not covered by a declared loss
    segment) and PREV_MISMATCH breaks; a link is checked only between two good signed events."""
    start = first_seq if first_seq is not None else (seqs[0] if seqs else 1)
    prev_seq = start - 1
    segment_at = {seg.seq for seg in segments}
    for s in seqs:
        ev = by_seq[s]
        if s > prev_seq + 1:
            missing = [(a, b) for a, b in _uncovered(prev_seq + 1, s - 1, lost)]
            for a, b in missing:
                breaks.append(Break("MISSING", gate_id, a, b, f"seq {a}..{b} not present",
                                    ("missing", {"first": a, "last": b})))
        elif (s == prev_seq + 1 and ev.sig and prev_seq in by_seq and s not in bad
              and prev_seq not in bad and s not in segment_at):
            if ev.prev != event_hash(by_seq[prev_seq]):
                breaks.append(Break("PREV_MISMATCH", gate_id, prev_seq, s,
                                    f"prev of seq {s} is not the hash of seq {prev_seq}",
                                    ("prev_mismatch", {"seq": s, "prev": prev_seq})))
                bad.update((s, prev_seq))
        if s == 1 and ev.sig and ev.prev != GENESIS and s not in bad:
            breaks.append(Break("PREV_MISMATCH", gate_id, 0, 1, "prev of seq 1 is not GENESIS", ("not_genesis", {})))
            bad.add(s)
        prev_seq = s


def _merged(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(b, out[-1][1]))
        else:
            out.append((a, b))
    return out


def _uncovered(a: int, b: int, lost: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Runs of a..b not inside any documented lost range."""
    out: list[tuple[int, int]] = []
    cur = a
    for la, lb in sorted(lost):
        if lb < cur or la > b:
            continue
        if la > cur:
            out.append((cur, la - 1))
        cur = max(cur, lb + 1)
    if cur <= b:
        out.append((cur, b))
    return out


def new_private_key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()
