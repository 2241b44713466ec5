"""The gate's own decision work, timed warm and as a tap finds the CPU: after an idle wait or an fsync.

A gate waits for a card (the CPU idles), then decides, then waits for the journal's fsync (the CPU
idles again). ``bench/gate_decision.py`` reproduces that: one bare ``synchronous=FULL`` commit, then
one read. On a virtual machine an idle vCPU is descheduled and comes back with cold caches and
branch predictors, so the Python before the light can cost several times what the same code costs
back to back. That moves the gate's p50 ratio (decision over a bare commit) from machine to
machine while the code stays the same.

This times the very work that comes before the light — ``badge_expected`` (the pairing's store
lookups) then ``decide`` — on a real store (``--workers`` workers, their control and badge cards and
an escala), for the same reads in four modes, alternating, one read per step:

- ``warm``: back to back;
- ``spin``: after ``--pause-us`` of busy waiting (the CPU stays busy);
- ``sleep``: after ``time.sleep`` of the same length (the CPU idles);
- ``fsync``: after a 4 KiB write and ``os.fsync`` of a file beside the store (the disk wait a tap has).

Prints the median and p90 per mode and each mode's ratio to ``warm``. Read-only on the store; no
journal is written. Run by hand (not by ``bench/run_all.py``: it prints a profile, not a target):

    .venv/bin/python bench/profile_idle_cold.py [--workers N] [--reads N] [--pause-us N]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

MODES = ("warm", "spin", "sleep", "fsync")


def main() -> None:
    from _cli import at_least_zero, count, description, exit_on_signals  # bench/_cli.py (bench/ is sys.path[0])

    exit_on_signals()  # SIGTERM/SIGINT: the clean-up below runs (components stopped, temp dirs removed)
    ap = argparse.ArgumentParser(description=description(__doc__))
    ap.add_argument("--workers", type=count, default=5_000)
    ap.add_argument("--reads", type=count, default=2_000, help="reads per mode")
    ap.add_argument("--pause-us", type=at_least_zero, default=300, help="idle, spin or fsync before each read")
    args = ap.parse_args()

    import gate_decision as bench  # the gate bench's own store: same roster, escala and gate
    from edge.rules import decide
    from edge.rules.model import Now, Presentation
    from edge.rules.pairing import Read, badge_expected
    from edge.rules.rulebook import default_gate_rulebook
    from edge.store import Store

    rulebook = default_gate_rulebook()
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp)
        bench.build(state, args.workers, 1, 0)
        store = Store(state / "store.db", gate_id=bench.GATE, ship=bench.SHIP, boot_id="profile")
        now = Now(wall=bench.T0, mono_ns=10**12, clock_trusted=True)
        rng = random.Random(1)
        uids = [f"0A{rng.randrange(args.workers):08X}" for _ in range(args.reads)]
        fd = os.open(state / "fsync.probe", os.O_WRONLY | os.O_CREAT, 0o600)
        block = b"\0" * 4096
        pause = args.pause_us / 1e6

        def before(mode: str) -> None:
            if mode == "spin":
                end = time.perf_counter() + pause
                while time.perf_counter() < end:
                    pass
            elif mode == "sleep":
                time.sleep(pause)
            elif mode == "fsync":
                os.pwrite(fd, block, 0)
                os.fsync(fd)

        times: dict[str, list[float]] = {m: [] for m in MODES}
        for uid in uids[:200]:  # warm-up: the first lookups fill SQLite's page cache
            decide(store, Presentation(uid, "r-control", "control", now.mono_ns), now, rulebook)
        for i, uid in enumerate(uids):
            for mode in (MODES if i % 2 == 0 else MODES[::-1]):
                before(mode)
                t0 = time.perf_counter()
                badge_expected(store, rulebook, Read(uid, "r-control", "control", now.mono_ns))
                decide(store, Presentation(uid, "r-control", "control", now.mono_ns), now, rulebook)
                times[mode].append(time.perf_counter() - t0)
                store._last_card = store._last_worker = None  # each mode looks the read up itself
        os.close(fd)
        store.close()

    warm = statistics.median(times["warm"])
    print(f"badge_expected + decide, {args.reads} reads per mode, {args.workers} workers, "
          f"pause {args.pause_us} us before each read")
    for mode in MODES:
        v = times[mode]
        p90 = statistics.quantiles(v, n=10)[-1]
        print(f"  {mode:6s} median {statistics.median(v) * 1e6:7.1f} us  p90 {p90 * 1e6:7.1f} us  "
              f"x{statistics.median(v) / warm:.2f} of warm")


if __name__ == "__main__":
    main()
