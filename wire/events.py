"""Uplink events: the envelope every gate event travels in, and its HMAC-SHA256.

Every event carries a globally unique id, the gate id, the boot id, a per-gate gapless sequence
number, occurred-at (aware UTC) with a clock-trust flag, the monotonic clock reading (ns), its type
and payload, and a MAC over a canonical encoding with the gate's key (DESIGN.md, wire contract).

Canonical encoding: the event with ``mac`` set to ``""`` (the key stays in place), compact JSON
encoded by msgspec with keys sorted at every level (``order="sorted"``), UTF-8. The HMAC key is the
gate's key file text (64 hex characters as ASCII bytes, not the 32 bytes they spell). ``sign`` and
``verify`` are the only places that compute it; docs/mqtt.md "Verifying a MAC" gives the recipe and
a test vector for outside consumers.
"""

from __future__ import annotations

import datetime as dt
import hmac
import os
from typing import Annotated, Literal

import msgspec

from portgate.errors import BadInput
from wire import SCHEMA_VERSION
from wire.timestamps import UtcDatetime

# Field bounds of the contract (the ledger's columns hold them on every database; a message outside
# them is a dead letter before it reaches the database): ids 1..64 characters, registrations up to
# 64, UIDs up to 512 (a reader's garbage included), texts up to 4000, lists up to 64 items.
EventId = Annotated[str, msgspec.Meta(
    pattern="^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",
    description="lower-case UUID text (36 characters); the dedupe key at the office")]
Id = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
Short = Annotated[str, msgspec.Meta(max_length=64)]
Uid = Annotated[str, msgspec.Meta(max_length=512)]
Text = Annotated[str, msgspec.Meta(max_length=4000)]
Codes = Annotated[list[Short], msgspec.Meta(max_length=64)]
Mac = Annotated[str, msgspec.Meta(pattern="^([0-9a-f]{64})?$", description="hex HMAC-SHA256, or empty before signing")]


