"""The office's broadcast to the gates: one publisher (``central.broadcast.publisher``) and its sources.

Sources: CSV snapshots (``csv_source``), registry snapshots and deltas (``registry_source``),
workers' photos (``photos``); the ingest workers hand it presence relays and blocklist deltas.
"""
