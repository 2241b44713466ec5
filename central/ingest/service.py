"""``Ingest``: N ``IngestWorker`` s sharing one subscription, over one engine and one key ring."""

from __future__ import annotations

from central.config import CentralConfig
from central.db import load_all_tables, make_engine
from central.ingest.keys import KeyRing
from central.ingest.worker import IngestWorker
from central.publish import CsvSnapshots


class Ingest:
    def __init__(self, config: CentralConfig, *, engine=None, create_tables: bool = True) -> None:
        self.config = config
        self.engine = engine or make_engine(config.database_url)
        if create_tables:
            from central.ledger.migrate import upgrade_engine

            upgrade_engine(self.engine)
        self.keys = KeyRing(config.keys_dir)
        p = config.publish
        snapshots = CsvSnapshots(p.workers_csv, p.cards_csv, p.escala_csv)
        self.workers = [
            IngestWorker(config, self.engine, self.keys, index=i, snapshots=snapshots)
            for i in range(max(1, config.workers))
        ]

    def start(self) -> Ingest:
        for w in self.workers:
            w.start()
        return self

    def stop(self) -> None:
        for w in self.workers:
            w.stop()

    def wait_connected(self, timeout: float = 10.0) -> bool:
        return all(w.connected.wait(timeout) for w in self.workers)
