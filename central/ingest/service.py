"""``Ingest``: N ``IngestWorker`` s sharing one subscription, over one engine and one key ring (each
worker's ledger writer runs in its own child process by default, central/ingest/link.py); with
``[publish] source = "registry"`` also the ``DownlinkPublisher`` (central/broadcast/registry_source.py) thread, which
serves the workers' snapshot answers too."""

from __future__ import annotations

import threading

from central.config import CentralConfig
from central.db import load_all_tables, make_engine
from central.ingest.answers import snapshot_source
from central.ingest.keys import KeyRing
from central.ingest.worker import IngestWorker
from central.ledger.migrate import upgrade_engine
from portgate.errors import ConfigError


def _in_memory(engine) -> bool:
    url = engine.url
    return url.get_backend_name() == "sqlite" and (url.database or ":memory:") == ":memory:"


class Ingest:
    def __init__(self, config: CentralConfig, *, engine=None, create_tables: bool = True) -> None:
        self.config = config
        self.engine = engine or make_engine(config.database_url)
        if create_tables:
            upgrade_engine(self.engine)
        self.keys = KeyRing(config.keys_dir)
        if _in_memory(self.engine):
            raise ConfigError("an in-memory SQLite ledger is private to one connection: the office needs a "
                              "file (sqlite:///path) or PostgreSQL", key="database_url")
        self.publisher, snapshots = snapshot_source(config, self.engine)
        self.workers = [
            IngestWorker(config, self.engine, self.keys, index=i, snapshots=snapshots)
            for i in range(max(1, config.workers))
        ]

    def start(self) -> Ingest:
        if self.publisher is not None:
            self.publisher.start()
        for w in self.workers:
            w.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop every worker at once (each within ``timeout``), then the publisher."""
        for w in self.workers:
            w.begin_stop()
        stoppers = [threading.Thread(target=w.stop, args=(timeout,), daemon=True) for w in self.workers]
        for t in stoppers:
            t.start()
        for t in stoppers:
            t.join(timeout + 5.0)
        if self.publisher is not None:
            self.publisher.stop()

    def wait_connected(self, timeout: float = 10.0) -> bool:
        parts = [*self.workers, *([self.publisher] if self.publisher is not None else [])]
        return all(p.connected.wait(timeout) for p in parts)
