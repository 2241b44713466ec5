"""The scale-out tiers against the embedded default, in the same run (issue 37):

1. **Ingest through the cluster vs through one mosquitto.** ``--gates`` gates (the gate's own
   ``Journal`` and ``Sync``, in this process) each journal ``--events`` signed taps first; then the
   gates connect and drain their outboxes while the office ingests into a fresh SQLite ledger. Timed
   from the gates' start to the last event committed (the ledger's count). Baseline: mosquitto (MQTT
   5) + the MQTT ingest (``central.ingest.service.Ingest``); measured: a 3-node NATS JetStream
   cluster (testkit/nats.py; MQTT 3.1.1 with the three hosts) + the JetStream pull consumer
   (``central.ingest.jetstream.JetStreamIngest``). Target: the cluster ≥ 0.5x the mosquitto rate.
2. **Ledger failover time** (``--failovers`` runs, 5): a Patroni cluster (testkit/patroni.py: 3 etcd
   members, 3 PostgreSQL nodes, synchronous strict); a writer commits one row every 20 ms through
   the office's multi-host URL; the primary is SIGKILLed; the time from the kill to the first commit
   on the new primary, p50 and max; the killed node rejoins before the next run.

    .venv/bin/python bench/cluster.py [--smoke] [--gates 3] [--events 2000] [--rounds 3] [--failovers 5]

``--smoke``: 2 gates x 100 events, 1 round, no failover runs (CI: tests/ops/test_cluster_bench.py).
The last line is the JSON summary ``bench/run_all.py`` reads.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import func, select, text  # noqa: E402

from app.demo.mosquitto import Mosquitto  # noqa: E402
from central.config import CentralConfig, IngestSettings, NatsSettings  # noqa: E402
from central.db import make_engine  # noqa: E402
from central.ingest.jetstream import JetStreamIngest  # noqa: E402
from central.ingest.keys import add_gate  # noqa: E402
from central.ingest.service import Ingest  # noqa: E402
from central.ledger.migrate import upgrade  # noqa: E402
from central.ledger.schema import events  # noqa: E402
from edge.journal import Journal  # noqa: E402
from edge.rules.model import Now  # noqa: E402
from edge.sync import Sync  # noqa: E402
from portgate.config import read_secret  # noqa: E402
from testkit.nats import start_cluster  # noqa: E402
from testkit.patroni import HaLedger  # noqa: E402
from wire.connection import MqttConfig  # noqa: E402
from wire.events import TapPayload  # noqa: E402

PORT = "santos"
TARGET = 0.5


def journals(tmp: Path, keys: Path, gates: int, n: int) -> list[Journal]:
    now = Now(wall=dt.datetime.now(dt.UTC), mono_ns=time.monotonic_ns(), clock_trusted=True)
    out = []
    for g in range(gates):
        gate = f"g{g + 1}"
        j = Journal(tmp / f"{gate}.journal.db", port=PORT, gate_id=gate, key=read_secret(keys / f"{gate}.key"),
                    boot_id=str(uuid.uuid4()))
        for start in range(0, n, 1000):
            j.append_many([TapPayload(uid=f"F{g:01X}{i:06X}", reader_id="r-control", reader_kind="control",
                                      decision="deny", rules_failed=["G1"], message="Cartão desconhecido")
                           for i in range(start, min(n, start + 1000))], now=now)
        out.append(j)
    return out


def ledger_count(engine) -> int:
    with engine.connect() as c:
        return c.execute(select(func.count()).select_from(events)).scalar_one()


def drain(tmp: Path, keys: Path, gates: int, n: int, office: CentralConfig, gate_mqtt: MqttConfig,
          ingest_cls) -> float:
    """Events per second from the gates' start to the last commit, into a fresh ledger."""
    url = office.database_url
    upgrade(url)
    js = journals(tmp, keys, gates, n)
    ingest = ingest_cls(office, create_tables=False).start()
    engine = make_engine(url)
    try:
        if not ingest.wait_connected(30):
            raise SystemExit("cluster bench: the office ingest did not connect")
        t0 = time.perf_counter()
        syncs = [Sync(gate_mqtt, j, port=PORT, gate_id=f"g{i + 1}").start() for i, j in enumerate(js)]
        total = gates * n
        deadline = time.monotonic() + 600
        while ledger_count(engine) < total:
            if time.monotonic() > deadline:
                raise SystemExit(f"cluster bench: {ledger_count(engine)} of {total} events after 600 s")
            time.sleep(0.05)
        elapsed = time.perf_counter() - t0
        for s in syncs:
            s.stop()
        return total / elapsed
    finally:
        ingest.stop()
        engine.dispose()


