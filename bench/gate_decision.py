"""Benchmark: gate decision latency, read -> journal committed -> indicator, and the gate's memory.

Sizes (DESIGN.md): 50,000 workers on the roster (100,000 cards), 1,000,000 events in the journal,
800 cards with pending flags (raised over the last 24 h, so some expire during the run);
``--smoke``: 500 workers, 2,000 events, 100 flagged cards. The baseline is a bare SQLite ``synchronous=FULL`` (WAL)
commit of one row, measured in the same run, in the same directory, interleaved with the gate reads
(one baseline commit, one gate read, ...) so both see the same disk and the same noise.

The store and journal are built by one subprocess (journal rows with ``executemany``); a second,
fresh subprocess opens them like a booting gate, runs the reads through the real ``GateLoop``
(pairing, ``decide``, journal commit, indicator, store effects) and reports its peak RSS
(``resource.getrusage``).

Figures: p50/p99 of read -> indicator shown (the target) and of the whole read handling (including
the store update after the light), one read at a time, baseline p50/p99, ratios, peak RSS; then the
sustained rate: alternating rounds of back-to-back taps through the whole loop (decide, journal
commit, show, store apply) and of back-to-back bare commits, taps/s over commits/s as the median of
the rounds' ratios. In the taps rounds the gate is saturated: the reads wait in its inbox (put
there as a reader thread does, up to ``INBOX_SIZE``) and the loop takes them as ``run`` does
(``take_batch``: group commit).
With ``--cpu-quota F`` (default 0.25; 0 skips it) the same gate runs again inside a CPU quota of
``F`` of one core (a Raspberry-class budget: cgroup v2 ``cpu.max`` or v1 ``cpu.cfs_quota_us``,
``bench/_cpuquota.py``; "not measured" where neither is writable, e.g. not root): the real
``portgate edge run`` on the built state directory, timed from process start to its systemd
``READY=1`` (store and journal opened, recovery done, readers open: ready for the first read),
then the measure phase again. Targets under the quota: sustained >= 20 taps/s, read -> committed ->
shown p99 <= 50 ms, peak RSS <= 60 MB, start-up <= 10 s.

Target at full speed (DESIGN.md): the ratios p50, p99 and sustained, each against its same-run bare
commit, unchanged or better than the last run on the same machine at the same sizes and options
(a ``--seed`` or ``--dir`` filesystem other than the default's has its own reference; ``--cpu-quota``
runs after the full-speed figures and does not change them), within ``bench/_lastrun.py``'s
``TOLERANCE``; kept in ``$XDG_STATE_HOME/portgate/bench/last_runs.json`` (never committed): this run
replaces it only when it met that comparison (a run that did not is reported and not recorded, so a
regression stays "not met" until fixed); the first run says "no previous run" and is recorded. Peak RSS <= 60 MB. Last line: one JSON object
(``previous``: the last run's ``{"at", "commit", "ratio"}`` or null; ``reference``: its key).
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
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
sys.path.insert(0, str(ROOT / "bench"))

GATE, SHIP, PORT = "g-bench", "9311111", "santos"
KEY = b"bench-key"
# 2026-03-15 01:20 local (UTC-3): inside the 01-07 period of the bench escala
T0 = dt.datetime(2026, 3, 15, 4, 20, tzinfo=dt.UTC)


def build(state: Path, workers: int, events: int, flagged: int) -> None:
    """Create store.db (roster + escala + ``flagged`` cards with a pending flag) and journal.db
    (``events`` rows) under ``state``."""
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
    flags = ("ROTATION_JUMP", "NOT_DISPATCHED", "LATE_ARRIVAL", "BORROWED_CARD")
    span = dt.timedelta(hours=23, minutes=30)
    rows = [(f"0A{(workers - 1 - i) % workers:08X}", flags[i % len(flags)],
             (T0 - dt.timedelta(minutes=30) - span * i / max(flagged, 1)).isoformat())
            for i in range(flagged)]
    conn = sqlite3.connect(state / "store.db")
    conn.executemany("INSERT OR REPLACE INTO pending_flags (uid, flag, at) VALUES (?, ?, ?)", rows)
    conn.commit()
    conn.close()

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
        rows = [(s, f"{s:08d}-0000-4000-8000-000000000000", 0, "tap", body, created)
                for s in range(start, min(start + batch, events + 1))]
        conn.executemany("INSERT INTO journal (seq, event_id, priority, kind, body, created_at)"
                         " VALUES (?, ?, ?, ?, ?, ?)", rows)
        conn.commit()
    conn.execute("INSERT INTO journal_sent (lo, hi) VALUES (1, ?)", (events,))  # all sent (edge.journal)
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


class _Shown:
    """Indicator that timestamps the moment the decision is shown."""

    def __init__(self) -> None:
        self.at = 0.0

    def show(self, decision, lang="pt", *, event=None) -> None:
        self.at = time.perf_counter()


def measure(state: Path, workers: int, reads: int, seed: int, rounds: int, burst: int) -> dict:
    """Open the built files like a booting gate and time ``reads`` reads, interleaved with bare
    SQLite FULL commits. Runs in a fresh process; returns figures and peak RSS."""
    import resource

    from drivers.base import CardRead
    from edge.clock import FakeClock
    from edge.journal import Journal
    from edge.loop import GateLoop
    from edge.rules.rulebook import default_gate_rulebook
    from edge.store import Store
    from portgate.gctune import freeze_start_up
    from portgate.logs import configure_logging
    from portgate.records import ReaderKind

    configure_logging(json=True, level="info")  # as a gate under systemd: one JSON line per tap, stderr
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
    freeze_start_up()  # as the gate service before READY: a full gc walks only what the loop makes
    payload = os.urandom(400)  # about the size of a journaled tap
    rng = random.Random(seed)
    dispatched = min(workers // 5, 2000)
    gate, whole, baseline = [], [], []
    def next_read() -> CardRead:
        clock.advance(4)  # past the debounce window
        who = rng.randrange(dispatched) if rng.random() < 0.6 else rng.randrange(workers)
        uid = f"0A{who:08X}" if rng.random() < 0.97 else f"FF{rng.randrange(1 << 32):08X}"  # 3% unknown
        return CardRead(uid=uid, reader_id="r-control", kind=ReaderKind.CONTROL,
                        mono_ns=clock.mono_ns(), wall=clock.wall())

    for i in range(reads + 20):
        read = next_read()
        t0 = time.perf_counter()
        base.execute("INSERT INTO t (body) VALUES (?)", (payload,))
        t1 = time.perf_counter()
        loop.handle(read)
        t2 = time.perf_counter()
        if i >= 20:  # warm-up
            baseline.append(t1 - t0)
            gate.append(shown.at - t1)
            whole.append(t2 - t1)
    flagged = sum(1 for uid in list(store._flags) if store.pending_flags(uid))
    sustained = []  # (taps/s, commits/s) per round, order alternating
    for r in range(rounds):
        batch = [next_read() for _ in range(burst)]
        times = {}
        for part in (("taps", "bare") if r % 2 == 0 else ("bare", "taps")):
            t0 = time.perf_counter()
            if part == "taps":  # a saturated gate: the reads wait in the inbox, as a reader puts them
                pending = iter(batch)
                left = burst
                while left:
                    for read in itertools.islice(pending, loop.inbox.maxsize - loop.inbox.qsize()):
                        loop.inbox.put_nowait(read)
                    items, _stop = loop.take_batch(0)
                    loop.handle_batch(items)
                    left -= len(items)
            else:
                for _ in range(burst):
                    base.execute("INSERT INTO t (body) VALUES (?)", (payload,))
            times[part] = time.perf_counter() - t0
        sustained.append((burst / times["taps"], burst / times["bare"]))
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    journal.close()
    store.close()
    return {"gate": gate, "whole": whole, "baseline": baseline, "rss_mb": rss_mb,
            "journal_rows": journal.last_seq(), "sustained": sustained, "flagged_cards": flagged}


def write_gate_config(state: Path) -> Path:
    """A gate.toml for the real gate service on the built ``state`` directory: the bench's gate,
    its HMAC key, one FIFO control reader, no indicator, no MQTT (a gate boots offline)."""
    key = state / "gate.key"
    key.write_bytes(KEY)
    key.chmod(0o600)
    path = state / "gate.toml"
    path.write_text(f"""port = "{PORT}"
