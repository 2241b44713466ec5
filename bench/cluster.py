"""The scale-out tiers against the embedded default, in the same run (issue 37):

1. **Ingest through the cluster vs through one mosquitto.** ``--gates`` gates (the gate's own
   ``Journal`` and ``Sync``, in this process) each journal ``--events`` signed taps first; then the
   gates connect and drain their outboxes while the office ingests into a fresh SQLite ledger. Timed
   from the gates' start to the last event committed (the ledger's count). Each gate's persistent
   broker session is made before the clock starts (``open_sessions``), on both brokers alike, as a
   gate that was online before its outage has it: a new session's three QoS 1 subscriptions cost
   NATS about 2 s per gate once in the gate's life (three replicated JetStream consumers, made
   before the connection reads on), which at 2,000 taps a gate was half the measured time; that
   set-up time is printed apart, and ``--cold`` times it within the drain as before. Baseline: mosquitto (MQTT
   5) + the MQTT ingest (``central.ingest.service.Ingest``); measured: a 3-node NATS JetStream
   cluster (testkit/nats.py; MQTT 3.1.1 with the three hosts) + the JetStream pull consumer
   (``central.ingest.jetstream.JetStreamIngest``). Target: the cluster ≥ 0.5x the mosquitto rate.
   The cluster's gates run with ``[sync] lanes = 3`` (``--lanes``; docs/operations.md recommends one
   lane per node: NATS's MQTT layer stores one connection's QoS 1 publishes one at a time), their
   lanes' publish-only sessions made beforehand too; mosquitto's gates with the default, one
   connection (the gate refuses lanes on MQTT 5). ``--lanes 1`` times the cluster as before.
2. **Ledger failover time** (``--failovers`` runs, 5): a Patroni cluster (testkit/patroni.py: 3 etcd
   members, 3 PostgreSQL nodes, synchronous strict); a writer commits one row every 20 ms through
   the office's multi-host URL; the primary is SIGKILLed; the time from the kill to the first commit
   on the new primary, p50 and max; the killed node rejoins before the next run.

    .venv/bin/python bench/cluster.py [--smoke] [--gates 3] [--events 2000] [--rounds 3] [--failovers 5] [--cold] [--batch-size 200]
        [--lanes 3]

``--smoke``: 2 gates x 100 events, 1 round, no failover runs (CI: tests/ops/test_cluster_bench.py).
The last line is the JSON summary ``bench/run_all.py`` reads.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
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
from edge.sync.settings import SyncSettings  # noqa: E402
from portgate.config import read_secret  # noqa: E402
from testkit.nats import start_cluster  # noqa: E402
from testkit.patroni import HaLedger  # noqa: E402
from wire import connection, topics  # noqa: E402
from wire.connection import MqttConfig  # noqa: E402
from wire.events import TapPayload  # noqa: E402

PORT = "santos"
TARGET = 0.5
LANES = 3  # [sync] lanes of the cluster's gates: docs/operations.md recommends one per node


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


def open_sessions(gate_mqtt: MqttConfig, gates: int, lanes: int = 1) -> float:
    """Each gate's persistent broker session made once, as a gate that was online before its outage
    has it: its client id connects (``clean_session=False`` / a v5 session expiry), subscribes what
    ``edge.sync.Sync`` subscribes (commands, receipts, downlinks; QoS 1) and disconnects; with
    ``lanes`` > 1 (``[sync] lanes``) its publish-only lanes' client ids connect too. Returns the
    seconds it took for all the gates, one after the other. On NATS each QoS 1 subscription of a
    new session is a replicated JetStream consumer made before the connection reads on (0.3-0.9 s
    each, measured); a session found again subscribes at once."""
    t0 = time.perf_counter()
    for g in range(gates):
        gate_id = f"g{g + 1}"
        subs = [(topics.gate_cmd(PORT, gate_id), 1), (topics.gate_receipt(PORT, gate_id), 1),
                (topics.downlink_filter(PORT), 1)]
        _session(gate_mqtt, f"gate-{PORT}-{gate_id}", subs)
        for k in range(1, lanes):
            _session(gate_mqtt, f"gate-{PORT}-{gate_id}-lane{k}", [])
    return time.perf_counter() - t0


def _session(gate_mqtt: MqttConfig, client_id: str, subs: list) -> None:
    """Connect ``client_id`` with a persistent session, subscribe ``subs`` (none: connect only) and
    disconnect; ``SystemExit`` after 120 s without it."""
    client = connection.make_client(gate_mqtt, client_id)
    done = threading.Event()
    if subs:
        client.on_connect = lambda c, *_a: c.subscribe(subs)
        client.on_subscribe = lambda *_a: done.set()
    else:
        client.on_connect = lambda *_a: done.set()
    connection.start(client, gate_mqtt)
    try:
        if not done.wait(120):
            raise SystemExit(f"cluster bench: the session of {client_id} not set up in 120 s")
    finally:
        client.disconnect()
        client.loop_stop()


def thread_cpu_s(thread) -> float:
    """CPU seconds (user + system) the thread has used so far (``/proc/self/task/<tid>/stat``); 0.0
    without a thread or outside Linux."""
    tid = getattr(thread, "native_id", None)
    try:
        fields = Path(f"/proc/self/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def drain(tmp: Path, keys: Path, gates: int, n: int, office: CentralConfig, gate_mqtt: MqttConfig,
          ingest_cls, *, cold: bool = False, sync: SyncSettings = SyncSettings()) -> tuple[float, float, float, float]:
    """``(events per second, session set-up seconds, events per committed batch, the JetStream ingest
    thread's CPU seconds during the drain)``: the gates' sessions
    made first (``open_sessions``; ``cold``: not, and then 0.0), then the rate from the gates' start
    to the last commit, into a fresh ledger. The batch size is the JetStream ingest's (its
    ``stats``: acknowledged / batches) and the CPU its asyncio thread used (the fetches and acks; the
    writer has its own); 0.0 for the MQTT ingest. ``sync``: the gates' ``[sync]`` settings."""
    url = office.database_url
    upgrade(url)
    js = journals(tmp, keys, gates, n)
    ingest = ingest_cls(office, create_tables=False).start()
    engine = make_engine(url)
    try:
        if not ingest.wait_connected(30):
            raise SystemExit("cluster bench: the office ingest did not connect")
        setup = 0.0 if cold else open_sessions(gate_mqtt, gates, sync.lanes)
        thread = getattr(ingest, "_thread", None)
        cpu0 = thread_cpu_s(thread)
        t0 = time.perf_counter()
        syncs = [Sync(gate_mqtt, j, port=PORT, gate_id=f"g{i + 1}", settings=sync).start() for i, j in enumerate(js)]
        total = gates * n
        deadline = time.monotonic() + 600
        while ledger_count(engine) < total:
            if time.monotonic() > deadline:
                raise SystemExit(f"cluster bench: {ledger_count(engine)} of {total} events after 600 s")
            time.sleep(0.05)
        elapsed = time.perf_counter() - t0
        cpu = thread_cpu_s(thread) - cpu0
        for s in syncs:
            s.stop()
        stats = getattr(ingest, "stats", {})
        batch = stats.get("acked", 0) / stats["batches"] if stats.get("batches") else 0.0
        return total / elapsed, setup, batch, cpu
    finally:
        ingest.stop()
        engine.dispose()


