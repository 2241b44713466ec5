"""Uplink tuning settings of the gate sync (TOML ``[sync]`` in gate.toml)."""

from __future__ import annotations

import msgspec


class SyncSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Uplink tuning (TOML ``[sync]``): window = max unacked publishes; rate = publishes/s (0 = no
    limit), burst = bucket size; high_water = outbox depth that raises OUTBOX_HIGH_WATER;
    read_ahead = outbox rows read per journal query (a new priority row waits at most that many)."""

    window: int = 100
    rate: float = 2000.0
    burst: float = 200.0
    high_water: int = 100_000
    check_every_s: float = 5.0
    reject_backoff_s: float = 5.0
    poll_s: float = 0.5
    mark_batch: int = 500
    mark_every_s: float = 0.1
    read_ahead: int = 1000  # outbox rows read per journal query (kept in memory until published)
    ack_timeout_s: float = 15.0  # connected, yet no PUBACK for this long: publish those rows again
    unrouted_backoff_s: float = 1.0  # PUBACK "no matching subscribers": first pause before retrying
    unrouted_backoff_max_s: float = 30.0  # ... doubling up to this while rows keep coming back unrouted
    status_every_s: float = 30.0  # progress status (sent_seq) at most this often while it moves