def ingest_rates(args) -> tuple[list[float], list[float]]:
    mosq_runs, nats_runs = [], []
    ingest = IngestSettings(batch_size=200, gap_grace_s=2.0, replay_every_s=2.0, tail_grace_s=5.0, writer="thread")
    with tempfile.TemporaryDirectory(prefix="portgate-bench-cluster-") as d:
        root = Path(d)
        keys = root / "keys"
        keys.mkdir()
        for g in range(args.gates):
            add_gate(keys, f"g{g + 1}")
        for r in range(args.rounds):  # the two take turns, each on fresh brokers; medians are compared
            run = root / f"m{r}"
            run.mkdir()
            broker = Mosquitto(run / "mosquitto").start()
            try:
                office = CentralConfig(database_url=f"sqlite:///{run / 'ledger.db'}", port=PORT, keys_dir=str(keys),
                                       mqtt=MqttConfig(host=broker.host, port=broker.port, client_id="ledger-santos"),
                                       ingest=ingest)
                mosq_runs.append(drain(run, keys, args.gates, args.events, office,
                                       MqttConfig(host=broker.host, port=broker.port), Ingest))
            finally:
                broker.kill()
            run = root / f"n{r}"
            run.mkdir()
            cluster = start_cluster(run / "nats")
            try:
                hosts = [f"{h}:{p}" for h, p in cluster.mqtt_hosts]
                gate_mqtt = MqttConfig(protocol="3.1.1", hosts=hosts, reconnect_min_s=0.2, reconnect_max_s=1)
                office = CentralConfig(
                    database_url=f"sqlite:///{run / 'ledger.db'}", port=PORT, keys_dir=str(keys),
                    mqtt=MqttConfig(protocol="3.1.1", hosts=hosts, client_id="ledger-santos"), ingest=ingest,
                    nats=NatsSettings(servers=cluster.nats_urls, ack_wait_s=10.0, fetch_wait_s=0.2))
                nats_runs.append(drain(run, keys, args.gates, args.events, office, gate_mqtt, JetStreamIngest))
            finally:
                cluster.stop()
            print(f"round {r + 1}: mosquitto {mosq_runs[-1]:,.0f} events/s   NATS cluster {nats_runs[-1]:,.0f} events/s",
                  flush=True)
    return mosq_runs, nats_runs


def failover_times(runs: int) -> list[float]:
    """Seconds from the primary's SIGKILL to the first commit on the new primary, ``runs`` times."""
    times = []
    with HaLedger() as ha:
        engine = make_engine(ha.url, pool_pre_ping=True)
        with engine.begin() as c:
            c.execute(text("CREATE TABLE beat (id bigserial PRIMARY KEY, at timestamptz NOT NULL DEFAULT now())"))
        for r in range(runs):
            ha.wait_ready(120)
            killed = ha.primary()
            committed: list[float] = []
            stop = threading.Event()

            def beat():
                while not stop.is_set():
                    try:
                        with engine.begin() as c:
                            c.execute(text("INSERT INTO beat DEFAULT VALUES"))
                        committed.append(time.monotonic())
                    except Exception:  # noqa: BLE001 - failing over: the office retries the same way
                        engine.dispose()
                    time.sleep(0.02)

            t = threading.Thread(target=beat, daemon=True)
            t.start()
            time.sleep(0.5)
            killed_at = time.monotonic()
            ha.kill(killed)
            while not [c for c in committed if c > killed_at + 0.05]:
                if time.monotonic() - killed_at > 120:
                    raise SystemExit("cluster bench: no commit 120 s after the primary was killed")
                time.sleep(0.02)
            first = next(c for c in committed if c > killed_at + 0.05)
            times.append(first - killed_at)
            stop.set()
            t.join(5)
            print(f"failover {r + 1}: {killed} killed, first commit on {ha.primary()} after {times[-1]:.1f} s",
                  flush=True)
            ha.start_node(killed)  # rejoins as a replica (pg_rewind) before the next run
        engine.dispose()
    return times


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--gates", type=int, default=3)
    ap.add_argument("--events", type=int, default=2000, help="taps journaled per gate")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--failovers", type=int, default=5)
    args = ap.parse_args()
    if args.smoke:
        args.gates, args.events, args.rounds, args.failovers = 2, 100, 1, 0
    mosq, nats = ingest_rates(args)
    base, ours = statistics.median(mosq), statistics.median(nats)
    ratio = ours / base
    print(f"ingest, {args.gates} gates x {args.events} taps: NATS cluster {ours:,.0f} events/s   "
          f"mosquitto {base:,.0f} events/s   ratio {ratio:.2f} (target >= {TARGET})")
    figures = {"gates": args.gates, "events_per_gate": args.events, "rounds": args.rounds,
               "cluster_events_per_s": round(ours, 1)}
    if args.failovers:
        times = failover_times(args.failovers)
        figures["failover_p50_s"] = round(statistics.median(times), 2)
        figures["failover_max_s"] = round(max(times), 2)
        print(f"ledger failover (kill -> first commit on the new primary), {len(times)} runs: "
              f"p50 {figures['failover_p50_s']} s, max {figures['failover_max_s']} s")
    print(json.dumps({"bench": "cluster", "figures": figures,
                      "baseline": {"mosquitto_events_per_s": round(base, 1)}, "ratio": round(ratio, 3),
                      "target": TARGET, "met": ratio >= TARGET}))


if __name__ == "__main__":
    main()
