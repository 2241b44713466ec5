"""Uplink tuning settings of the gate sync (TOML ``[sync]`` in gate.toml)."""

from __future__ import annotations

from typing import Annotated

import msgspec

# Every float has both bounds: msgspec refuses nan and +-inf against them (the loader turns that into
# a ConfigError naming the key). Zero or negative waits made the uplink busy-loop; inf or 1e308 made
# it never publish again.
Backoff = Annotated[float, msgspec.Meta(ge=0.01, le=3600)]  # pauses, seconds
Period = Annotated[float, msgspec.Meta(ge=0.1, le=3600)]  # timers that query or republish, seconds
Tick = Annotated[float, msgspec.Meta(ge=0.001, le=60)]  # wake-up / flush intervals, seconds


class SyncSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Uplink tuning (TOML ``[sync]``), with the accepted range of each key:

    - ``window`` 1-65535: max unacked publishes (the MQTT receive maximum's range).
    - ``lanes`` 1-16: MQTT connections the events are published on (default 1). Only with
      ``[mqtt] protocol = "3.1.1"`` (a NATS cluster; the gate config refuses it otherwise): NATS's
      MQTT layer stores one connection's QoS 1 publishes one after the other, a replicated round
      trip each, so one connection per node (3) lets the cluster store a gate's events in parallel
      (docs/operations.md "MQTT 3.1.1 trade-offs"). The window is shared by the lanes; each event
      still leaves the outbox only on the PUBACK of its own message on its own lane; the events of
      a gate may reach the broker out of sequence order across lanes (the office sorts, dedupes
      and repairs gaps as for replays).
    - ``rate`` 0 or 1-1e6 publishes/s (0 = no limit; below 1/s the outbox of a busy gate never
      drains); ``burst`` 1-1e6: token bucket size.
    - ``high_water`` 1-1e9 outbox rows: depth that raises OUTBOX_HIGH_WATER; ``check_every_s``
      0.1-3600 s: how often that depth is counted.
    - ``reject_backoff_s`` 0.01-3600 s: pause after the broker refuses a publish.
    - ``poll_s`` 0.001-60 s: journal poll when not notified.
    - ``mark_batch`` 1-100000 rows, ``mark_every_s`` 0.001-60 s: acknowledged rows marked sent in
      groups of that size or that age.
    - ``read_ahead`` 1-1e6 outbox rows read per journal query (kept in memory until published; a
      new priority row waits at most that many).
    - ``ack_timeout_s`` 0.1-3600 s: connected, yet no PUBACK this long: publish those rows again.
    - ``unrouted_backoff_s`` 0.01-3600 s, doubling up to ``unrouted_backoff_max_s`` 0.01-3600 s
      (not below ``unrouted_backoff_s``): pause after a PUBACK "No matching subscribers".
    - ``status_every_s`` 0.1-3600 s: a progress status (``sent_seq``) at most this often while it moves.

    Out of range, nan, inf or a maximum below its minimum: ``msgspec.ValidationError`` from
    ``msgspec.convert`` (``ConfigError`` naming the key from ``portgate.config.load_toml``; the gate
    does not start). Constructing the struct directly checks only the cross-field rules."""

    window: Annotated[int, msgspec.Meta(ge=1, le=65_535)] = 100
    lanes: Annotated[int, msgspec.Meta(ge=1, le=16)] = 1
    rate: Annotated[float, msgspec.Meta(ge=0, le=1e6)] = 2000.0
    burst: Annotated[float, msgspec.Meta(ge=1, le=1e6)] = 200.0
    high_water: Annotated[int, msgspec.Meta(ge=1, le=1_000_000_000)] = 100_000
    check_every_s: Period = 5.0
    reject_backoff_s: Backoff = 5.0
    poll_s: Tick = 0.5
    mark_batch: Annotated[int, msgspec.Meta(ge=1, le=100_000)] = 500
    mark_every_s: Tick = 0.1
    read_ahead: Annotated[int, msgspec.Meta(ge=1, le=1_000_000)] = 1000
    ack_timeout_s: Period = 15.0
    unrouted_backoff_s: Backoff = 1.0
    unrouted_backoff_max_s: Backoff = 30.0
    status_every_s: Period = 30.0

    def __post_init__(self) -> None:
        if 0 < self.rate < 1:
            raise ValueError(f"rate must be 0 (no limit) or at least 1 publish/s, got {self.rate}")
        if self.unrouted_backoff_max_s < self.unrouted_backoff_s:
            raise ValueError(
                f"unrouted_backoff_max_s ({self.unrouted_backoff_max_s}) must not be below "
                f"unrouted_backoff_s ({self.unrouted_backoff_s})")
