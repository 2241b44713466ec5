"""Downlink messages (office -> gates), gate status and commands.

Every message carries ``schema`` (``wire.SCHEMA_VERSION``). Reference data travels as versioned
snapshots (retained, so a gate that connects gets the newest at once) and deltas. A delta names the
version it applies on (``from_version``) and the one it produces (``to_version``); a gate whose copy
is not at ``from_version`` ignores the delta and asks the office for a snapshot (``SnapshotRequest``).

Kinds (topic ``portgate/v1/{port}/down/{kind}/{snapshot|delta}``):

- ``roster``: workers and their cards (``portgate.records.Worker`` / ``Card`` rows, CSV columns).
- ``cards``: the blocklist: cards that must be refused at once (confiscated, lost) with the reason.
  A snapshot is the whole list (a card not in it is not blocked by the office); a delta adds
  ``blocked`` cards and lifts the blocks of ``unblocked`` ones (returned to their holder, found).
- ``escala``: the dispatch roster (``EscalaEntry`` rows) for the dates it covers.
- ``photos``: which worker has which photo (``PhotosSnapshot`` / ``PhotosDelta``, an index of
  SHA-256 names) and the photo files themselves (``PhotoFile`` on ``down/photos/file``), kept by
  the gate on disk for the watchman's screen (``edge.sync.photos``).
- ``presence``: open shifts relayed from the other gates (an admit opens one, an exit closes it).
  Presence deltas are not a chain: each carries a monotonic ``version`` (the ledger row id of the
  event that caused it) and a gate keeps, per worker, the newest.

Times are aware datetimes, turned into UTC when a message is built or decoded and written ``…Z``
(``wire.timestamps``); a time without an offset is malformed.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Annotated, Literal

import msgspec

from portgate.errors import BadInput
from portgate.records import Card, EscalaEntry, Worker
from wire import PHOTO_MAX_BYTES, SCHEMA_VERSION
from wire.timestamps import UtcDatetime, UtcMessage



class InspectorRow(UtcMessage):
    """A union inspector (Fiscal do Sindicato) as the watchman's screen names him (issue 33): his
    inspector cards are roster ``cards`` of kind ``inspector`` with this ``registration``; his
    photo, if any, is the photo index row of that registration (``PhotoRef``)."""

    registration: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
    name: Annotated[str, msgspec.Meta(max_length=255)] = ""


class RosterSnapshot(UtcMessage):
    """Every worker and card of the port at ``version`` (replaces the gate's copy), and the
    active union inspectors (``inspectors``: names for the screen; they decide nothing)."""

    version: int
    at: UtcDatetime
    workers: list[Worker]
    cards: list[Card]
    inspectors: list[InspectorRow] = []
    schema: int = SCHEMA_VERSION


class RosterDelta(UtcMessage):
    """Workers and cards added or changed between ``from_version`` and ``to_version``."""

    from_version: int
    to_version: int
    at: UtcDatetime
    workers_upsert: list[Worker] = []
    cards_upsert: list[Card] = []
    inspectors_upsert: list[InspectorRow] = []
    schema: int = SCHEMA_VERSION


class BlockedCard(UtcMessage):
    """A card that every gate must refuse from now on (G2/G10): confiscated, lost, replaced."""

    uid: str
    reason: str  # e.g. "confiscated", "lost"
    at: UtcDatetime


class CardsSnapshot(UtcMessage):
    """The whole blocklist at ``version``."""

    version: int
    at: UtcDatetime
    blocked: list[BlockedCard]
    schema: int = SCHEMA_VERSION


class CardsDelta(UtcMessage):
    """Cards blocked, and cards no longer blocked (``unblocked``: canonical UIDs of cards returned
    to their holder or found), between ``from_version`` and ``to_version``."""

    from_version: int
    to_version: int
    at: UtcDatetime
    blocked: list[BlockedCard]
    unblocked: list[str] = []
    schema: int = SCHEMA_VERSION


class EscalaSnapshot(UtcMessage):
    """The dispatch roster at ``version`` (all entries the office currently publishes)."""

    version: int
    at: UtcDatetime
    entries: list[EscalaEntry]
    schema: int = SCHEMA_VERSION


class EscalaDelta(UtcMessage):
    """Entries added/changed (``upsert``) and cancelled (``remove``) since ``from_version``."""

    from_version: int
    to_version: int
    at: UtcDatetime
    upsert: list[EscalaEntry] = []
    remove: list[EscalaEntry] = []
    schema: int = SCHEMA_VERSION


class PresenceRow(UtcMessage):
    """An open shift at some gate: admitted, not yet exited."""

    registration: str
    gate_id: str
    ship: str
    admitted_at: UtcDatetime


class PresenceSnapshot(UtcMessage):
    """Every open shift of the port as the ledger knows it at ``version``."""

    version: int
    at: UtcDatetime
    open: list[PresenceRow]
    schema: int = SCHEMA_VERSION


class PresenceDelta(UtcMessage):
    """One worker's presence changed: ``open`` is the new open shift, or None after an exit."""

    version: int
    at: UtcDatetime
    registration: str
    open: PresenceRow | None
    source_event_id: str = ""
    schema: int = SCHEMA_VERSION


class PhotoRef(UtcMessage):
    """A worker's photo: the SHA-256 (lower-case hex) of its file, its size and media type."""

    registration: str
    sha256: str
    size: int
    media_type: str = "image/jpeg"


class PhotosSnapshot(UtcMessage):
    """The whole photo index at ``version`` (which worker has which file); the files themselves
    travel as ``PhotoFile`` messages. Replaces the gate's index; files no longer named are deleted."""

    version: int
    at: UtcDatetime
    photos: list[PhotoRef]
    schema: int = SCHEMA_VERSION


class PhotosDelta(UtcMessage):
    """Photo index rows added or changed (``upsert``) and workers whose photo was withdrawn
    (``remove``: registrations) since ``from_version``; the new files are sent as ``PhotoFile``."""

    from_version: int
    to_version: int
    at: UtcDatetime
    upsert: list[PhotoRef] = []
    remove: list[str] = []
    schema: int = SCHEMA_VERSION


class PhotoFile(UtcMessage):
    """The bytes of one photo (base64 in JSON), named by their SHA-256. A gate refuses a file whose
    hash is not its name or which is over its size cap (``edge.sync.photos``)."""

    sha256: str
    media_type: str
    data: bytes
    at: UtcDatetime
    schema: int = SCHEMA_VERSION


class ReaderHealth(UtcMessage):
    """One configured reader's health in a gate's status (``edge.reader_health``): ``ok`` (ready),
    ``fault`` (device unplugged, daemon lost, silent past its watchdog) or ``unknown`` (nothing
    reported yet); ``since``: when it entered that state; ``last_read_at``: its last card read
    since the gate started (None: none)."""

    reader_id: str
    kind: str
    state: Literal["ok", "fault", "unknown"]
    since: UtcDatetime | None = None
    last_read_at: UtcDatetime | None = None
    detail: str = ""


class GateStatus(UtcMessage):
    """Retained gate status: ``online`` birth on connect, ``online`` progress while the delivered
    watermark moves, ``offline`` as Last Will or on stop.

    ``sent_seq``: every event ``1..sent_seq`` of this gate was acknowledged by the broker (None from
    a gate that does not say). The office compares it with its ledger and asks the gate to replay a
    tail it never received (lost in a broker crash, or routed to nobody while its subscription was
    missing): no later event would reveal such a gap. ``outbox_depth``, ``oldest_unsent_at``,
    ``clock_trusted`` and ``copies_updated_at`` feed the office's live view (None: not said), and
    ``readers`` (each configured reader's health; None: not said) its gate card and reader alarm.

    ``mac``: HMAC-SHA256 (hex) with the gate's key over the status with ``mac=""``, the recipe of
    events (``sign_status``; docs/mqtt.md "Verifying a MAC"). The office dead-letters a status that
    is unsigned or badly signed: a stolen broker password alone cannot claim a ``sent_seq``."""

    port: str
    gate_id: str
    boot_id: str
    state: Literal["online", "offline"]
    reason: Literal["birth", "will", "graceful", "progress"]
    at: UtcDatetime
    sent_seq: int | None = None
    outbox_depth: int | None = None  # events journaled and not yet acknowledged by the broker
    oldest_unsent_at: UtcDatetime | None = None  # occurred_at of the oldest of them
    clock_trusted: bool | None = None  # the gate's wall clock is synchronised (G8, G13)
    copies_updated_at: UtcDatetime | None = None  # when its roster/escala copies were last updated (G8)
    readers: list[ReaderHealth] | None = None  # each configured reader's health (ok / fault / unknown)
    schema: int = SCHEMA_VERSION
    mac: str = ""  # hex HMAC-SHA256 of status_canonical_bytes(status) with the gate's key


class ReplayCommand(UtcMessage, tag="replay"):
    """Office -> gate: republish events ``seq_from..seq_to`` inclusive (a gap was detected)."""

    seq_from: int
    seq_to: int
    at: UtcDatetime
    schema: int = SCHEMA_VERSION


class SnapshotRequest(UtcMessage, tag="snapshot_request"):
    """Gate -> office: please republish the snapshot of ``kind`` (my copy is at ``have_version``)."""

    gate_id: str
    kind: Literal["roster", "cards", "escala", "presence", "photos"]
    have_version: int | None
    at: UtcDatetime
    schema: int = SCHEMA_VERSION


class EnrolCommand(UtcMessage, tag="enrol"):
    """Office -> one gate (``.../cmd``): enrol mode (issue 34). ``action="start"``: the next unknown
    card read at the gate (a whole UID, not a partial read) is refused with rule ``ENROL`` ("cartão
    em cadastro") and sent up as an ordinary tap, which the office offers to the clerk to bind to
    ``registration``; the gate leaves enrol mode after that one read, at ``until`` (aware UTC,
    the office's clock; the gate also stops after ``timeout_s`` on its own monotonic clock, so a
    wrong gate clock cannot make it last longer) or on ``action="cancel"`` for the same
    ``session``. A start whose ``until`` is already past on a trusted gate clock is ignored (a
    command held by the broker while the gate was offline)."""

    session: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
    action: Literal["start", "cancel"]
    registration: Annotated[str, msgspec.Meta(max_length=64)] = ""
    until: UtcDatetime | None = None
    timeout_s: Annotated[int, msgspec.Meta(ge=0, le=3600)] = 0
    at: UtcDatetime | None = None
    schema: int = SCHEMA_VERSION


Command = ReplayCommand | SnapshotRequest | EnrolCommand

DOWNLINK_TYPES: dict[tuple[str, str], type] = {
    ("roster", "snapshot"): RosterSnapshot,
    ("roster", "delta"): RosterDelta,
    ("cards", "snapshot"): CardsSnapshot,
    ("cards", "delta"): CardsDelta,
    ("escala", "snapshot"): EscalaSnapshot,
    ("escala", "delta"): EscalaDelta,
    ("presence", "snapshot"): PresenceSnapshot,
    ("presence", "delta"): PresenceDelta,
    ("photos", "snapshot"): PhotosSnapshot,
    ("photos", "delta"): PhotosDelta,
    ("photos", "file"): PhotoFile,
}

_encoder = msgspec.json.Encoder(order="sorted")
_decoders: dict[object, msgspec.json.Decoder] = {}


def encode(message: msgspec.Struct) -> bytes:
    """Wire bytes (JSON, keys sorted) of any message of this module."""
    return _encoder.encode(message)


def status_canonical_bytes(status: GateStatus) -> bytes:
    """The bytes a status's MAC covers: the status with ``mac=""``, keys sorted, compact UTF-8 JSON."""
    return _encoder.encode(msgspec.structs.replace(status, mac=""))


def sign_status(status: GateStatus, key: bytes) -> GateStatus:
    """``status`` with ``mac`` = HMAC-SHA256(key, status_canonical_bytes(status)) in hex; ``key`` is
    the gate's key file text (the key of its events)."""
    mac = hmac.new(key, status_canonical_bytes(status), hashlib.sha256).hexdigest()
    return msgspec.structs.replace(status, mac=mac)


def verify_status(status: GateStatus, key: bytes) -> bool:
    """True if ``status.mac`` is the right MAC for ``key`` (constant-time compare); False if unsigned."""
    if not status.mac:
        return False
    expected = hmac.new(key, status_canonical_bytes(status), hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, status.mac)


def decode(data: bytes, kind: type | object, *, where: str | None = None):
    """Parse ``data`` as ``kind`` (a Struct type or the ``Command`` union).

    Raises ``BadInput`` (with ``where``, e.g. the topic) if malformed or of an unknown schema.
    """
    decoder = _decoders.get(kind)
    if decoder is None:
        decoder = _decoders[kind] = msgspec.json.Decoder(kind)
    try:
        message = decoder.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise BadInput(f"malformed message: {exc}", where=where) from exc
    if message.schema != SCHEMA_VERSION:
        raise BadInput(f"unsupported schema version {message.schema}", where=where)
    return message


def decode_downlink(data: bytes, kind: str, form: str, *, where: str | None = None):
    """Parse a downlink payload of ``kind``/``form`` (from the topic). Raises ``BadInput``."""
    try:
        cls = DOWNLINK_TYPES[(kind, form)]
    except KeyError as exc:
        raise BadInput(f"unknown downlink {kind}/{form}", where=where) from exc
    return decode(data, cls, where=where)
