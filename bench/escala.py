"""Benchmark: the daily escala — 500 requisitions over 5,000 workers (DESIGN.md target <= 1 s).

Baseline measured in the same run: loading the same data the dispatch needs (workers, turns, the
busy periods of the days around) from the database. Figures: the pure rotation engine alone, and the
whole ``dispatch_day`` (load + engine + store the escala + publish change rows) on SQLite.
``--smoke``: 20 requisitions / 200 workers. Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy.orm import Session  # noqa: E402

from central import db  # noqa: E402
from central.registry.schema import workers as workers_t  # noqa: E402
from central.registry.store import list_workers  # noqa: E402
from central.rotation import service  # noqa: E402
from central.rotation.engine import Requisition, dispatch  # noqa: E402
from portgate.records import Berth, Voyage  # noqa: E402

PERIODS = ("01-07", "07-13", "13-19", "19-01")
DAY = dt.date(2026, 3, 10)
# the office's clock at dispatch: the evening before the day before, so no period has ended yet
NOW = dt.datetime(2026, 3, 8, 21, 0, tzinfo=dt.UTC)


def make_workers(n: int, rng: random.Random) -> list[dict]:
    rows = []
    now = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)
    for i in range(1, n + 1):
        category = "vigia" if i % 5 else "estivador"
        bad = rng.random() < 0.05
        rows.append(dict(registration=f"R{i:05d}", name=f"Worker {i}", category=category,
                         status="suspended" if bad else "active", suspended_from=None,
                         suspended_until=None, health_exam_date=dt.date(2025, 5, 1),
                         booklet_revalidated_year=2026, rotation_number=i, cancelled_on=None,
                         updated_at=now))
    return rows


def make_requisitions(n: int, day: dt.date, rng: random.Random) -> list[Requisition]:
    """``n`` requisitions for ``day``, each with its own (period, ship, gate, post, function): the
    office refuses a requisition repeated on one day (``service.dispatch_day``)."""
    out, keys = [], set()
    i = 0
    while len(out) < n:
        function = rng.choice(["vigia", "vigia", "vigia", "vigia_chefe", "estivador"])
        period, post = rng.choice(PERIODS), rng.choice(["portalo", "proa", "popa"])
        key = (period, i % 120, post, function)
        i += 1
        if key in keys:
            continue
        keys.add(key)
        k = len(out)
        out.append(Requisition(
            ref=f"req{k}", date=day, period=period, operator=f"Op{k % 7}",
            ship=str(9000000 + key[1]), ship_name=f"Ship {key[1]}",
            voyage=rng.choice(list(Voyage)), berth=rng.choice(list(Berth)), gate_id=f"g{key[1]}",
            post=post, function=function, workers=rng.randint(1, 6),
            category="estivador" if function == "estivador" else "vigia"))
    return out


def main(argv: list[str] | None = None) -> int:
    from _cli import count, exit_on_signals  # bench/_cli.py (bench/ is sys.path[0])

    exit_on_signals()  # SIGTERM/SIGINT: the clean-up below runs (components stopped, temp dirs removed)
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--smoke", action="store_true", help="20 requisitions / 200 workers")
    ap.add_argument("--workers", type=count, default=5000)
    ap.add_argument("--requisitions", type=count, default=500)
    args = ap.parse_args(argv)
    n_workers, n_reqs = (200, 20) if args.smoke else (args.workers, args.requisitions)
    rng = random.Random(42)
    with tempfile.TemporaryDirectory() as tmp:
        engine = db.make_engine(f"sqlite:///{tmp}/bench.db")
        db.load_all_tables().create_all(engine)
        with Session(engine) as s, s.begin():
            s.execute(workers_t.insert(), make_workers(n_workers, rng))
        # the day before, so rest and overlap checks bind (not timed)
        with Session(engine) as s, s.begin():
            service.dispatch_day(s, DAY - dt.timedelta(days=1),
                                 make_requisitions(n_reqs, DAY - dt.timedelta(days=1), rng),
                                 actor="bench", now=NOW)
        reqs = make_requisitions(n_reqs, DAY, rng)

        with Session(engine) as s:  # baseline: load what the dispatch needs
            t0 = time.perf_counter()
            pool = list_workers(s)
            turns = service._turns(s)
            start = dt.datetime.combine(DAY, dt.time(), dt.UTC) - dt.timedelta(days=2)
            busy = service._busy(s, start, start + dt.timedelta(days=5))
            load_s = time.perf_counter() - t0

        t0 = time.perf_counter()
        result = dispatch(reqs, pool, turns, busy)
        engine_s = time.perf_counter() - t0

        with Session(engine) as s, s.begin():
            t0 = time.perf_counter()
            done = service.dispatch_day(s, DAY, reqs, actor="bench", now=NOW)
            full_s = time.perf_counter() - t0
        engine.dispose()

    positions = sum(r.workers for r in reqs)
    assert len(done.entry_ids) == len(result.assignments)
    print(f"workers {n_workers}, requisitions {n_reqs}, positions {positions}, "
          f"dispatched {len(result.assignments)}, skipped (rest/overlap) {len(result.skips)}, "
          f"G3-ineligible met {len(result.ineligible)}")
    print(f"baseline: load workers+turns+busy from SQLite  {load_s * 1000:8.1f} ms")
    print(f"rotation engine (pure)                         {engine_s * 1000:8.1f} ms")
    print(f"dispatch_day (load+engine+store+publish)       {full_s * 1000:8.1f} ms")
    print(json.dumps({
        "bench": "escala",
        "figures": {"engine_s": round(engine_s, 4), "dispatch_day_s": round(full_s, 4),
                    "workers": n_workers, "requisitions": n_reqs,
                    "dispatched": len(result.assignments)},
        "baseline": {"load_s": round(load_s, 4)},
        "ratio": round(engine_s / load_s, 3) if load_s else None,
        "target": "dispatch_day_s <= 1.0 (DESIGN.md: daily escala <= 1 s)",
        "met": full_s <= 1.0,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
