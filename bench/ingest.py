"""Central ingest rate, broker -> ledger committed (dedupe on), into SQLite and PostgreSQL, vs a bare
paho v5 subscriber draining the same queued stream; and with two workers on a shared subscription.

Method: the subscriber's persistent session is created, the N signed events are queued for it in
the broker while it is offline, then it connects and we time until all N are received (baseline) or
committed to the ledger (ingest).

    .venv/bin/python bench/ingest.py [--smoke] [--events N] [--no-postgres]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import func, select  # noqa: E402

from central.config import CentralConfig, IngestSettings  # noqa: E402
from central.db import load_all_tables, make_engine  # noqa: E402
from central.ingest.keys import add_gate  # noqa: E402
from central.ingest.service import Ingest  # noqa: E402
from central.ledger.schema import events  # noqa: E402
from portgate.config import read_secret  # noqa: E402
from portgate.testkit.mosquitto import Mosquitto  # noqa: E402
from wire import topics  # noqa: E402
from wire.connection import MqttConfig, connect_properties, make_client  # noqa: E402
from wire.events import Event, TapPayload, encode, new_event_id, sign  # noqa: E402

PORT = "bench"


def payloads(n: int, key: bytes) -> list[bytes]:
    at = dt.datetime.now(dt.UTC)
    return [
        encode(sign(Event(event_id=new_event_id(), port=PORT, gate_id="g1", boot_id="b", seq=i + 1,
                          occurred_at=at, clock_trusted=True, mono_ns=i,
                          payload=TapPayload(uid=f"{i:08X}", reader_id="r1", reader_kind="control",
                                             decision="deny", registration="1001")), key))
        for i in range(n)
    ]


def publish_all(broker, data: list[bytes]) -> None:
    c = make_client(MqttConfig(), "bench-pub")
    c.max_inflight_messages_set(200)
    c.max_queued_messages_set(0)
    c.connect(broker.host, broker.port)
    c.loop_start()
    infos = [c.publish(topics.gate_events(PORT, "g1"), p, qos=1) for p in data]
    for info in infos:
        info.wait_for_publish(60)
    c.disconnect()
    c.loop_stop()


def bare(broker, data) -> float:
    cfg = MqttConfig(host=broker.host, port=broker.port, receive_maximum=400)
    got = [0]
    done = threading.Event()
    first = [None]

    def on_message(*_a):
        if first[0] is None:
            first[0] = time.perf_counter()
        got[0] += 1
        if got[0] == len(data):
            done.set()

    def session():
        c = make_client(cfg, "bench-bare-sub")
        c.on_message = on_message
        c.on_connect = lambda cl, *a: cl.subscribe(topics.all_gate_events(PORT), 1)
        return c

    c = session()
    c.connect(broker.host, broker.port, clean_start=False, properties=connect_properties(cfg))
    c.loop_start()
    time.sleep(0.5)
    c.disconnect()
    c.loop_stop()
    publish_all(broker, data)
    c = session()
    t = time.perf_counter()
    c.connect(broker.host, broker.port, clean_start=False, properties=connect_properties(cfg))
    c.loop_start()
    done.wait(600)
    elapsed = time.perf_counter() - t
    c.disconnect()
    c.loop_stop()
    return len(data) / elapsed


def ingest(broker, data, url, keys_dir, workers: int, group: str) -> float:
    engine = make_engine(url)
    load_all_tables().create_all(engine)
    cfg = CentralConfig(database_url=url, port=PORT, keys_dir=str(keys_dir), workers=workers,
                        mqtt=MqttConfig(host=broker.host, port=broker.port, client_id=f"bench-{group}"),
                        ingest=IngestSettings(share_group=group, relay_presence=False))
    first = Ingest(cfg, engine=engine).start()
    first.wait_connected()
    time.sleep(0.5)
    first.stop()
    publish_all(broker, data)
    t = time.perf_counter()
    again = Ingest(cfg, engine=engine).start()
    while True:
        with engine.connect() as c:
            if c.execute(select(func.count()).select_from(events)).scalar() >= len(data):
                break
        time.sleep(0.02)
    elapsed = time.perf_counter() - t
    again.stop()
    engine.dispose()
    return len(data) / elapsed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--events", type=int, default=20_000)
    ap.add_argument("--no-postgres", action="store_true")
    args = ap.parse_args()
    n = 500 if args.smoke else args.events
    figures, baseline = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        keys = tmp / "keys"
        key = read_secret(add_gate(keys, "g1"))
        data = payloads(n, key)
        broker = Mosquitto(tmp / "broker").start()
        try:
            baseline["bare_paho_events_per_s"] = round(bare(broker, data), 1)
            figures["sqlite_1_worker"] = round(ingest(broker, data, f"sqlite:///{tmp / 'a.db'}", keys, 1, "s1"), 1)
            figures["sqlite_2_workers"] = round(ingest(broker, data, f"sqlite:///{tmp / 'b.db'}", keys, 2, "s2"), 1)
            if not args.no_postgres:
                from portgate.testkit.postgres import PostgresCluster

                with PostgresCluster() as pg:
                    figures["postgres_1_worker"] = round(ingest(broker, data, pg.create_database("one"), keys, 1, "p1"), 1)
                    figures["postgres_2_workers"] = round(ingest(broker, data, pg.create_database("two"), keys, 2, "p2"), 1)
        finally:
            broker.kill()
    base = baseline["bare_paho_events_per_s"]
    for k, v in figures.items():
        print(f"ingest {k}: {v:,.0f} events/s   (bare paho subscriber {base:,.0f}/s, ratio {v / base:.2f})")
    one = min(v for k, v in figures.items() if k.endswith("_1_worker"))
    print(json.dumps({"bench": "ingest", "figures": {"events": n, **figures}, "baseline": baseline,
                      "ratio": round(one / base, 3), "target": 0.8}))


if __name__ == "__main__":
    main()
