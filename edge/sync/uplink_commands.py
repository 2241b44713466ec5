"""The commands the uplink's core (``edge.sync.uplink.Uplink``) gives its driver
(``edge.sync.service.Sync``): what to publish, read, mark, say and log, in the order ``poll``
returns them. Plain frozen values, no I/O; the driver answers ``ReadOutbox``, ``MarkSent`` and
``CheckDepth`` (``ANSWERED``) and polls again. Importable as ``edge.sync.uplink.<name>`` too.
"""

from __future__ import annotations

import dataclasses

Row = tuple[int, bytes]  # (outbox seq, wire bytes as stored)


@dataclasses.dataclass(frozen=True)
class Publish:
    """Publish ``body`` (the row ``seq``) on the gate's events topic at QoS 1; then ``published``."""

    seq: int
    body: bytes


@dataclasses.dataclass(frozen=True)
class PublishRequest:
    """Publish a snapshot request to the office at QoS 1; then ``request_published``."""

    body: bytes


@dataclasses.dataclass(frozen=True)
class ReadOutbox:
    """Read up to ``limit`` unsent rows in outbox order, ordinary rows only after seq ``after``
    (``Journal.outbox_after``); answer with ``rows``."""

    limit: int
    after: int = 0


@dataclasses.dataclass(frozen=True)
class MarkSent:
    """Mark these acknowledged seqs sent (one transaction); answer ``marked`` or ``mark_failed``."""

    seqs: tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class SendStatus:
    """Publish the retained "online" status; ``reason`` is ``birth`` (each connect) or ``progress``."""

    reason: str


@dataclasses.dataclass(frozen=True)
class CheckDepth:
    """Every ``check_every_s``: count the outbox, raise OUTBOX_HIGH_WATER, report refused reads."""


@dataclasses.dataclass(frozen=True)
class Pause:
    """Publishing stops for ``seconds``: ``why`` is ``rejected``, ``unrouted`` (an event) or
    ``request_unrouted`` (a snapshot request); ``seq`` the row concerned (None for a request),
    ``reason`` the PUBACK's reason code."""

    why: str
    seconds: float
    seq: int | None
    reason: int


@dataclasses.dataclass(frozen=True)
class Notice:
    """A line for the log: ``event`` name, ``level`` and fields."""

    level: str
    event: str
    fields: tuple[tuple[str, object], ...] = ()


Command = Publish | PublishRequest | ReadOutbox | MarkSent | SendStatus | CheckDepth | Pause | Notice
ANSWERED = (ReadOutbox, MarkSent, CheckDepth)  # after these, poll again
