"""Benchmark: the month close, 125,000 shifts' events (5,000 workers x 25) -> shifts rebuilt ->
statements computed -> stored, next to reading the month's event rows in the same run (DESIGN.md
target: <= 5x).

    .venv/bin/python bench/month_close.py              # 5,000 workers, SQLite and PostgreSQL
    .venv/bin/python bench/month_close.py --smoke      # 50 workers, SQLite only
    .venv/bin/python bench/month_close.py --growth     # also 1x, 2x, 4x --growth-workers (SQLite)

Set-up (not timed): the signed admit/exit taps of every shift are inserted into ``events``
(``bench/pay_month.populate``). Timed, in alternating rounds (baseline, close, baseline, close...):
- baseline: SELECT of the month's tap rows (``raw``) from ``events``, fetched as Python rows (best
  of 3 per round);
- figure: ``rebuild_shifts`` (events -> shifts, stored) + ``pay_from_ledger(store=True)``.
The ratio is the median of the rounds' ratios. ``--growth`` fits the exponent of close time vs
workers (1.0 = linear). The last line is the JSON summary.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from sqlalchemy import select  # noqa: E402

from central.db import make_engine  # noqa: E402
from central.ledger.schema import events  # noqa: E402
from central.ledger.store import rebuild_shifts  # noqa: E402
from central.pay.cli import load_setup  # noqa: E402
from central.pay.statements_store import pay_from_ledger  # noqa: E402
from pay_month import FIRST, LAST, populate  # noqa: E402

Z = ZoneInfo("America/Sao_Paulo")
NOW = dt.datetime(2026, 4, 2, tzinfo=dt.UTC)


def measure(url: str, workers: int, rounds: int, label: str) -> dict:
    t0 = time.perf_counter()
    n_events = populate(url, workers, 25, random.Random(7))
    print(f"[{label}] set-up: {n_events} events inserted in {time.perf_counter() - t0:.1f} s")
    engine = make_engine(url)
    _port, rulebook, calendar = load_setup(None)
    lo = dt.datetime.combine(FIRST, dt.time(0), Z).astimezone(dt.UTC) - dt.timedelta(days=2)
    hi = dt.datetime.combine(LAST + dt.timedelta(days=1), dt.time(0), Z).astimezone(dt.UTC) + dt.timedelta(days=2)

    def read_rows() -> int:
        with engine.connect() as conn:
            return len(conn.execute(select(events.c.raw).where(
                events.c.type == "tap", events.c.occurred_at >= lo, events.c.occurred_at < hi)).all())

    def close() -> tuple[int, int]:
        rebuilt = rebuild_shifts(engine, FIRST, LAST, Z, now=NOW)
        run = pay_from_ledger(engine, FIRST, LAST, rulebook, calendar, now=NOW, store=True)
        return len(rebuilt), len(run.statements)

    reads, closes = [], []
    for _ in range(rounds):
        best = []
        for _ in range(3):  # the read is short: its best of 3 per round
            t0 = time.perf_counter()
            n_rows = read_rows()
            best.append(time.perf_counter() - t0)
        reads.append(min(best))
        t0 = time.perf_counter()
        n_shifts, n_statements = close()
        closes.append(time.perf_counter() - t0)
    engine.dispose()
    ratio = statistics.median(c / r for c, r in zip(closes, reads))
    print(f"[{label}] baseline read of {n_rows} event rows: median {statistics.median(reads):.3f} s")
    print(f"[{label}] month close ({n_shifts} shifts, {n_statements} statements stored): "
          f"median {statistics.median(closes):.3f} s  ratio {ratio:.2f} (target <= 5)")
    return {"read_s": statistics.median(reads), "close_s": statistics.median(closes), "ratio": ratio,
            "events": n_rows, "shifts": n_shifts, "statements": n_statements}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="50 workers, SQLite only")
    parser.add_argument("--workers", type=int, help="number of workers (default 5000)")
    parser.add_argument("--rounds", type=int, help="alternating rounds (default 3)")
    parser.add_argument("--no-postgres", action="store_true", help="SQLite only")
    parser.add_argument("--growth", action="store_true", help="also 1x, 2x, 4x --growth-workers")
    parser.add_argument("--growth-workers", type=int, default=1000)
    args = parser.parse_args()
    workers = args.workers or (50 if args.smoke else 5000)
    rounds = args.rounds or (2 if args.smoke else 3)
    out = {"bench": "month_close", "figures": {}, "baseline": {}, "ratio": {}, "target": 5.0}
    with tempfile.TemporaryDirectory() as tmp:
        m = measure(f"sqlite:///{tmp}/bench.db", workers, rounds, "sqlite")
    out["figures"]["sqlite_close_s"] = round(m["close_s"], 3)
    out["figures"]["shifts"] = m["shifts"]
    out["baseline"]["sqlite_read_s"] = round(m["read_s"], 4)
    out["ratio"]["sqlite"] = round(m["ratio"], 2)
    if not (args.smoke or args.no_postgres):
        from testkit.postgres import PostgresCluster

        with PostgresCluster() as pg:
            p = measure(pg.url, workers, rounds, "postgresql")
        out["figures"]["postgresql_close_s"] = round(p["close_s"], 3)
        out["baseline"]["postgresql_read_s"] = round(p["read_s"], 4)
        out["ratio"]["postgresql"] = round(p["ratio"], 2)
    if args.growth:
        sizes = [args.growth_workers * k for k in (1, 2, 4)]
        times = []
        for n in sizes:
            with tempfile.TemporaryDirectory() as tmp:
                times.append(measure(f"sqlite:///{tmp}/g.db", n, rounds, f"sqlite {n} workers")["close_s"])
        xs, ys = [math.log(n) for n in sizes], [math.log(t) for t in times]
        mx, my = statistics.mean(xs), statistics.mean(ys)
        exponent = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
        print(f"growth: close time at {sizes} workers: {[round(t, 2) for t in times]} s; "
              f"exponent {exponent:.2f} (1.0 = linear)")
        out["growth"] = {"workers": sizes, "close_s": [round(t, 3) for t in times],
                         "exponent": round(exponent, 2)}
    out["met"] = all(v <= 5.0 for v in out["ratio"].values())
    print(json.dumps(out))


if __name__ == "__main__":
    main()