gate_id = "{GATE}"
ship = "{SHIP}"
state_dir = "{state}"
key_file = "{key}"
indicator = "none"
clock_trust = "always"

[[readers]]
id = "r-control"
kind = "control"
driver = "fifo"
device = "{state / 'reader.fifo'}"
""")
    return path


def time_start_up(state: Path, preexec=None, timeout: float = 120.0) -> float:
    """Seconds from spawning ``portgate edge run`` on ``state`` to its ``READY=1`` on a private
    NOTIFY_SOCKET (the moment systemd would consider the gate started); the gate is then stopped
    with SIGTERM. Raises ``RuntimeError`` with the gate's output if it ends or stays silent."""
    import signal
    import socket

    config = write_gate_config(state)
    sock_path = state / "notify.sock"
    sock_path.unlink(missing_ok=True)
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(sock_path))
        sock.settimeout(0.5)
        env = dict(os.environ, NOTIFY_SOCKET=str(sock_path))
        portgate = Path(sys.executable).with_name("portgate")
        t0 = time.monotonic()
        proc = subprocess.Popen([str(portgate), "edge", "run", "--config", str(config)], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=preexec)
        try:
            while True:
                try:
                    msg = sock.recv(4096)
                except TimeoutError:
                    if proc.poll() is not None or time.monotonic() - t0 > timeout:
                        raise RuntimeError("the gate did not start: "
                                           + proc.communicate(timeout=10)[1].decode()[-800:]) from None
                    continue
                if b"READY=1" in msg:
                    return time.monotonic() - t0
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
            try:
                proc.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()


