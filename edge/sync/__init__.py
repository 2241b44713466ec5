"""MQTT sync of a gate: store-and-forward uplink of the journal and downlinks into the store."""

from edge.sync.service import Sync, SyncSettings

__all__ = ["Sync", "SyncSettings"]
