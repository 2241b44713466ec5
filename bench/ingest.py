"""Central ingest rate, broker -> ledger committed (dedupe on), into SQLite and PostgreSQL, vs a bare
paho v5 subscriber (DESIGN.md target: one worker >= 1x of it on each database, ``ratio``
``sqlite_to_paho`` / ``postgres_to_paho``) and ``mosquitto_sub`` (the C client: the broker's delivery
ceiling, shown as information: no target) draining the same queued stream; and with two workers on
a shared subscription.

Both run in this process with the collector settings of ``portgate central run``
(portgate/gctune.py). Method: the subscriber's persistent session is created, the N signed events are queued for it in
the broker while it is offline, then it connects and we time until all N are received (baseline) or
committed to the ledger (ingest: the workers' own count, reported after each commit; the ledger
is checked to hold exactly N events at the end). The ingest's clock starts at ``start()``, the
bare subscriber's at ``connect()``.

The baselines (paho, then the C client: from its process start to its exit after the N-th message)
and the one-worker ingests take turns for ``--rounds`` rounds (3) and the medians are
compared (a shared machine's noise hits both alike); two workers are measured once.

    .venv/bin/python bench/ingest.py [--smoke] [--events N] [--rounds R] [--no-postgres] [--signed]

``--signed``: the events are chained and Ed25519-signed by a gate whose key is registered, so the
ingest verifies every signature and link (issue 20); the same run also drains the same number of
HMAC-only events of another gate each round (``*_unsigned``) and prints the ratio (target >= 0.6,
issue 32 item 5). The ingests compared with paho are then the signed ones (paho receives the same
signed stream).
``--verify-processes N``: the writer's signature helpers (``[ingest] verify_processes``, 1).

Each writer child process runs this file again as its ``__mp_main__`` (multiprocessing), so its
top-level imports stay as light as ``portgate central run``'s (``ingest`` imports the service).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import msgspec
import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import func, select  # noqa: E402

from central.config import CentralConfig, IngestSettings  # noqa: E402
from central.db import load_all_tables, make_engine  # noqa: E402
from central.ingest.keys import add_gate  # noqa: E402
from central.ledger.schema import events  # noqa: E402
from portgate.config import read_secret  # noqa: E402
from portgate.gctune import tune_for_service  # noqa: E402
from app.demo.mosquitto import Mosquitto  # noqa: E402
from wire import topics  # noqa: E402
from wire.connection import MqttConfig, connect_properties, make_client  # noqa: E402
from wire.events import Event, TapPayload, encode, new_event_id, sign  # noqa: E402
from wire.chain import GENESIS, new_private_key, public_pem, seal  # noqa: E402

PORT = "bench"


def payloads(n: int, key: bytes, signer=None, gate: str = "g1") -> list[bytes]:
    """``n`` tap events of ``gate``; with ``signer`` (Ed25519) chained and signed (wire.chain)."""
    at = dt.datetime.now(dt.UTC)
    out, head = [], GENESIS
    for i in range(n):
        ev = Event(event_id=new_event_id(), port=PORT, gate_id=gate, boot_id="b", seq=i + 1,
                   occurred_at=at, clock_trusted=True, mono_ns=i,
                   payload=TapPayload(uid=f"{i:08X}", reader_id="r1", reader_kind="control",
                                      decision="deny", registration="1001"))
        if signer is None:
            out.append(encode(sign(ev, key)))
        else:
            ev, head = seal(msgspec.structs.replace(ev, prev=head), signer, key)
            out.append(encode(ev))
    return out


def publish_all(broker, data: list[bytes]) -> None:
    c = make_client(MqttConfig(), "bench-pub")
    c.max_inflight_messages_set(200)
    c.max_queued_messages_set(0)
    c.connect(broker.host, broker.port)
    c.loop_start()
    gate = msgspec.json.decode(data[0])["gate_id"]
    infos = [c.publish(topics.gate_events(PORT, gate), p, qos=1) for p in data]
    for info in infos:
        info.wait_for_publish(60)
    c.disconnect()
    c.loop_stop()


def forget_sessions(broker, client_ids: list[str]) -> None:
    """End the persistent sessions a measurement left on the broker (a clean start with expiry 0).
    Left in place, each would keep a share-group or wildcard subscription and collect a copy of
    every later round's events: the broker's queues grew round after round and later rounds, the
    two-worker ones last of all, ran slower for it."""
    for client_id in client_ids:
        c = make_client(MqttConfig(), client_id)
        done = threading.Event()
        c.on_connect = lambda *_a: done.set()
        c.connect(broker.host, broker.port, clean_start=True,
                  properties=connect_properties(MqttConfig(session_expiry_s=0)))
        c.loop_start()
        done.wait(10)
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
        # paho's own client, as shipped (not wire.connection's, whose PUBLISH fast path would
        # move the baseline with the code under test)
        c = paho.Client(CallbackAPIVersion.VERSION2, client_id="bench-bare-sub", protocol=paho.MQTTv5)
        c.max_queued_messages_set(0)
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
    forget_sessions(broker, ["bench-bare-sub"])
    return len(data) / elapsed


def c_client(broker, data) -> float:
    """``mosquitto_sub`` (the C client, QoS 1, persistent session) draining the same queued stream:
    the broker's delivery ceiling. Timed from its start until it exits after the N-th message."""
    exe = shutil.which("mosquitto_sub")
    if exe is None:
        raise SystemExit("ingest bench: mosquitto_sub not found (Debian package mosquitto-clients)")
    cmd = [exe, "-h", broker.host, "-p", str(broker.port), "-V", "mqttv5", "-i", "bench-c-sub", "-c",
           "-x", "600", "-q", "1", "-t", topics.all_gate_events(PORT)]
    subprocess.run([*cmd, "-W", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    publish_all(broker, data)
    t = time.perf_counter()
    done = subprocess.run([*cmd, "-C", str(len(data)), "-W", "600"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - t
    forget_sessions(broker, ["bench-c-sub"])
    if done.returncode != 0:
        raise SystemExit(f"ingest bench: mosquitto_sub failed: {done.stderr.decode(errors='replace')[-200:]}")
    return len(data) / elapsed


def ingest(broker, data, url, keys_dir, workers: int, group: str, verify_processes: int = 1) -> float:
    # Imported here: multiprocessing runs the main module again in each writer child (as
    # ``__mp_main__``); ``portgate central run``'s main (app/cli.py) imports nothing heavy, but this
    # import at the top (alembic, through central.ledger.migrate) cost each child ~100 ms inside
    # the timed interval, a cost the service does not have.
    from central.ingest.service import Ingest

    engine = make_engine(url)
    load_all_tables().create_all(engine)
    cfg = CentralConfig(database_url=url, port=PORT, keys_dir=str(keys_dir), workers=workers,
                        mqtt=MqttConfig(host=broker.host, port=broker.port, client_id=f"bench-{group}"),
                        ingest=IngestSettings(share_group=group, relay_presence=False,
                                              verify_processes=verify_processes))
    first = Ingest(cfg, engine=engine).start()
    try:  # stopped on SIGTERM too (bench/_cli.py): its writer processes ignore SIGTERM
        first.wait_connected()
        time.sleep(0.5)
    finally:
        first.stop()
    publish_all(broker, data)
    again = Ingest(cfg, engine=engine)
    t = time.perf_counter()
    again.start()
    try:
        while sum(w.stats["inserted"] for w in again.workers) < len(data):  # reported after each commit
            time.sleep(0.005)
        elapsed = time.perf_counter() - t
    finally:
        again.stop()
    forget_sessions(broker, [f"bench-{group}-{i}{end}" for i in range(workers) for end in ("", "-writer")])
    with engine.connect() as c:  # and the ledger agrees
        stored = c.execute(select(func.count()).select_from(events)).scalar()
    if stored != len(data):
        raise SystemExit(f"ingest bench: {stored} events in the ledger, expected {len(data)}")
    engine.dispose()
    return len(data) / elapsed


def main() -> None:
    from _cli import count, exit_on_signals  # bench/_cli.py (bench/ is sys.path[0])

    exit_on_signals()  # SIGTERM/SIGINT: the clean-up below runs (components stopped, temp dirs removed)
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--events", type=count, default=20_000)
    ap.add_argument("--rounds", type=count, default=3, help="alternating baseline/ingest rounds (medians)")
    ap.add_argument("--no-postgres", action="store_true")
    ap.add_argument("--signed", action="store_true",
                    help="signed, chained events from a gate with a registered key (verified on ingest)")
    ap.add_argument("--verify-processes", type=count, default=1, help="[ingest] verify_processes")
    args = ap.parse_args()
    n = 500 if args.smoke else args.events
    rounds = 1 if args.smoke else max(1, args.rounds)
    tune_for_service()
    runs: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        keys = tmp / "keys"
        key = read_secret(add_gate(keys, "g1"))
        signer = None
        if args.signed:
            from central.ingest.keys import register_public_key

            signer = new_private_key()
            register_public_key(keys, "g1", public_pem(signer.public_key()))
        data = payloads(n, key, signer)
        plain = payloads(n, read_secret(add_gate(keys, "g2")), None, "g2") if signer is not None else None
        broker = Mosquitto(tmp / "broker").start()
        if args.no_postgres:
            cluster = contextlib.nullcontext(None)
        else:
            from testkit.postgres import PostgresCluster

            cluster = PostgresCluster()
        try:
            with cluster as pg:
                def measure(name: str, url: str, workers: int, events=data) -> None:
                    group = f"{name}-{len(runs.get(name, []))}".replace("_", "-")
                    runs.setdefault(name, []).append(
                        ingest(broker, events, url, keys, workers, group, args.verify_processes))

                for r in range(rounds):  # the baseline and the one-worker ingests take turns
                    runs.setdefault("bare", []).append(bare(broker, data))
                    runs.setdefault("c_client", []).append(c_client(broker, data))
                    measure("sqlite_1_worker", f"sqlite:///{tmp / f's1-{r}.db'}", 1)
                    if plain is not None:
                        measure("sqlite_1_worker_unsigned", f"sqlite:///{tmp / f'u1-{r}.db'}", 1, plain)
                    if pg is not None:
                        measure("postgres_1_worker", pg.create_database(f"one{r}"), 1)
                        if plain is not None:
                            measure("postgres_1_worker_unsigned", pg.create_database(f"uone{r}"), 1, plain)
                measure("sqlite_2_workers", f"sqlite:///{tmp / 's2.db'}", 2)
                if pg is not None:
                    measure("postgres_2_workers", pg.create_database("two"), 2)
        finally:
            broker.kill()
    import statistics  # (not at the top: fractions, 12 ms, in every writer child; the docstring)

    base = statistics.median(runs["bare"])
    c_base = statistics.median(runs["c_client"])
    figures = {k: round(statistics.median(v), 1) for k, v in runs.items() if k not in ("bare", "c_client")}
    print(f"bare paho subscriber: {', '.join(f'{v:,.0f}' for v in runs['bare'])} events/s (median {base:,.0f})")
    print(f"mosquitto_sub (C): {', '.join(f'{v:,.0f}' for v in runs['c_client'])} events/s "
          f"(median {c_base:,.0f})")
    for k, v in figures.items():
        each = ", ".join(f"{x:,.0f}" for x in runs[k])
        print(f"ingest {k}: {each} events/s (median {v:,.0f}; ratio to the bare paho median "
              f"{v / base:.2f}, to the C client's {v / c_base:.3f})")
    one = min(v for k, v in figures.items() if k.endswith("_1_worker"))
    ratio = {"to_paho": round(one / base, 3), "to_c_client": round(one / c_base, 3)}
    for db in ("sqlite", "postgres"):
        if f"{db}_1_worker" in figures:
            ratio[f"{db}_to_paho"] = round(figures[f"{db}_1_worker"] / base, 3)
            print(f"{db}: one worker / bare paho, same stream: {ratio[f'{db}_to_paho']:.2f} (target >= 1)")
    if plain is not None:
        for db in ("sqlite", "postgres"):
            if f"{db}_1_worker_unsigned" in figures:
                r = figures[f"{db}_1_worker"] / figures[f"{db}_1_worker_unsigned"]
                ratio[f"{db}_signed_to_unsigned"] = round(r, 3)
                print(f"{db}: signed (verified) / unsigned, same run: {r:.2f} (target >= 0.6)")
    print(json.dumps({"bench": "ingest", "figures": {"events": n, "rounds": rounds, "signed": args.signed, **figures},
                      "baseline": {"bare_paho_events_per_s": round(base, 1),
                                   "mosquitto_sub_events_per_s": round(c_base, 1)},
                      "ratio": ratio, "target": {"to_paho": 1, "signed_to_unsigned": 0.6},
                      "met": all(v >= 1 for k, v in ratio.items() if k.endswith("_to_paho") and k != "to_paho")
                      and all(v >= 0.6 for k, v in ratio.items() if k.endswith("_signed_to_unsigned"))}))


if __name__ == "__main__":
    main()
