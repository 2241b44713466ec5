"""Payload helpers for the MQTT tests (the journal is the gate's real ``edge.journal.Journal``)."""

from __future__ import annotations

from wire.events import TapPayload


def tap(n: int, registration: str = "1001", decision: str = "admit") -> TapPayload:
    return TapPayload(
        uid=f"{n:08X}", reader_id="r1", reader_kind="control", decision=decision, registration=registration
    )
