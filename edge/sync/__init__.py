"""MQTT sync of a gate: store-and-forward uplink of the journal and downlinks into the store.

``Sync`` and ``SyncSettings`` are imported on first use (PEP 562), so a process that only needs a
sub-module (the watchman's screen reads ``edge.sync.photos``'s layout and ``gate.toml``'s
``[sync]`` settings) does not load paho's client and the uplink."""

from __future__ import annotations

__all__ = ["Sync", "SyncSettings"]


def __getattr__(name: str):
    if name == "Sync":
        from edge.sync.service import Sync

        return Sync
    if name == "SyncSettings":
        from edge.sync.settings import SyncSettings

        return SyncSettings
    raise AttributeError(f"module 'edge.sync' has no attribute {name!r}")
