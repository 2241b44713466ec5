"""What the uplink needs from the gate journal (``edge.journal.Journal`` implements it).

The journal is the outbox: every event is committed there first; the uplink reads unsent rows and
marks them sent only when the broker's PUBACK for that row's own message id has arrived.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Protocol

from wire.events import Event, Payload


class Outbox(Protocol):
    def append(self, payload: Payload, *, now, priority: int = 0) -> Event:
        """Commit a new event (signed, next sequence) and return it."""
        ...

    def outbox_batch(self, limit: int) -> list[Event]:
        """Up to ``limit`` unsent events, priority descending then sequence ascending."""
        ...

    def outbox_wire(self, limit: int) -> list[tuple[int, bytes]]:
        """``outbox_batch`` as ``(seq, wire bytes)``: the stored encoding, published as it is."""
        ...

    def outbox_after(self, after: int, limit: int) -> tuple[list[tuple[int, bytes]], int]:
        """``(rows, through)``: unsent priority rows, then unsent ordinary rows with seq > ``after``;
        every unsent ordinary row up to ``through`` is in ``rows``."""
        ...

    def mark_sent(self, seqs: Iterable[int]) -> None:
        """Mark these sequences delivered (idempotent)."""
        ...

    def events_between(self, seq_from: int, seq_to: int) -> list[Event]:
        """Events with ``seq_from <= seq <= seq_to`` (sent or not), sequence ascending."""
        ...

    def outbox_depth(self) -> int:
        """How many events are unsent."""
        ...

    def oldest_unsent_at(self) -> dt.datetime | None:
        """``occurred_at`` of the oldest unsent event, or None."""
        ...

    def last_seq(self) -> int:
        """Highest sequence committed (0 if none)."""
        ...

    def sent_through(self) -> int:
        """Highest ``n`` with every sequence ``1..n`` marked sent (0 if none)."""
        ...
