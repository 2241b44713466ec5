"""Benchmark: gate decision latency, read -> journal committed -> indicator, and the gate's memory.

Sizes (DESIGN.md): 50,000 workers on the roster (100,000 cards), 1,000,000 events in the journal;
``--smoke``: 500 workers, 2,000 events. The baseline is a bare SQLite ``synchronous=FULL`` (WAL)
commit of one row, measured in the same run, in the same directory, interleaved with the gate reads
(one baseline commit, one gate read, ...) so both see the same disk and the same noise.

The store and journal are built by one subprocess (journal rows with ``executemany``); a second,
fresh subprocess opens them like a booting gate, runs the reads through the real ``GateLoop``
(pairing, ``decide``, journal commit, indicator, store effects) and reports its peak RSS
(``resource.getrusage``).

Figures: p50/p99 of read -> indicator shown (the target) and of the whole read handling (including
the store update after the light), baseline p50/p99, ratios, peak RSS. Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GATE, SHIP, PORT = "g-bench", "9311111", "santos"
KEY = b"bench-key"
# 2026-03-15 01:20 local (UTC-3): inside the 01-07 period of the bench escala
T0 = dt.datetime(2026, 3, 15, 4, 20, tzinfo=dt.UTC)


def build(state: Path, workers: int, events: int) -> None:
    """Create store.db (roster + escala) and journal.db (``events`` rows) under ``state``."""
    from edge.journal import Journal
    from edge.store import Store
    from portgate.records import Berth, Card, CardKind, CardStatus, EscalaEntry, Voyage, Worker, WorkerStatus
    from wire import events as wire

    store = Store(state / "store.db", gate_id=GATE, ship=SHIP)
    ws = [Worker(f"W{i:06d}", f"Worker {i}", "vigia", WorkerStatus.ACTIVE,
                 health_exam_date=dt.date(2025, 6, 1), rotation_number=i) for i in range(workers)]
    cs = [Card(f"0A{i:08X}", CardKind.CONTROL, f"W{i:06d}", CardStatus.ACTIVE) for i in range(workers)]
    cs += [Card(f"0B{i:08X}", CardKind.BADGE, f"W{i:06d}", CardStatus.ACTIVE) for i in range(workers)]
    store.replace_roster(1, ws, cs, T0)
    dispatched = min(workers // 5, 2000)
    escala = [EscalaEntry(dt.date(2026, 3, 15), "01-07", SHIP, "Bench", Voyage.LONG_HAUL, Berth.BERTHED,
                          GATE, f"post{i}", "vigia", f"W{i:06d}") for i in range(dispatched)]
    escala += [EscalaEntry(dt.date(2026, 3, 15), "01-07", "9322222", "Other", Voyage.LONG_HAUL,
                           Berth.BERTHED, "g-other", f"post{i}", "vigia", f"W{i:06d}")
               for i in range(dispatched, 2 * dispatched)]
    store.replace_escala(1, escala, T0)
    store.close()

    journal = Journal(state / "journal.db", port=PORT, gate_id=GATE, key=KEY, boot_id="build")
    journal.close()
    template = wire.sign(wire.Event(
        event_id="00000000-0000-0000-0000-000000000000", port=PORT, gate_id=GATE, boot_id="build",
        seq=0, occurred_at=T0 - dt.timedelta(days=30), clock_trusted=True, mono_ns=0,
        payload=wire.TapPayload(uid="0A00000001", reader_id="r", reader_kind="control", decision="deny",
                                rules_failed=["G6"], flags=["NOT_DISPATCHED"], message="x" * 60),
    ), KEY)
    body = wire.encode(template)
    conn = sqlite3.connect(state / "journal.db")
    conn.execute("PRAGMA synchronous=OFF")  # build only; the gate reopens it with FULL
    created = template.occurred_at.isoformat()
    batch = 50_000
    for start in range(1, events + 1, batch):
        rows = [(s, f"{s:08d}-0000-4000-8000-000000000000", 0, "tap", body, 1, created)
                for s in range(start, min(start + batch, events + 1))]
        conn.executemany("INSERT INTO journal (seq, event_id, priority, kind, body, sent, created_at)"
                         " VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


class _Shown:
    """Indicator that timestamps the moment the decision is shown."""

    def __init__(self) -> None:
        self.at = 0.0

    def show(self, decision, lang="pt", *, event=None) -> None:
        self.at = time.perf_counter()


def measure(state: Path, workers: int, reads: int, seed: int) -> dict:
    """Open the built files like a booting gate and time ``reads`` reads, interleaved with bare
    SQLite FULL commits. Runs in a fresh process; returns figures and peak RSS."""
    import resource

    from drivers.base import CardRead
    from edge.clock import FakeClock
    from edge.journal import Journal
    from edge.loop import GateLoop
    from edge.rules.rulebook import default_gate_rulebook
    from edge.store import Store
    from portgate.records import ReaderKind

    store = Store(state / "store.db", gate_id=GATE, ship=SHIP, boot_id="bench")
    journal = Journal(state / "journal.db", port=PORT, gate_id=GATE, key=KEY, boot_id="bench")
    clock = FakeClock(T0)
    shown = _Shown()
    loop = GateLoop(readers=[], store=store, journal=journal, clock=clock, indicator=shown,
                    rulebook=default_gate_rulebook())
    base = sqlite3.connect(state / "baseline.db", isolation_level=None)
    base.execute("PRAGMA journal_mode=WAL")
    base.execute("PRAGMA synchronous=FULL")
    base.execute("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, body BLOB)")
    payload = os.urandom(400)  # about the size of a journaled tap
    rng = random.Random(seed)
    dispatched = min(workers // 5, 2000)
    gate, whole, baseline = [], [], []
    for i in range(reads + 20):
        clock.advance(4)  # past the debounce window
        who = rng.randrange(dispatched) if rng.random() < 0.6 else rng.randrange(workers)
        uid = f"0A{who:08X}" if rng.random() < 0.97 else f"FF{rng.randrange(1 << 32):08X}"  # 3% unknown
        read = CardRead(uid=uid, reader_id="r-control", kind=ReaderKind.CONTROL,
                        mono_ns=clock.mono_ns(), wall=clock.wall())
        t0 = time.perf_counter()
        base.execute("INSERT INTO t (body) VALUES (?)", (payload,))
        t1 = time.perf_counter()
        loop.handle(read)
        t2 = time.perf_counter()
        if i >= 20:  # warm-up
            baseline.append(t1 - t0)
            gate.append(shown.at - t1)
            whole.append(t2 - t1)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    journal.close()
    store.close()
    return {"gate": gate, "whole": whole, "baseline": baseline, "rss_mb": rss_mb,
            "journal_rows": journal.last_seq()}


def pct(values: list[float], p: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(p) - 1] * 1000 if len(values) > 1 else values[0] * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="tiny sizes (seconds)")
    ap.add_argument("--workers", type=int)
    ap.add_argument("--events", type=int)
    ap.add_argument("--reads", type=int)
    ap.add_argument("--dir", help="where to build (default: a temporary dir under ./bench/results)")
    ap.add_argument("--phase", choices=["build", "measure"], help=argparse.SUPPRESS)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    workers = args.workers or (500 if args.smoke else 50_000)
    events = args.events or (2_000 if args.smoke else 1_000_000)
    reads = args.reads or (200 if args.smoke else 2_000)

    if args.phase == "build":
        build(Path(args.dir), workers, events)
        return
    if args.phase == "measure":
        print(json.dumps(measure(Path(args.dir), workers, reads, args.seed)))
        return

    results = ROOT / "bench" / "results"
    results.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=args.dir or results) as tmp:
        common = [sys.executable, __file__, "--dir", tmp, "--workers", str(workers),
                  "--events", str(events), "--reads", str(reads), "--seed", str(args.seed)]
        t = time.perf_counter()
        subprocess.run([*common, "--phase", "build"], check=True)
        print(f"built: {workers} workers, {2 * workers} cards, {events} journal events "
              f"in {time.perf_counter() - t:.1f} s")
        out = subprocess.run([*common, "--phase", "measure"], check=True, capture_output=True, text=True)
        m = json.loads(out.stdout.strip().splitlines()[-1])
    figures = {"p50_ms": pct(m["gate"], 50), "p99_ms": pct(m["gate"], 99),
               "whole_p50_ms": pct(m["whole"], 50), "whole_p99_ms": pct(m["whole"], 99),
               "rss_mb": round(m["rss_mb"], 1), "reads": reads, "workers": workers,
               "journal_events": m["journal_rows"]}
    baseline = {"p50_ms": pct(m["baseline"], 50), "p99_ms": pct(m["baseline"], 99)}
    ratio = {"p50": figures["p50_ms"] / baseline["p50_ms"], "p99": figures["p99_ms"] / baseline["p99_ms"]}
    target = {"p50": 2.0, "p99": 3.0, "rss_mb": 60}
    print(f"read -> journal committed -> indicator: p50 {figures['p50_ms']:.3f} ms, "
          f"p99 {figures['p99_ms']:.3f} ms")
    print(f"whole read (incl. store update after the light): p50 {figures['whole_p50_ms']:.3f} ms, "
          f"p99 {figures['whole_p99_ms']:.3f} ms")
    print(f"baseline bare SQLite FULL commit:       p50 {baseline['p50_ms']:.3f} ms, "
          f"p99 {baseline['p99_ms']:.3f} ms")
    print(f"ratio: p50 {ratio['p50']:.2f}x (target <= 2), p99 {ratio['p99']:.2f}x (target <= 3)")
    print(f"peak RSS of the gate process: {figures['rss_mb']} MB (target <= 60)")
    ok = ratio["p50"] <= 2 and ratio["p99"] <= 3 and figures["rss_mb"] <= 60
    print(json.dumps({"bench": "gate_decision", "figures": figures, "baseline": baseline,
                      "ratio": {k: round(v, 3) for k, v in ratio.items()}, "target": target,
                      "met": ok}))


if __name__ == "__main__":
    main()
