"""The fields of a stored admit/exit tap or meal-worked record that the shift rebuild reads, decoded
from the event's wire bytes (``events.raw``) in one msgspec pass (RULES.md G9, P6).

``decode_taps(raws)`` returns one ``TapEvent`` per raw JSON event: the envelope fields the clock
placement needs (event id, gate, boot, seq, time, trust, monotonic time) and a ``TapView`` or
``MealView`` payload carrying the attribute names of ``wire.events.TapPayload`` /
``MealWorkedPayload`` that ``central.ledger.shifts.reconstruct`` reads, so the pure core takes
either. Every other field of the event (MAC, signature, uid, message...) is skipped by the decoder
without being built. The views are not tracked by the cyclic garbage collector (they hold no
references that can form a cycle), which keeps a month's 250,000 of them cheap to keep alive.

Only ``tap`` and ``meal_worked`` payloads decode; anything else, or bytes that are not such an event,
raises ``portgate.errors.BadInput`` naming the problem (the ledger stores only events that passed
``wire.events.decode`` at ingest, so this means a damaged row).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Annotated

import msgspec

from portgate.errors import BadInput


class DispatchView(msgspec.Struct, frozen=True, gc=False):
    """``wire.events.Dispatch``: the escala entry of the tap (the shift's identity)."""

    date: dt.date
    period: str
    ship: str
    berth: str
    voyage: str
    post: str
    function: str


class TapView(msgspec.Struct, frozen=True, gc=False, tag="tap"):
    """The tap payload fields a shift is made of (``wire.events.TapPayload``)."""

    decision: str
    flags: tuple[str, ...] = ()
    registration: str | None = None
    dispatch: DispatchView | None = None


class MealView(msgspec.Struct, frozen=True, gc=False, tag="meal_worked"):
    """The meal-worked record fields (``wire.events.MealWorkedPayload``, P6, 83.611 art. 26 d)."""

    registration: str
    inspector_uid: str
    dispatch: DispatchView
    inspector_registration: str | None = None


class TapEvent(msgspec.Struct, frozen=True, gc=False):
    """The envelope of a tap or meal event (``wire.events.Event``); ``occurred_at`` aware UTC."""

    event_id: str
    gate_id: str
    boot_id: str
    seq: int
    occurred_at: Annotated[dt.datetime, msgspec.Meta(tz=True)]
    clock_trusted: bool
    mono_ns: int
    payload: TapView | MealView


_decoder = msgspec.json.Decoder(TapEvent)


class MalformedEvent(BadInput):
    """A stored event that does not decode; ``raw``: its bytes (for the caller to name its row,
    ``central.ledger.store.named``)."""

    def __init__(self, message: str, raw: bytes) -> None:
        super().__init__(message)
        self.raw = bytes(raw)


def _decode_all(decode, raws: Iterable[bytes]) -> list:
    raws = raws if isinstance(raws, list) else list(raws)
    try:
        return [decode(raw) for raw in raws]
    except (msgspec.DecodeError, msgspec.ValidationError):
        for raw in raws:  # which one: the fast path above does not say
            try:
                decode(raw)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                raise MalformedEvent(f"malformed tap event in the ledger: {exc}", raw) from exc
        raise


def decode_taps(raws: Iterable[bytes]) -> list[TapEvent]:
    """``TapEvent`` of each raw JSON event (bytes or memoryview). Raises ``MalformedEvent`` (a
    ``BadInput``) with the first undecodable event's bytes."""
    return _decode_all(_decoder.decode, raws)


class WhoView(msgspec.Struct, frozen=True, gc=False):
    """The registration of a tap or meal payload (``None``: a tap with none)."""

    registration: str | None = None


class ClockEvent(msgspec.Struct, frozen=True, gc=False):
    """The envelope fields ``place_times`` reads and the payload's registration: what the month
    close digests a worker's events by (``central.ledger.reclose``)."""

    event_id: str
    gate_id: str
    boot_id: str
    seq: int
    occurred_at: Annotated[dt.datetime, msgspec.Meta(tz=True)]
    clock_trusted: bool
    mono_ns: int
    payload: WhoView


_clock_decoder = msgspec.json.Decoder(ClockEvent)


def decode_clocks(raws: Iterable[bytes]) -> list[ClockEvent]:
    """``ClockEvent`` of each raw JSON event. Raises ``MalformedEvent`` as ``decode_taps``."""
    return _decode_all(_clock_decoder.decode, raws)