def pct(values: list[float], p: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(p) - 1] * 1000 if len(values) > 1 else values[0] * 1000


QUOTA_TARGET = {"taps_per_s": 20, "p99_ms": 50, "rss_mb": 60, "start_up_s": 10}


def under_quota(state: Path, common: list[str], fraction: float) -> dict:
    """The gate inside ``fraction`` of one core: the real service's start-up, then the measure
    phase. ``{"measured": False, "why"}`` where no cgroup can be made."""
    from _cpuquota import CpuQuota, QuotaRefused

    try:
        quota = CpuQuota.create(fraction)
    except QuotaRefused as refused:  # a cgroup was writable: the kernel refused this quota/period
        return {"measured": False, "why": str(refused)}
    if quota is None:
        return {"measured": False, "why": "no writable cgroup (v2 cpu.max or v1 cpu.cfs_quota_us)"}
    try:
        start_up = time_start_up(state, preexec=quota.join)
        out = subprocess.run([*common, "--phase", "measure"], check=True, capture_output=True, text=True,
                             preexec_fn=quota.join)
        m = json.loads(out.stdout.strip().splitlines()[-1])
        throttled = quota.throttled_s()
    finally:
        quota.remove()
    got = {"measured": True, "cgroup": quota.describe(), "fraction": fraction,
           "start_up_s": round(start_up, 3), "taps_per_s": statistics.median(a for a, _ in m["sustained"]),
           "p50_ms": pct(m["gate"], 50), "p99_ms": pct(m["gate"], 99), "rss_mb": round(m["rss_mb"], 1),
           "throttled_s": round(throttled, 2)}
    got["met"] = (got["taps_per_s"] >= QUOTA_TARGET["taps_per_s"] and got["p99_ms"] <= QUOTA_TARGET["p99_ms"]
                  and got["rss_mb"] <= QUOTA_TARGET["rss_mb"] and got["start_up_s"] <= QUOTA_TARGET["start_up_s"])
    return got


