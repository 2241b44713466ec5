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
import hashlib
import hmac
import uuid
from typing import Annotated, Literal

import msgspec

from portgate.errors import BadInput
from wire import SCHEMA_VERSION
from wire.timestamps import UtcDatetime


class Dispatch(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The escala entry a decision was made against (lets the office rebuild shifts)."""

    date: dt.date
    period: str  # e.g. "19-01"
    ship: str  # IMO number
    berth: Literal["berthed", "anchored"]
    voyage: Literal["long_haul", "cabotage"]
    post: str
    function: str


class TapPayload(msgspec.Struct, frozen=True, tag="tap", forbid_unknown_fields=True):
    """A read at the gate and the decision shown for it (rules G1-G11)."""

    uid: str  # canonical UID as read (may be invalid text if the reader sent garbage: then DENY)
    reader_id: str
    reader_kind: Literal["control", "badge"]
    # "aboard" (G9): the worker aboard read again before min_stay_minutes; changes no shift.
    decision: Literal["admit", "exit", "deny", "inspector", "aboard"]
    rules_failed: list[str] = []  # rule ids, e.g. ["G5", "G6"]
    flags: list[str] = []  # e.g. ["DOUBLE_ASSIGNMENT"]
    message: str = ""  # what the watchman was shown (pt-BR)
    registration: str | None = None
    card_kind: str | None = None
    badge_uid: str | None = None  # badge paired with a control card (G4)
    badge_registration: str | None = None
    dispatch: Dispatch | None = None  # for admit/exit: the escala entry


class ConfiscationPayload(msgspec.Struct, frozen=True, tag="confiscation", forbid_unknown_fields=True):
    """A union inspector confiscated a control card (G10, 83.611 art. 20 §1)."""

    uid: str
    registration: str | None
    inspector_uid: str
    inspector_registration: str | None
    reason_flag: str  # e.g. "ROTATION_JUMP", "BORROWED_CARD", "INSPECTOR_DECISION"
    article: str  # e.g. "83.611 art. 20 i"


class ReaderPayload(msgspec.Struct, frozen=True, tag="reader", forbid_unknown_fields=True):
    """A reader fault or recovery."""

    reader_id: str
    state: Literal["absent", "ready", "fault"]
    detail: str = ""


class AlertPayload(msgspec.Struct, frozen=True, tag="alert", forbid_unknown_fields=True):
    """An operational alert raised by the gate (corrupt store quarantined, outbox filling, ...)."""

    code: str  # e.g. "STORE_QUARANTINED", "OUTBOX_HIGH_WATER", "CLOCK_UNTRUSTED", "CLOCK_TRUSTED"
    detail: str = ""


class CoveragePayload(msgspec.Struct, frozen=True, tag="coverage", forbid_unknown_fields=True):
    """A gangway coverage gap raised or ended at the gate from its local escala copy (G11,
    83.611 arts. 5-8). One ``raised`` and one ``ended`` per (gate, ship, date, period); a gate
    restarted while a gap is open raises it again (the office keys gaps by ship, date, period)."""

    state: Literal["raised", "ended"]
    ship: str  # IMO number
    date: dt.date  # local date of the period
    period: str  # e.g. "07-13"
    voyage: Literal["long_haul", "cabotage"]
    due_at: UtcDatetime  # period start + grace (aware UTC): no watchman aboard by then
    period_end: UtcDatetime  # aware UTC
    dispatched: list[str] = []  # registrations dispatched to the gangway post for the period
    ended_by: Literal["watchman_admitted", "period_end"] | None = None  # for state = "ended"
    watchman: str | None = None  # registration of the watchman whose admission ended the gap


Payload = TapPayload | ConfiscationPayload | ReaderPayload | AlertPayload | CoveragePayload

INT64_MAX = 2**63 - 1  # seq and mono_ns are 64-bit columns in the ledger: larger is malformed


class Event(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One gate event as it travels on the wire and is stored in journal and ledger."""

    event_id: str  # UUID (text); globally unique, the dedupe key at the office
    port: str
    gate_id: str
    boot_id: str
    seq: Annotated[int, msgspec.Meta(ge=1, le=INT64_MAX)]  # per-gate gapless sequence, starts at 1
    occurred_at: UtcDatetime  # aware UTC
    clock_trusted: bool
    mono_ns: Annotated[int, msgspec.Meta(ge=-INT64_MAX - 1, le=INT64_MAX)]  # the gate's monotonic clock
    payload: Payload
    schema: int = SCHEMA_VERSION
    mac: str = ""  # hex HMAC-SHA256 of canonical_bytes(event) with the gate's key


_encoder = msgspec.json.Encoder(order="sorted")
_decoder = msgspec.json.Decoder(Event)


def new_event_id() -> str:
    """A fresh globally unique event id (UUID4 text)."""
    return str(uuid.uuid4())


def canonical_bytes(event: Event) -> bytes:
    """The bytes the MAC covers: the event with ``mac=""``, keys sorted, compact UTF-8 JSON."""
    return _encoder.encode(msgspec.structs.replace(event, mac=""))


def sign(event: Event, key: bytes) -> Event:
    """Return ``event`` with ``mac`` set to HMAC-SHA256(key, canonical_bytes(event)) in hex."""
    mac = hmac.new(key, canonical_bytes(event), hashlib.sha256).hexdigest()
    return msgspec.structs.replace(event, mac=mac)


def verify(event: Event, key: bytes) -> bool:
    """True if ``event.mac`` is the right MAC for ``key`` (constant-time compare)."""
    expected = hmac.new(key, canonical_bytes(event), hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, event.mac)


def encode(event: Event) -> bytes:
    """Wire bytes of an event (JSON, keys sorted)."""
    return _encoder.encode(event)


def decode(data: bytes) -> Event:
    """Parse wire bytes into an ``Event``. Raises ``portgate.errors.BadInput`` if malformed."""
    try:
        event = _decoder.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise BadInput(f"malformed event: {exc}") from exc
    if event.occurred_at.tzinfo is None:
        raise BadInput("malformed event: occurred_at has no offset")
    return event
