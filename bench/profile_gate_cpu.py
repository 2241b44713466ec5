"""The gate loop's work per tap, counted so that another engineer's load does not move it.

``bench/gate_decision.py`` gives ratios to a bare fsync; on a shared machine the CPU time of a tap
moves by 2x with the load. This runs the same loop (``GateLoop`` with the real store, journal,
pairing and rules, the bench's read mix: 60 % among the dispatched workers, 40 % among all, 3 %
unknown cards) on a state ``gate_decision.py`` builds (``--workers`` workers, ``--events`` journal
events, 800 flagged cards), after 200 warm-up taps, either one tap at a time (``--mode single``) or
saturated, 16 reads per group commit as ``run`` takes them (``--mode sustained``), and prints the
CPU time per tap (``time.process_time``) of each of ``--rounds`` rounds.

The measured taps run inside one ``itertools.starmap`` call, so callgrind can count only them
(instructions per tap: the same figure at load 1 or 25):

    valgrind --tool=callgrind --collect-atstart=no --toggle-collect=starmap_next \\
        --callgrind-out-file=/dev/null .venv/bin/python bench/profile_gate_cpu.py --rounds 1

("Collected" divided by ``--taps``). The state is built by a child process (natively under
valgrind) in a temporary directory, removed at the end. Run by hand; not a target.

``--mode light`` counts only what comes before each tap's light (one tap at a time: the read's
pairing, the rules, the event built, signed and encoded, the journal commit), the part that sets
the read -> shown latency and the quota's p99: each tap runs in its own ``itertools.starmap`` call
and the indicator calls ``zlib.crc32`` as it shows, so callgrind zeroes its counts as a tap starts
and writes them out at its light, one file per tap (the median of their "totals" is the figure;
the last file holds the run's end):

    valgrind --tool=callgrind --zero-before=starmap_next --dump-before=zlib_crc32 \\
        --callgrind-out-file=/tmp/light/cg .venv/bin/python bench/profile_gate_cpu.py --mode light --rounds 1

Without valgrind it prints the median CPU time (``time.process_time``) from a tap's start to its
light, per round.

    .venv/bin/python bench/profile_gate_cpu.py [--mode sustained|single|light] [--taps N] [--rounds N]
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import gate_decision as gd  # noqa: E402  (the bench's sizes, keys and clock)


def open_loop(state: Path):
    """The gate loop on ``state`` as ``gate_decision.measure`` opens it (logging to /dev/null)."""
    from edge.clock import FakeClock
    from edge.journal import Journal
    from edge.loop import GateLoop
    from edge.rules.rulebook import default_gate_rulebook
    from edge.store import Store
    from portgate.gctune import freeze_start_up
    from portgate.logs import configure_logging

    stderr, sys.stderr = sys.stderr, open(os.devnull, "w")  # noqa: SIM115 (the log's file for the run)
    try:
        configure_logging(json=True, level="info")  # one JSON line per tap, as in service, unread
    finally:
        sys.stderr = stderr
    store = Store(state / "store.db", gate_id=gd.GATE, ship=gd.SHIP, boot_id="bench")
    journal = Journal(state / "journal.db", port=gd.PORT, gate_id=gd.GATE, key=gd.KEY, boot_id="bench")
    clock = FakeClock(gd.T0)
    loop = GateLoop(readers=[], store=store, journal=journal, clock=clock, indicator=gd._Shown(),
                    rulebook=default_gate_rulebook())
    freeze_start_up()  # as the gate service before READY (portgate.gctune)
    return loop, clock


class _Lit:
    """The indicator of ``--mode light``: the CPU time at each light, and callgrind's dump point."""

    def __init__(self) -> None:
        self.at = 0.0
        self.lit: list[float] = []  # CPU seconds from each measured tap's start to its light
        self.start: float | None = None

    def show(self, decision, lang="pt", *, event=None) -> None:
        zlib.crc32(b"")  # --dump-before=zlib_crc32: the instructions since the tap started
        self.at = time.process_time()
        if self.start is not None:
            self.lit.append(self.at - self.start)


def tapper(loop, clock, workers: int, seed: int):
    """``(single, sustained, light)``: functions running ``n`` taps one at a time / saturated / one
    at a time, each in its own ``itertools.starmap`` call (``--mode light``, see the doc)."""
    from drivers.base import CardRead
    from portgate.records import ReaderKind

    rng = random.Random(seed)
    dispatched = min(workers // 5, 2000)

    def read() -> CardRead:
        clock.advance(4)  # past the debounce window
        who = rng.randrange(dispatched) if rng.random() < 0.6 else rng.randrange(workers)
        uid = f"0A{who:08X}" if rng.random() < 0.97 else f"FF{rng.randrange(1 << 32):08X}"
        return CardRead(uid=uid, reader_id="r-control", kind=ReaderKind.CONTROL,
                        mono_ns=clock.mono_ns(), wall=clock.wall())

    def single(n: int) -> None:
        for _ in range(n):
            loop.handle(read())

    def sustained(n: int) -> None:
        pending, left = iter([read() for _ in range(n)]), n
        while left:
            for r in itertools.islice(pending, loop.inbox.maxsize - loop.inbox.qsize()):
                loop.inbox.put_nowait(r)
            items, _stop = loop.take_batch(0)
            loop.handle_batch(items)
            left -= len(items)

    def light(n: int) -> None:
        lit = loop.indicator
        for _ in range(n):
            r = read()
            lit.start = time.process_time()
            list(itertools.starmap(loop.handle, [(r,)]))  # --zero-before=starmap_next: a tap starts
            lit.start = None

    return single, sustained, light


def main() -> None:
    from _cli import count, description, exit_on_signals  # bench/_cli.py (bench/ is sys.path[0])

    exit_on_signals()  # SIGTERM/SIGINT: the clean-up below runs (components stopped, temp dirs removed)
    ap = argparse.ArgumentParser(description=description(__doc__))
    ap.add_argument("--mode", choices=["sustained", "single", "light"], default="sustained")
    ap.add_argument("--taps", type=count, default=1000, help="taps per round")
    ap.add_argument("--rounds", type=count, default=5)
    ap.add_argument("--workers", type=count, default=50_000)
    ap.add_argument("--events", type=count, default=20_000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    results = ROOT / "bench" / "results"
    results.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=results) as tmp:
        subprocess.run([sys.executable, str(ROOT / "bench/gate_decision.py"), "--phase", "build", "--dir", tmp,
                        "--workers", str(args.workers), "--events", str(args.events)],
                       check=True, capture_output=True)
        loop, clock = open_loop(Path(tmp))
        if args.mode == "light":
            loop.indicator = _Lit()
        single, sustained, light = tapper(loop, clock, args.workers, args.seed)
        single(200)  # warm-up
        per_tap = []
        for _ in range(args.rounds):
            t0 = time.process_time()
            if args.mode == "light":
                loop.indicator.lit.clear()
                light(args.taps)
                per_tap.append(statistics.median(loop.indicator.lit) * 1e6)
                continue
            run = sustained if args.mode == "sustained" else single
            list(itertools.starmap(run, [(args.taps,)]))  # the taps callgrind counts (see the doc)
            per_tap.append((time.process_time() - t0) / args.taps * 1e6)
        loop.journal.close()
        loop.store.close()
    what = "CPU from a tap's start to its light, median (us)" if args.mode == "light" else "CPU per tap (us)"
    print(f"{args.mode}: {args.taps} taps x {args.rounds} rounds, {what}: "
          + ", ".join(f"{v:.0f}" for v in per_tap))


if __name__ == "__main__":
    main()