def main() -> None:
    from _cli import (at_least_zero, count, cpu_fraction, description, exit_on_signals,  # bench/_cli.py
                      smoke_caveat)  # (bench/ is sys.path[0])

    exit_on_signals()  # SIGTERM/SIGINT: the clean-up below runs (components stopped, temp dirs removed)
    ap = argparse.ArgumentParser(description=description(__doc__))
    ap.add_argument("--smoke", action="store_true", help="tiny sizes (seconds)")
    ap.add_argument("--workers", type=count)
    ap.add_argument("--events", type=count)
    ap.add_argument("--reads", type=count)
    ap.add_argument("--dir", help="where to build (default: a temporary dir under ./bench/results)")
    ap.add_argument("--phase", choices=["build", "measure"], help=argparse.SUPPRESS)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--flagged", type=at_least_zero, help="cards with pending flags at boot")
    ap.add_argument("--rounds", type=count, help="alternating rounds of the sustained-rate figure")
    ap.add_argument("--burst", type=count, help="taps (and bare commits) per round")
    ap.add_argument("--cpu-quota", type=cpu_fraction, default=0.25,
                    help="also run the gate inside this fraction of one core, at most the CPUs here (0: skip)")
    args = ap.parse_args()
    workers = args.workers if args.workers is not None else (500 if args.smoke else 50_000)
    events = args.events if args.events is not None else (2_000 if args.smoke else 1_000_000)
    reads = args.reads if args.reads is not None else (200 if args.smoke else 2_000)
    flagged = args.flagged if args.flagged is not None else (100 if args.smoke else 800)
    rounds = args.rounds if args.rounds is not None else (4 if args.smoke else 10)
    burst = args.burst if args.burst is not None else (50 if args.smoke else 200)

    if args.phase == "build":
        build(Path(args.dir), workers, events, flagged)
        return
    if args.phase == "measure":
        print(json.dumps(measure(Path(args.dir), workers, reads, args.seed, rounds, burst)))
        return

    import _lastrun  # (here: the build and measure children, whose RSS is a figure, never import it)

    results = ROOT / "bench" / "results"
    results.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=args.dir or results) as tmp:
        common = [sys.executable, __file__, "--dir", tmp, "--workers", str(workers),
                  "--events", str(events), "--reads", str(reads), "--seed", str(args.seed),
                  "--flagged", str(flagged), "--rounds", str(rounds), "--burst", str(burst)]
        t = time.perf_counter()
        subprocess.run([*common, "--phase", "build"], check=True)
        print(f"built: {workers} workers, {2 * workers} cards, {events} journal events, "
              f"{flagged} cards with pending flags "
              f"in {time.perf_counter() - t:.1f} s")
        out = subprocess.run([*common, "--phase", "measure"], check=True, capture_output=True, text=True)
        m = json.loads(out.stdout.strip().splitlines()[-1])
        quota = under_quota(Path(tmp), common, args.cpu_quota) if args.cpu_quota else None
    figures = {"p50_ms": pct(m["gate"], 50), "p99_ms": pct(m["gate"], 99),
               "whole_p50_ms": pct(m["whole"], 50), "whole_p99_ms": pct(m["whole"], 99),
               "rss_mb": round(m["rss_mb"], 1), "reads": reads, "workers": workers,
               "journal_events": m["journal_rows"], "flagged_cards_at_end": m["flagged_cards"],
               "taps_per_s": statistics.median(a for a, _ in m["sustained"])}
    baseline = {"p50_ms": pct(m["baseline"], 50), "p99_ms": pct(m["baseline"], 99),
                "commits_per_s": statistics.median(b for _, b in m["sustained"])}
    ratio = {"p50": figures["p50_ms"] / baseline["p50_ms"], "p99": figures["p99_ms"] / baseline["p99_ms"],
             "sustained": statistics.median(a / b for a, b in m["sustained"])}
    sizes = f"workers={workers} events={events} reads={reads} flagged={flagged} rounds={rounds} burst={burst}"
    # besides the sizes: the seed (which cards, in which order), the filesystem fsynced on (--dir)
    key = _lastrun.reference_key(sizes, {"seed": args.seed if args.seed != 1 else None,
                                         "fs": _lastrun.fs_type(args.dir) if args.dir else None})
    before, vs_last, said = _lastrun.judge("gate_decision", key, ratio)
    target = {"vs_last_run_tolerance": {k: tol for k, (_, tol) in _lastrun.TOLERANCE.items()}, "rss_mb": 60}
    print(f"read -> journal committed -> indicator: p50 {figures['p50_ms']:.3f} ms, "
          f"p99 {figures['p99_ms']:.3f} ms")
    print(f"whole read (incl. store update after the light): p50 {figures['whole_p50_ms']:.3f} ms, "
          f"p99 {figures['whole_p99_ms']:.3f} ms")
    print(f"baseline bare SQLite FULL commit:       p50 {baseline['p50_ms']:.3f} ms, "
          f"p99 {baseline['p99_ms']:.3f} ms")
    print(f"ratio: p50 {ratio['p50']:.2f}x, p99 {ratio['p99']:.2f}x the bare commit")
    print(f"sustained whole loop: {figures['taps_per_s']:.0f} taps/s vs {baseline['commits_per_s']:.0f} bare "
          f"commits/s: {ratio['sustained']:.2f}x (median of {rounds} alternating rounds)")
    caveat = smoke_caveat(args.smoke or workers < 50_000)  # below the full size: the verdicts say nothing
    for line in said:
        print(line + (caveat if line.split("(", 1)[0].rstrip().endswith("met") else ""))
    print(f"peak RSS of the gate process: {figures['rss_mb']} MB (target <= 60)")
    ok = all(vs_last.values()) and figures["rss_mb"] <= 60
    if quota is not None:
        figures["cpu_quota"] = quota
        target["cpu_quota"] = dict(QUOTA_TARGET)
        if quota.get("measured"):
            print(f"inside {quota['cgroup']}: start-up {quota['start_up_s']:.2f} s (target <= 10), "
                  f"sustained {quota['taps_per_s']:.0f} taps/s (target >= 20), read -> shown "
                  f"p99 {quota['p99_ms']:.1f} ms (target <= 50), peak RSS {quota['rss_mb']} MB (target <= 60); "
                  f"throttled {quota['throttled_s']:.1f} s")
            ok = ok and quota["met"]
        else:
            print(f"cpu quota {args.cpu_quota:g}: not measured ({quota['why']})")
    print(json.dumps({"bench": "gate_decision", "figures": figures, "baseline": baseline,
                      "ratio": {k: round(v, 3) for k, v in ratio.items()}, "target": target,
                      "previous": before, "reference": key, "met": ok}))


if __name__ == "__main__":
    main()
