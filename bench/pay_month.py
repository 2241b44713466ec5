"""Benchmark: the pay run for one month (5,000 workers x 25 shifts) from the ledger database,
next to just reading the same shift rows in the same run (issue 23 target: <= 2x the read time).

    .venv/bin/python bench/pay_month.py            # 5,000 workers (SQLite)
    .venv/bin/python bench/pay_month.py --smoke    # 50 workers
    .venv/bin/python bench/pay_month.py --postgres # also on a throw-away PostgreSQL cluster

Set-up (not timed as the figure): signed tap events for every shift (``month_events``) are
inserted into the events table by the bulk path (``insert_month``) and the shifts are rebuilt from
them (its time is printed too). Timed in alternating rounds
(``--rounds``, default 5; figures are medians, the ratio the median of the rounds' ratios):
- baseline: SELECT of the month's rows from ``shifts`` (+ flags), fetched as Python rows;
- figure: ``pay_from_ledger`` without storing = read_shifts (rows -> Shift) + pay_shifts (P1-P7).
The last line is the JSON summary.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sqlalchemy import select  # noqa: E402

from central.db import make_engine  # noqa: E402
from central.ledger.migrate import upgrade  # noqa: E402
from central.ledger.bulk import insert_tuples  # noqa: E402
from central.ledger.schema import events  # noqa: E402
from central.ledger.store import event_row, rebuild_shifts  # noqa: E402
from central.ledger.tables import shift_flags, shifts  # noqa: E402
from central.pay.cli import load_setup  # noqa: E402
from central.pay.statements_store import pay_from_ledger  # noqa: E402
from testkit.shift_events import ShiftEvents, dispatch  # noqa: E402

Z = ZoneInfo("America/Sao_Paulo")
PERIODS = ("07-13", "13-19", "19-01", "01-07")
FIRST, LAST = dt.date(2026, 3, 1), dt.date(2026, 3, 31)


def month_events(workers: int, shifts_each: int, rng: random.Random) -> list:
    """The signed admit/exit taps of ``shifts_each`` shifts of each of ``workers`` workers in March
    2026 (``wire.events.Event``, by time), 40 gates; ``rng`` picks days, periods and minutes."""
    from central.ledger.shifts import period_bounds

    gates = [ShiftEvents(f"g{i}") for i in range(40)]
    days = [FIRST + dt.timedelta(days=i) for i in range(31)]
    plan = []
    for w in range(workers):
        reg = f"{100000 + w}"
        for day in sorted(rng.sample(days, shifts_each)):
            period = rng.choice(PERIODS)
            start, end = period_bounds(day, period, Z)
            ship = f"93{w % 200:05d}"
            d = dispatch(day, period, ship, berth=rng.choice(("berthed", "anchored")),
                         function="vigia_chefe" if w % 10 == 0 else "vigia")
            gate = gates[w % 40]
            admit = start - dt.timedelta(minutes=rng.randint(0, 20))
            exit_ = end + dt.timedelta(minutes=rng.choice((0, 3, 9, 15, 45, 80, 130)))
            plan.append((admit, gate, "admit", reg, d))
            plan.append((exit_, gate, "exit", reg, d))
    plan.sort(key=lambda p: p[0])
    return [gate.tap(kind, reg, at, d) for at, gate, kind, reg, d in plan]


def insert_month(url: str, evs: list) -> int:
    """Migrate ``url`` and insert ``evs`` into ``events`` in one transaction, the rows the ingest
    stores (``central.ledger.store.event_row``) written by the bulk path (``central.ledger.bulk``:
    COPY on PostgreSQL, one ``executemany`` elsewhere; the same rows as ``insert_events``, a set-up
    of 250,000 events in seconds instead of minutes). Returns how many."""
    upgrade(url)
    engine = make_engine(url)
    received = dt.datetime(2026, 4, 2, tzinfo=dt.UTC)
    rows = [event_row(e, received) for e in evs]
    if rows:
        names = list(rows[0])
        with engine.begin() as conn:
            insert_tuples(conn, events, names, [tuple(r.values()) for r in rows])
    engine.dispose()
    return len(rows)


def populate(url: str, workers: int, shifts_each: int, rng: random.Random) -> int:
    """``month_events`` inserted into the ledger ``url`` (``insert_month``); returns how many."""
    return insert_month(url, month_events(workers, shifts_each, rng))


def measure(url: str, workers: int, shifts_each: int, label: str, rounds: int = 5) -> dict:
    rng = random.Random(7)
    t0 = time.perf_counter()
    n_events = populate(url, workers, shifts_each, rng)
    insert_s = time.perf_counter() - t0
    engine = make_engine(url)
    now = dt.datetime(2026, 4, 2, tzinfo=dt.UTC)
    t0 = time.perf_counter()
    rebuilt = rebuild_shifts(engine, FIRST, LAST, Z, now=now)
    rebuild_s = time.perf_counter() - t0
    _port, rulebook, calendar = load_setup(None)

    def read_rows():
        with engine.connect() as conn:
            rows = conn.execute(select(shifts).where(shifts.c.work_date >= FIRST,
                                                     shifts.c.work_date <= LAST)).all()
            conn.execute(select(shift_flags).join(shifts, shifts.c.shift_id == shift_flags.c.shift_id)
                         .where(shifts.c.work_date >= FIRST, shifts.c.work_date <= LAST)).all()
        return len(rows)

    def pay_run():
        return pay_from_ledger(engine, FIRST, LAST, rulebook, calendar, now=now, store=False)

    reads, pays, ratios = [], [], []
    for _ in range(rounds):  # alternating, so both see the same machine load
        t0 = time.perf_counter()
        n_rows = read_rows()
        reads.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        run = pay_run()
        pays.append(time.perf_counter() - t0)
        ratios.append(pays[-1] / reads[-1])
        if len(pays) < rounds:
            del run
            gc.collect()  # the previous round's statements are not the next round's garbage
    read_s, pay_s, ratio = statistics.median(reads), statistics.median(pays), statistics.median(ratios)
    t0 = time.perf_counter()
    pay_from_ledger(engine, FIRST, LAST, rulebook, calendar, now=now, store=True)
    store_s = time.perf_counter() - t0
    engine.dispose()
    total = sum(s.total for s in run.statements)
    print(f"[{label}] events inserted: {n_events} in {insert_s:.2f} s; shifts rebuilt from events: "
          f"{len(rebuilt)} in {rebuild_s:.2f} s")
    print(f"[{label}] baseline read of {n_rows} shift rows: {read_s:.3f} s (rounds: "
          f"{', '.join(f'{x:.3f}' for x in reads)})")
    print(f"[{label}] pay run (read + P1-P7) of {len(run.statements)} statements "
          f"({len(run.held)} held), total R$ {total}: {pay_s:.3f} s (rounds: "
          f"{', '.join(f'{x:.3f}' for x in pays)})  ratio {ratio:.2f} (median of the rounds' ratios)")
    print(f"[{label}] pay run storing statements and lines: {store_s:.2f} s")
    return {"read_s": read_s, "pay_s": pay_s, "ratio": ratio, "rebuild_s": rebuild_s,
            "store_s": store_s, "shifts": n_rows, "statements": len(run.statements), "total": str(total)}


def main() -> None:
    from _cli import count, description, exit_on_signals  # bench/_cli.py (bench/ is sys.path[0])

    exit_on_signals()  # SIGTERM/SIGINT: the clean-up below runs (components stopped, temp dirs removed)
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--smoke", action="store_true", help="50 workers")
    parser.add_argument("--workers", type=count, help="number of workers (default 5000)")
    parser.add_argument("--postgres", action="store_true", help="also run on PostgreSQL")
    parser.add_argument("--rounds", type=count, default=5, help="alternating baseline/pay rounds")
    args = parser.parse_args()
    workers = args.workers if args.workers is not None else (50 if args.smoke else 5000)
    with tempfile.TemporaryDirectory() as tmp:
        sqlite = measure(f"sqlite:///{tmp}/bench.db", workers, 25, "sqlite", max(1, args.rounds))
    figures = {"sqlite_pay_s": round(sqlite["pay_s"], 4), "sqlite_rebuild_s": round(sqlite["rebuild_s"], 3),
               "sqlite_store_s": round(sqlite["store_s"], 3), "shifts": sqlite["shifts"],
               "total": sqlite["total"]}
    baseline = {"sqlite_read_s": round(sqlite["read_s"], 4)}
    if args.postgres:
        from testkit.postgres import PostgresCluster

        with PostgresCluster() as pg:
            pgm = measure(pg.url, workers, 25, "postgresql", max(1, args.rounds))
        figures["postgresql_pay_s"] = round(pgm["pay_s"], 4)
        baseline["postgresql_read_s"] = round(pgm["read_s"], 4)
    print(json.dumps({"bench": "pay_month", "figures": figures, "baseline": baseline,
                      "ratio": round(sqlite["ratio"], 2), "target": 2.0,
                      "met": sqlite["ratio"] <= 2.0}))


if __name__ == "__main__":
    main()
