"""A card reported lost on the office's or the worker's page is blocked at the gates also when the
office publishes its snapshots from CSV files (``[publish] source = "csv"``, the demo's): the
ledger writer's periodic scan sees the registry's card change and the ingest publishes the whole
blocklist, which holds the registry's cards that are not active (central/broadcast/blocklist.py).
Found by a fresh tester on the demo: V017 reported his card lost on /w/cartao and it still opened
the gangway at g-nordic ten hours later (G2)."""

from __future__ import annotations

import uuid

from sqlalchemy.orm import Session

from app.demo.mosquitto import Mosquitto
from central.config import CentralConfig, IngestSettings, PublishSettings
from central.db import make_engine
from central.ingest.keys import add_gate
from central.ingest.service import Ingest
from central.registry import store as registry
from central.registry.store import import_files
from edge.journal import Journal
from edge.store import Store
from edge.sync import Sync
from edge.sync.settings import SyncSettings
from portgate.config import read_secret
from testkit.wait import wait_until
from wire.connection import MqttConfig

WORKERS = "registration,name,category,status\n1001,Ana Souza,vigia,active\n"
CARDS = "uid,kind,registration,status\nAA000001,control,1001,active\n"


def test_a_card_reported_lost_in_the_registry_is_blocked_at_the_gate_with_csv_snapshots(tmp_path, sqlite_ledger):
    (tmp_path / "workers.csv").write_text(WORKERS)
    (tmp_path / "cards.csv").write_text(CARDS)
    url = sqlite_ledger(tmp_path / "ledger.db")
    engine = make_engine(url)
    with Session(engine) as s, s.begin():
        import_files(s, workers_csv=tmp_path / "workers.csv", cards_csv=tmp_path / "cards.csv", actor="clerk")
    key = add_gate(tmp_path / "keys", "g1")
    with Mosquitto(tmp_path / "broker") as broker:
        config = CentralConfig(
            database_url=url, port="santos", keys_dir=str(tmp_path / "keys"),
            mqtt=MqttConfig(host=broker.host, port=broker.port, client_id="ledger-santos"),
            ingest=IngestSettings(batch_size=50, writer="thread", gap_grace_s=0.4),
            publish=PublishSettings(source="csv", workers_csv=str(tmp_path / "workers.csv"),
                                    cards_csv=str(tmp_path / "cards.csv")))
        ingest = Ingest(config, create_tables=False).start()
        j = Journal(tmp_path / "g1.journal", port="santos", gate_id="g1", key=read_secret(key), boot_id=str(uuid.uuid4()))
        store = Store(tmp_path / "g1.store", gate_id="g1")
        sync = Sync(MqttConfig(host=broker.host, port=broker.port), j, store, port="santos", gate_id="g1",
                    settings=SyncSettings(check_every_s=0.2)).start()
        try:
            assert ingest.wait_connected(90)
            wait_until(lambda: sync.connected.is_set(), what="the gate connected")
            assert store.block_reason("AA000001") is None
            with Session(engine) as s, s.begin():  # what /w/cartao and the clerk's card action do
                registry.transition_card(s, "AA000001", "lost", actor="worker:1001", now=registry.utcnow())
            wait_until(lambda: store.block_reason("AA000001") is not None, timeout=60,
                       what="the lost card blocked at the gate")
            assert sum(w.stats["blocklist_published"] for w in ingest.workers) >= 1
        finally:
            sync.stop()
            ingest.stop()
            engine.dispose()
