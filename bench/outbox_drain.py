"""Outbox drain rate: N journaled events drained by edge.sync.Sync vs bare paho publishing the same
payloads at QoS 1 with the same in-flight window, against the same private mosquitto.

Baseline and drain take turns for ``--rounds`` rounds (3), each drain on a freshly filled journal,
and the medians are compared; both are timed to the last PUBACK, and the outbox must then be empty.
A QoS 1 subscriber in its own process (``testkit.sink``) stands for the office: without a
subscriber the broker answers "No matching subscribers" and the gate keeps its rows.

The baseline is paho's own path, unchanged: ``publish()`` per payload and paho's PUBACK reader
(``wire.connection.make_client`` without ``fast_pubacks``; it reads the socket as every client of
``wire.connection`` does). The drain's ``wire.qos1_batch`` (a run of publishes as one write, the
PUBACK fast path) is the gate's own code under test, not used by the baseline.

    .venv/bin/python bench/outbox_drain.py [--smoke] [--events N] [--window W] [--rounds R]
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from edge.journal import Journal  # noqa: E402
from edge.rules.model import Now  # noqa: E402
from edge.sync import Sync, SyncSettings  # noqa: E402
from app.demo.mosquitto import Mosquitto  # noqa: E402
from testkit.sink import Sink  # noqa: E402
from wire.connection import MqttConfig, make_client  # noqa: E402
from wire.events import TapPayload, encode  # noqa: E402


def bare(broker, payloads, window) -> float:
    c = make_client(MqttConfig(), "bench-bare")
    c.max_inflight_messages_set(window)
    c.max_queued_messages_set(0)
    slots = threading.Semaphore(window)
    acked = [0]
    done = threading.Event()

    def on_publish(*_a):
        acked[0] += 1
        slots.release()
        if acked[0] == len(payloads):
            done.set()

    c.on_publish = on_publish
    c.connect(broker.host, broker.port, clean_start=False)
    c.loop_start()
    t = time.perf_counter()
    for p in payloads:
        slots.acquire()
        c.publish("portgate/v1/bench/gate/bare/events", p, qos=1)
    done.wait()
    elapsed = time.perf_counter() - t
    c.disconnect()
    c.loop_stop()
    return len(payloads) / elapsed


def drain(broker, journal, n, window) -> float:
    """Until the last PUBACK, as for the baseline (``stats["acked"]``, counted by the uplink; polling
    ``outbox_depth()`` would count the outbox under the journal's lock every few ms); then the
    outbox must empty (the marks follow the acks)."""
    sync = Sync(MqttConfig(host=broker.host, port=broker.port), journal, port="bench", gate_id="g1",
                settings=SyncSettings(window=window, rate=0, high_water=10 * n))
    t = time.perf_counter()
    sync.start()
    while sync.stats["acked"] < n:
        time.sleep(0.005)
    elapsed = time.perf_counter() - t
    deadline = time.monotonic() + 60
    while journal.outbox_depth() > 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    left = journal.outbox_depth()
    sync.stop()
    if left:
        raise SystemExit(f"outbox drain bench: {left} rows still in the outbox after every PUBACK")
    return n / elapsed


def fill(path: Path, n: int) -> Journal:
    journal = Journal(path, port="bench", gate_id="g1", key=b"k" * 32, boot_id="bench")
    now = Now(wall=dt.datetime.now(dt.UTC), mono_ns=time.monotonic_ns())
    for start in range(0, n, 5000):
        journal.append_many(
            [TapPayload(uid=f"{i:08X}", reader_id="r1", reader_kind="control", decision="admit",
                        registration="1001") for i in range(start, min(n, start + 5000))], now=now)
    return journal


def main() -> None:
    from _cli import count, exit_on_signals  # bench/_cli.py (bench/ is sys.path[0])

    exit_on_signals()  # SIGTERM/SIGINT: the clean-up below runs (components stopped, temp dirs removed)
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--events", type=count, default=100_000)
    ap.add_argument("--window", type=count, default=100)
    ap.add_argument("--rounds", type=count, default=3, help="alternating baseline/drain rounds (medians)")
    args = ap.parse_args()
    n = 500 if args.smoke else args.events
    rounds = 1 if args.smoke else max(1, args.rounds)
    bases, ours_runs = [], []
    with tempfile.TemporaryDirectory() as tmp:
        broker = Mosquitto(Path(tmp) / "broker").start()
        try:
            with Sink(broker.host, broker.port, "portgate/v1/bench/gate/+/events"):
                for r in range(rounds):  # baseline and drain take turns; medians are compared
                    journal = fill(Path(tmp) / f"j{r}.db", n)
                    payloads = [encode(e) for e in journal.events_between(1, n)]
                    bases.append(bare(broker, payloads, args.window))
                    ours_runs.append(drain(broker, journal, n, args.window))
        finally:
            broker.kill()
    base, ours = statistics.median(bases), statistics.median(ours_runs)
    print("rounds (drain / bare): " + ", ".join(f"{o:,.0f} / {b:,.0f}" for o, b in zip(ours_runs, bases)))
    ratio = ours / base
    print(f"outbox drain: {ours:,.0f} events/s   bare paho QoS1 window {args.window}: {base:,.0f} events/s   "
          f"ratio {ratio:.2f} (target >= 0.90)")
    print(json.dumps({"bench": "outbox_drain", "figures": {"events": n, "rounds": rounds,
                                                           "events_per_s": round(ours, 1)},
                      "baseline": {"bare_paho_events_per_s": round(base, 1)}, "ratio": round(ratio, 3),
                      "target": 0.9, "met": ratio >= 0.9}))


if __name__ == "__main__":
    main()
