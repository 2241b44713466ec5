"""Downlinks signed with the office key (issue 36 #9): what the office sends to the gates (rosters,
blocklists, escala, presence, photos, replay commands) is trusted on the office's Ed25519
signature, not on the broker's ACL alone.

On the wire every downlink payload is an envelope (compact JSON)::

    {"body": <base64 of the message's own bytes>, "issued": N, "key": <key fingerprint>,
     "sig": <base64 Ed25519 signature>, "topic": <the topic it is published on>}

``sig`` signs ``b"portgate-downlink/1\\n" + topic + b"\\n" + str(issued) + b"\\n" + body``, so a
signed message cannot be moved to another topic (a cards snapshot replayed as a roster, one
gate's command sent to another) nor have its ``issued`` changed. ``issued`` is the office's issue
number: nanoseconds since the epoch when it was signed, strictly increasing in one signing process
(``Issuer``); a gate keeps, per topic, the newest ``issued`` it accepted and refuses an older one
(``Forward``): a captured message cannot be sent again to roll a gate's copy back. The same
``issued`` again is the broker's redelivery of the retained message the gate already holds.

``key`` is the signer's fingerprint (``wire.chain.fingerprint``): a gate may hold two office keys
while the office rotates its key (docs/operations.md "Downlink signing keys").
"""

from __future__ import annotations

import base64
import threading
import time

import msgspec
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from wire.chain import fingerprint

DOMAIN = b"portgate-downlink/1\n"


class DownlinkRefused(Exception):
    """A downlink the gate must not apply. ``reason``: ``unsigned``, ``bad_signature``,
    ``unknown_key``, ``other_topic`` or ``older`` (the gate logs it as an alert and keeps its copy)."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


class SignedDownlink(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The envelope of every office -> gate message (module doc)."""

    body: str
    issued: int
    key: str
    sig: str
    topic: str


def _signed_bytes(topic: str, issued: int, body: bytes) -> bytes:
    return DOMAIN + topic.encode() + b"\n" + str(issued).encode() + b"\n" + body


class Issuer:
    """Strictly increasing issue numbers for one signing process (wall-clock nanoseconds, bumped
    by one when the clock has not moved or went back). Thread-safe."""

    def __init__(self, clock=time.time_ns) -> None:
        self._clock = clock
        self._last = 0
        self._lock = threading.Lock()

    def next(self) -> int:
        with self._lock:
            self._last = max(self._clock(), self._last + 1)
            return self._last


def sign(key: Ed25519PrivateKey, topic: str, body: bytes, issued: int) -> bytes:
    """The envelope of ``body`` (a downlink message's own bytes) for ``topic``, signed by ``key``."""
    sig = key.sign(_signed_bytes(topic, issued, body))
    env = SignedDownlink(body=base64.b64encode(body).decode(), issued=issued, key=fingerprint(key.public_key()),
                   sig=base64.b64encode(sig).decode(), topic=topic)
    return msgspec.json.encode(env)


def open_envelope(payload: bytes, keys: list[Ed25519PublicKey], topic: str) -> tuple[int, bytes]:
    """``(issued, body)`` of a signed downlink received on ``topic``, checked against the office's
    public ``keys`` (one, or two while a key rotates). Raises ``DownlinkRefused`` for a payload that
    is not an envelope (``unsigned``), signed by a key not among ``keys`` (``unknown_key``),
    published for another topic (``other_topic``) or whose signature does not verify
    (``bad_signature``). Freshness is ``Forward``'s."""
    try:
        env = msgspec.json.decode(payload, type=SignedDownlink)
        body = base64.b64decode(env.body, validate=True)
        sig = base64.b64decode(env.sig, validate=True)
    except (msgspec.DecodeError, msgspec.ValidationError, ValueError) as exc:
        raise DownlinkRefused("unsigned", str(exc)[:200]) from None
    if env.topic != topic:
        raise DownlinkRefused("other_topic", f"signed for {env.topic[:200]!r}")
    key = next((k for k in keys if fingerprint(k) == env.key), None)
    if key is None:
        raise DownlinkRefused("unknown_key", f"signed by {env.key[:80]}")
    try:
        key.verify(sig, _signed_bytes(topic, env.issued, body))
    except InvalidSignature:
        raise DownlinkRefused("bad_signature") from None
    return env.issued, body


class Forward:
    """The newest ``issued`` accepted per topic; ``check`` says whether one more may be applied.
    Not thread-safe (the gate's sync pump)."""

    def __init__(self, newest: dict[str, int] | None = None) -> None:
        self.newest: dict[str, int] = dict(newest or {})

    def check(self, topic: str, issued: int) -> bool:
        """True for a message newer than any accepted on ``topic`` (remembered), False for the same
        one again (the retained copy redelivered: nothing to do). Raises ``DownlinkRefused``
        (``older``) for an older one: a replay meant to roll the gate's copy back."""
        last = self.newest.get(topic)
        if last is not None and issued < last:
            raise DownlinkRefused("older", f"issued {issued} < {last} already applied")
        if last == issued:
            return False
        self.newest[topic] = issued
        return True


class Signer:
    """The office's side: ``seal(topic, body)`` -> the signed envelope, with this process's issue
    numbers. Thread-safe (``Issuer``)."""

    def __init__(self, key: Ed25519PrivateKey, issuer: Issuer | None = None) -> None:
        self.key = key
        self.issuer = issuer or Issuer()

    def seal(self, topic: str, body: bytes) -> bytes:
        return sign(self.key, topic, body, self.issuer.next())


def body_of(payload: bytes) -> bytes:
    """The message inside an envelope, NOT verified (a monitor, a test, a gate without the office
    key), or ``payload`` itself when it is not an envelope."""
    if not payload.startswith(b'{"body":'):
        return payload
    try:
        return base64.b64decode(msgspec.json.decode(payload, type=SignedDownlink).body, validate=True)
    except (msgspec.DecodeError, msgspec.ValidationError, ValueError):
        return payload