class Dispatch(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The escala entry a decision was made against (lets the office rebuild shifts)."""

    date: dt.date
    period: Short  # e.g. "19-01"
    ship: Short  # IMO number
    berth: Literal["berthed", "anchored"]
    voyage: Literal["long_haul", "cabotage"]
    post: Short
    function: Short


class TapPayload(msgspec.Struct, frozen=True, tag="tap", forbid_unknown_fields=True):
    """A read at the gate and the decision shown for it (rules G1-G11)."""

    uid: Uid  # canonical UID as read (may be invalid text if the reader sent garbage: then DENY)
    reader_id: Id
    reader_kind: Literal["control", "badge"]
    # "aboard" (G9): the worker aboard read again before min_stay_minutes; changes no shift.
    decision: Literal["admit", "exit", "deny", "inspector", "aboard"]
    rules_failed: Codes = []  # rule ids, e.g. ["G5", "G6"]
    flags: Codes = []  # e.g. ["DOUBLE_ASSIGNMENT"]
    message: Text = ""  # what the watchman was shown (pt-BR)
    registration: Short | None = None
    card_kind: Short | None = None
    badge_uid: Uid | None = None  # badge paired with a control card (G4)
    badge_registration: Short | None = None
    dispatch: Dispatch | None = None  # for admit/exit: the escala entry


class ConfiscationPayload(msgspec.Struct, frozen=True, tag="confiscation", forbid_unknown_fields=True):
    """A union inspector confiscated a control card (G10, 83.611 art. 20 §1)."""

    uid: Uid
    registration: Short | None
    inspector_uid: Uid
    inspector_registration: Short | None
    reason_flag: Short  # e.g. "ROTATION_JUMP", "BORROWED_CARD", "INSPECTOR_DECISION"
    article: Text  # e.g. "83.611 art. 20 i"


class MealWorkedPayload(msgspec.Struct, frozen=True, tag="meal_worked", forbid_unknown_fields=True):
    """The chief watchman or an inspector recorded at the gate that the meal interval of a worker's
    open shift was worked (P6, 83.611 art. 26 d): the inspector card read twice (meal mode), then
    the worker's control card. Journaled with the worker's tap (decision ``aboard``, flag
    MEAL_WORKED); the office's shift rebuild sets ``meal_worked`` on the shift of ``dispatch``."""

    uid: Uid  # the worker's control card
    registration: Short
    inspector_uid: Uid
    inspector_registration: Short | None
    dispatch: Dispatch  # the escala entry of the worker's open shift (the shift's identity)
    rule: Short = "P6"
    article: Text = "83.611 art. 26 d"


class ReaderPayload(msgspec.Struct, frozen=True, tag="reader", forbid_unknown_fields=True):
    """A reader fault or recovery."""

    reader_id: Id
    state: Literal["absent", "ready", "fault"]
    detail: Text = ""


class AlertPayload(msgspec.Struct, frozen=True, tag="alert", forbid_unknown_fields=True):
    """An operational alert raised by the gate (corrupt store quarantined, outbox filling, ...)."""

    code: Id  # e.g. "STORE_QUARANTINED", "OUTBOX_HIGH_WATER", "CLOCK_UNTRUSTED", "CLOCK_TRUSTED"
    detail: Text = ""


class CoveragePayload(msgspec.Struct, frozen=True, tag="coverage", forbid_unknown_fields=True):
    """A gangway coverage gap raised or ended at the gate from its local escala copy (G11,
    83.611 arts. 5-8). One ``raised`` and one ``ended`` per (gate, ship, date, period); a gate
    restarted while a gap is open raises it again (the office keys gaps by ship, date, period)."""

    state: Literal["raised", "ended"]
    ship: Short  # IMO number
    date: dt.date  # local date of the period
    period: Short  # e.g. "07-13"
    voyage: Literal["long_haul", "cabotage"]
    due_at: UtcDatetime  # period start + grace (aware UTC): no watchman aboard by then
    period_end: UtcDatetime  # aware UTC
    dispatched: Codes = []  # registrations dispatched to the gangway post for the period
    ended_by: Literal["watchman_admitted", "period_end"] | None = None  # for state = "ended"
    watchman: Short | None = None  # registration of the watchman whose admission ended the gap


RULEBOOK_MAX_CHARS = 32_000  # a gate rulebook's TOML text (the shipped one is under 3,000)


class RulebookPayload(msgspec.Struct, frozen=True, tag="rulebook", forbid_unknown_fields=True):
    """The gate rulebook the gate decides by (RULES.md section G), journaled at start-up when it
    differs from the last one journaled: its ``name``, the SHA-256 (hex) of its TOML text and the
    text itself, so the office knows which rules were in force at a gate from when (the what-if
    page starts from it; an evidence bundle carries it). Empty ``toml``: the built-in default."""

    name: Short
    sha256: Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{64}$")]
    toml: Annotated[str, msgspec.Meta(max_length=RULEBOOK_MAX_CHARS)] = ""


Payload = (TapPayload | ConfiscationPayload | MealWorkedPayload | ReaderPayload | AlertPayload
           | CoveragePayload | RulebookPayload)

INT64_MAX = 2**63 - 1  # seq and mono_ns are 64-bit columns in the ledger: larger is malformed


class Event(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One gate event as it travels on the wire and is stored in journal and ledger."""

    event_id: EventId  # lower-case UUID text; globally unique, the dedupe key at the office
    port: Id
    gate_id: Id
    boot_id: Id
    seq: Annotated[int, msgspec.Meta(ge=1, le=INT64_MAX)]  # per-gate gapless sequence, starts at 1
    occurred_at: UtcDatetime  # aware UTC
    clock_trusted: bool
    mono_ns: Annotated[int, msgspec.Meta(ge=-INT64_MAX - 1, le=INT64_MAX)]  # the gate's monotonic clock
    payload: Payload
    schema: int = SCHEMA_VERSION
    mac: Mac = ""  # hex HMAC-SHA256 of canonical_bytes(event) with the gate's key
    # Signed chain (wire.chain, docs/evidence.md): hex SHA-256 of the canonical bytes of the gate's
    # previous event, and hex Ed25519 signature of canonical_bytes(event) by the gate's own key.
    # Both empty on an unsigned (HMAC-only) event; such an event is encoded without the two keys.
    # Each is "" or exactly 64 / 128 lower-case hex digits, checked in ``__post_init__`` (a round
    # trip through bytes costs a tenth of msgspec's regular expression over 128 characters); the
    # JSON schema states the same pattern.
    prev: Annotated[str, msgspec.Meta(extra_json_schema={"pattern": "^([0-9a-f]{64})?$"})] = ""
    sig: Annotated[str, msgspec.Meta(extra_json_schema={"pattern": "^([0-9a-f]{128})?$"})] = ""

    def __post_init__(self) -> None:
        if self.prev and not _hex_of(self.prev, 64):
            raise ValueError("prev: not 64 lower-case hex digits")
        if self.sig and not _hex_of(self.sig, 128):
            raise ValueError("sig: not 128 lower-case hex digits")


def _hex_of(text: str, digits: int) -> bool:
    """True if ``text`` is exactly ``digits`` lower-case hex digits."""
    if len(text) != digits:
        return False
    try:
        return bytes.fromhex(text).hex() == text
    except ValueError:
        return False


_encoder = msgspec.json.Encoder(order="sorted")
_decoder = msgspec.json.Decoder(Event)


def new_event_id() -> str:
    """A fresh globally unique event id: UUID4 text (RFC 4122: 16 random bytes from ``os.urandom``
    with the version and variant bits set; the text ``str(uuid.uuid4())`` gives), formatted
    without building a ``uuid.UUID`` (the gate makes one per tap)."""
    b = bytearray(os.urandom(16))
    b[6] = b[6] & 0x0F | 0x40  # version 4
    b[8] = b[8] & 0x3F | 0x80  # variant RFC 4122
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def canonical_bytes(event: Event) -> bytes:
    """The bytes the MAC and the signature cover: the event with ``mac`` and ``sig`` set to "",
    keys sorted, UTF-8 JSON (an unsigned event without the ``prev`` and ``sig`` keys)."""
    blank = event if not event.mac and not event.sig else msgspec.structs.replace(event, mac="", sig="")
    return _unsigned(_encoder.encode(blank), event)


def _unsigned(data: bytes, event: Event) -> bytes:
    """An unsigned event's JSON without its empty ``prev`` and ``sig`` (sorted keys: ``prev``
    comes right before ``schema``, ``sig`` is the last key; no payload has such keys)."""
    if event.prev or event.sig:
        return data
    return data.replace(b',"prev":"","schema":', b',"schema":', 1).removesuffix(b',"sig":""}') + b"}"


def sign(event: Event, key: bytes) -> Event:
    """Return ``event`` with ``mac`` set to HMAC-SHA256(key, canonical_bytes(event)) in hex."""
    mac = hmac.digest(key, canonical_bytes(event), "sha256").hex()
    return msgspec.structs.replace(event, mac=mac)


def sign_encoded(event: Event, key: bytes) -> tuple[Event, bytes]:
    """``(sign(event, key), encode(sign(event, key)))`` from one encoding when ``event.sig`` is
    empty: the wire bytes are then the canonical bytes with the MAC in the empty ``mac`` (sorted
    keys: ``mac`` follows four text/bool fields, so its first ``,"mac":"",`` is the event's own)."""
    if event.sig:
        signed = sign(event, key)
        return signed, encode(signed)
    data = canonical_bytes(event)
    mac = hmac.digest(key, data, "sha256").hex()
    return (msgspec.structs.replace(event, mac=mac),
            data.replace(b',"mac":"",', b',"mac":"' + mac.encode() + b'",', 1))


def verify(event: Event, key: bytes) -> bool:
    """True if ``event.mac`` is the right MAC for ``key`` (constant-time compare)."""
    expected = hmac.digest(key, canonical_bytes(event), "sha256").hex()
    return hmac.compare_digest(expected, event.mac)


def encode(event: Event) -> bytes:
    """Wire bytes of an event (JSON, keys sorted; an unsigned one without ``prev``/``sig``)."""
    return _unsigned(_encoder.encode(event), event)


def decode(data: bytes) -> Event:
    """Parse wire bytes into an ``Event``. Raises ``portgate.errors.BadInput`` if malformed."""
    try:
        event = _decoder.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise BadInput(f"malformed event: {exc}") from exc
    if event.occurred_at.tzinfo is None:
        raise BadInput("malformed event: occurred_at has no offset")
    return event