def ingest_rates(args) -> tuple[list[tuple], list[tuple]]:
    """Per round ``(events/s, session set-up s, events a batch, ingest thread CPU s)`` of mosquitto and of the cluster (``drain``)."""
    mosq_runs, nats_runs = [], []
    ingest = IngestSettings(batch_size=args.batch_size, gap_grace_s=2.0, replay_every_s=2.0, tail_grace_s=5.0, writer="thread")
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
                                       MqttConfig(host=broker.host, port=broker.port), Ingest, cold=args.cold))
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
                nats_runs.append(drain(run, keys, args.gates, args.events, office, gate_mqtt, JetStreamIngest,
                                       cold=args.cold, sync=SyncSettings(lanes=args.lanes)))
            finally:
                cluster.stop()
            print(f"round {r + 1}: mosquitto {mosq_runs[-1][0]:,.0f} events/s   NATS cluster {nats_runs[-1][0]:,.0f} events/s"
                  f"   (gates' sessions set up first: mosquitto {mosq_runs[-1][1]:.2f} s, NATS {nats_runs[-1][1]:.2f} s;"
                  f" NATS {nats_runs[-1][2]:.0f} events a batch, ingest thread CPU {nats_runs[-1][3]:.2f} s)",
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
    from _cli import at_least_zero, count, exit_on_signals  # bench/_cli.py (bench/ is sys.path[0])

    exit_on_signals()  # SIGTERM/SIGINT: the clean-up below runs (components stopped, temp dirs removed)
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--gates", type=count, default=3)
    ap.add_argument("--events", type=count, default=2000, help="taps journaled per gate")
    ap.add_argument("--rounds", type=count, default=3)
    ap.add_argument("--batch-size", type=count, default=200, help="[ingest] batch_size of both offices")
    ap.add_argument("--failovers", type=at_least_zero, default=5)
    ap.add_argument("--lanes", type=count, default=LANES,
                    help="[sync] lanes of the gates on the NATS cluster (mosquitto's gates: 1, the default)")
    ap.add_argument("--cold", action="store_true",
                    help="time the gates' first connect too (their sessions' set-up, not made beforehand)")
    args = ap.parse_args()
    if args.smoke:
        args.gates, args.events, args.rounds, args.failovers = 2, 100, 1, 0
    mosq, nats = ingest_rates(args)
    base, ours = statistics.median(r[0] for r in mosq), statistics.median(r[0] for r in nats)
    ratio = ours / base
    sessions = "new sessions, set-up timed" if args.cold else "sessions set up beforehand"
    print(f"ingest, {args.gates} gates x {args.events} taps ({sessions}): NATS cluster {ours:,.0f} events/s   "
          f"mosquitto {base:,.0f} events/s   ratio {ratio:.2f} (target >= {TARGET})")
    figures = {"gates": args.gates, "events_per_gate": args.events, "rounds": args.rounds,
               "cluster_events_per_s": round(ours, 1), "sessions": "cold" if args.cold else "warm",
               "session_setup_s": round(statistics.median(r[1] for r in nats), 2), "batch_size": args.batch_size,
               "lanes": args.lanes,
               "ingest_thread_cpu_s": round(statistics.median(r[3] for r in nats), 3)}
    if args.failovers:
        times = failover_times(args.failovers)
        figures["failover_p50_s"] = round(statistics.median(times), 2)
        figures["failover_max_s"] = round(max(times), 2)
        print(f"ledger failover (kill -> first commit on the new primary), {len(times)} runs: "
              f"p50 {figures['failover_p50_s']} s, max {figures['failover_max_s']} s")
    print(json.dumps({"bench": "cluster", "figures": figures,
                      "baseline": {"mosquitto_events_per_s": round(base, 1),
                                   "mosquitto_session_setup_s": round(statistics.median(r[1] for r in mosq), 2)},
                      "ratio": round(ratio, 3),
                      "target": TARGET, "met": ratio >= TARGET}))


if __name__ == "__main__":
    main()
