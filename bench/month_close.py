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
- figure: ``central.pay.close.close_month`` (events -> shifts, stored -> statements, stored; a
  re-close skips the workers whose input and stored-output digests are unchanged).
The first round is the first close (nothing derived stored yet: every shift, flag, statement and
line written); the later ones are re-closes (same events: every worker is skipped). The two
targets of issue 32, each against a floor measured in the same run:
- first close <= 2x its write floor: the time to only insert the first close's rows (shifts,
  flags, statements, lines, as the driver stores them, read back from the closed ledger) into an
  empty ledger of the same schema by that database's fastest path, in one transaction, change
  counting triggers on (``central.ledger.changes``): ``executemany`` on SQLite (also measured
  without the triggers: their cost), ``COPY`` on PostgreSQL (best of 2);
- re-close of an unchanged month <= 5x reading its events: the median over the re-close rounds
  of each round's close time over its round's read.
Printed per round: the workers skipped and the stored rows read back (``CloseResult.read``: 0 when
the change counters are unchanged), and the CPU time of this process against the read's (on
PostgreSQL the server's CPU is not in it). The closing lines give each figure with its floor or
baseline, the ratio and "met"/"not met", and the machine's load average at the start and end.
``--growth`` fits the exponent of close time vs workers (1.0 = linear), on wall time and on this
process's CPU time (all of SQLite's work; steadier on a shared machine). The last line is the JSON
summary.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
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
from central.ledger.bulk import insert_tuples  # noqa: E402
from central.ledger.changes import WATCHED  # noqa: E402
from central.ledger.migrate import upgrade  # noqa: E402
from central.ledger.schema import events  # noqa: E402
from central.ledger.tables import shift_flags, shifts, statement_lines, statements  # noqa: E402
from central.pay.cli import load_setup  # noqa: E402
from central.pay.close import close_month  # noqa: E402
from pay_month import FIRST, LAST, populate  # noqa: E402

Z = ZoneInfo("America/Sao_Paulo")
NOW = dt.datetime(2026, 4, 2, tzinfo=dt.UTC)


DERIVED = (shifts, shift_flags, statements, statement_lines)


def floor(url: str, fresh_url, label: str) -> dict:
    """Seconds to insert the derived rows of ``url`` into the empty ledger ``fresh_url()``:
    ``executemany`` (and COPY on PostgreSQL), one transaction each, best of 2."""
    engine = make_engine(url)
    data = {}
    with engine.connect() as conn:
        for table in DERIVED:
            names = [c.name for c in table.c if not (c.primary_key and c.autoincrement is True
                                                     and c.name == "id")]
            q = f"SELECT {', '.join(names)} FROM {table.name}"
            data[table.name] = (names, [tuple(r) for r in conn.exec_driver_sql(q)])
    engine.dispose()
    n_rows = sum(len(rows) for _names, rows in data.values())
    out = {"rows": n_rows}
    # the database's fastest path (issue 32: executemany on SQLite, COPY on PostgreSQL), with the
    # change-counting triggers and without them (their cost; PostgreSQL's count once per
    # statement and cost nothing measurable: not measured there)
    methods = ["copy"] if url.startswith("postgresql") else ["executemany", "executemany no triggers"]
    for method in methods:
        best = []
        for _ in range(2):
            target = fresh_url()
            upgrade(target)
            eng = make_engine(target)
            if method.endswith(" no triggers"):  # what the change counters cost the inserts
                with eng.begin() as conn:
                    _drop_triggers(conn)
            t0 = time.perf_counter()
            with eng.begin() as conn:
                for table in DERIVED:
                    names, rows = data[table.name]
                    if not rows:
                        continue
                    if method.startswith("copy"):
                        insert_tuples(conn, table, names, rows, bound=True)
                    else:
                        marks = ", ".join(["?" if conn.dialect.paramstyle == "qmark" else "%s"] * len(names))
                        conn.exec_driver_sql(f"INSERT INTO {table.name} ({', '.join(names)}) VALUES ({marks})",
                                             rows)
            best.append(time.perf_counter() - t0)
            eng.dispose()
        out[method] = min(best)
        print(f"[{label}] floor: {n_rows} rows inserted by {method}: {min(best):.3f} s")
    return out


def _drop_triggers(conn) -> None:
    """Drop the change-counting triggers of ``central.ledger.changes`` (the floor without them)."""
    for table in WATCHED:
        if conn.dialect.name == "postgresql":
            conn.exec_driver_sql(f"DROP TRIGGER IF EXISTS {table}_changes ON {table}")
        else:
            for op in ("insert", "update", "delete"):
                conn.exec_driver_sql(f"DROP TRIGGER IF EXISTS {table}_changes_{op}")


def measure(url: str, workers: int, rounds: int, label: str, fresh_url=None) -> dict:
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
        done = close_month(engine, FIRST, LAST, Z, rulebook, calendar, now=NOW)
        skips.append((done.shifts_skipped, done.pay_skipped, done.workers, done.read))
        return done.shifts, done.statements

    skips: list[tuple[int, int, int]] = []

    reads, closes, cpus, read_cpus = [], [], [], []
    for _ in range(rounds):
        best, best_cpu = [], []
        for _ in range(3):  # the read is short: its best of 3 per round
            t0, c0 = time.perf_counter(), time.process_time()
            n_rows = read_rows()
            best.append(time.perf_counter() - t0)
            best_cpu.append(time.process_time() - c0)
        reads.append(min(best))
        read_cpus.append(min(best_cpu))
        t0, c0 = time.perf_counter(), time.process_time()
        n_shifts, n_statements = close()
        closes.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    engine.dispose()
    # the first round is the first close; the re-close figures are the later rounds' only
    ratio = statistics.median(c / r for c, r in zip(closes[1:], reads[1:]))
    read_s = statistics.median(reads)
    print(f"[{label}] baseline read of {n_rows} event rows: median {read_s:.3f} s")
    print(f"[{label}] month re-close ({n_shifts} shifts, {n_statements} statements): "
          f"median {statistics.median(closes[1:]):.3f} s  ratio {ratio:.2f} (target <= 5)")
    print(f"[{label}] first close (all written): {closes[0]:.3f} s  ratio {closes[0] / reads[0]:.2f}; "
          f"re-closes: {', '.join(f'{c:.3f}' for c in closes[1:])} s")
    cpu_ratio = statistics.median(c / r for c, r in zip(cpus[1:], read_cpus[1:]))
    print(f"[{label}] close CPU time of this process: median {statistics.median(cpus):.3f} s, "
          f"read's {statistics.median(read_cpus):.3f} s: CPU ratio {cpu_ratio:.2f} (first close "
          f"{cpus[0] / read_cpus[0]:.2f})")
    print(f"[{label}] workers skipped (shifts, pay) of all, stored rows read back, per round: {skips}")
    out = {"read_s": read_s, "close_s": statistics.median(closes[1:]), "ratio": ratio,
           "reclose_read_s": statistics.median(reads[1:]),
           "close_cpu_s": statistics.median(cpus[1:]), "cpu_ratio": cpu_ratio,
           "first_close_s": closes[0], "first_ratio": closes[0] / reads[0],
           "events": n_rows, "shifts": n_shifts, "statements": n_statements, "skipped": skips}
    if fresh_url is not None:
        f = floor(url, fresh_url, label)
        out["floor"] = {k: (round(v, 3) if isinstance(v, float) else v) for k, v in f.items()}
        out["floor_ratio"] = {k: round(v / read_s, 2) for k, v in f.items() if isinstance(v, float)}
        print(f"[{label}] floor ratios (insert only / baseline read): {out['floor_ratio']}")
        fastest = "copy" if "copy" in f else "executemany"  # the database's fastest path, triggers on
        out["fastest"], out["floor_s"] = fastest, f[fastest]
        out["first_to_floor"] = closes[0] / f[fastest]
        print(f"[{label}] first close / its write floor ({fastest}, same rows, same run): "
              f"{out['first_to_floor']:.2f} (target <= 2)")
    return out


def verdicts(label: str, m: dict) -> list[str]:
    """The lines that say, for one database, each figure next to its same-run floor or baseline,
    the ratio, the target and whether it was met."""
    def met(ratio: float, target: float) -> str:
        return "met" if ratio <= target else "not met"
    return [f"[{label}] first close {m['first_close_s']:.3f} s / its write floor {m['floor_s']:.3f} s "
            f"({m['fastest']} of the same rows, one transaction, same run) = {m['first_to_floor']:.2f}x "
            f"(target <= 2x): {met(m['first_to_floor'], 2.0)}",
            f"[{label}] re-close unchanged {m['close_s']:.3f} s (median of {len(m['skipped']) - 1}) / "
            f"reading its events {m['reclose_read_s']:.3f} s (same rounds) = {m['ratio']:.2f}x "
            f"(target <= 5x): {met(m['ratio'], 5.0)}"]


def _exponent(sizes: list[int], times: list[float]) -> float:
    """Least-squares slope of log time vs log size."""
    xs, ys = [math.log(n) for n in sizes], [math.log(t) for t in times]
    mx, my = statistics.mean(xs), statistics.mean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="50 workers, SQLite only")
    parser.add_argument("--workers", type=int, help="number of workers (default 5000)")
    parser.add_argument("--rounds", type=int, help="alternating rounds, >= 2: the first close, then "
                        "re-closes (default 3)")
    parser.add_argument("--no-postgres", action="store_true", help="SQLite only")
    parser.add_argument("--growth", action="store_true", help="also 1x, 2x, 4x --growth-workers")
    parser.add_argument("--growth-workers", type=int, default=1000)
    args = parser.parse_args()
    workers = args.workers or (50 if args.smoke else 5000)
    rounds = args.rounds or (2 if args.smoke else 3)
    if rounds < 2:
        parser.error("--rounds must be at least 2 (a first close and a re-close)")
    load = [round(x, 2) for x in os.getloadavg()]
    lines = []
    out = {"bench": "month_close", "figures": {}, "baseline": {}, "ratio": {},
           "target": {"re_close_to_read": 5.0, "first_close_to_floor": 2.0}}
    with tempfile.TemporaryDirectory() as tmp:
        n = iter(range(1, 100))
        m = measure(f"sqlite:///{tmp}/bench.db", workers, rounds, "sqlite",
                    fresh_url=lambda: f"sqlite:///{tmp}/floor{next(n)}.db")
    lines += verdicts("sqlite", m)
    out["figures"]["sqlite_close_s"] = round(m["close_s"], 3)
    out["figures"]["sqlite_first_close_s"] = round(m["first_close_s"], 3)
    out["ratio"]["sqlite_first_close"] = round(m["first_ratio"], 2)
    out["ratio"]["sqlite_first_to_floor"] = round(m["first_to_floor"], 2)
    out["floor"] = {"sqlite": m["floor"]}
    out["floor_ratio"] = {"sqlite": m["floor_ratio"]}
    out["figures"]["shifts"] = m["shifts"]
    out["baseline"]["sqlite_read_s"] = round(m["read_s"], 4)
    out["ratio"]["sqlite"] = round(m["ratio"], 2)
    out["cpu_ratio"] = {"sqlite": round(m["cpu_ratio"], 2)}
    if not (args.smoke or args.no_postgres):
        from testkit.postgres import PostgresCluster

        with PostgresCluster() as pg:
            n = iter(range(1, 100))
            p = measure(pg.url, workers, rounds, "postgresql",
                        fresh_url=lambda: pg.create_database(f"floor{next(n)}"))
        lines += verdicts("postgresql", p)
        out["figures"]["postgresql_close_s"] = round(p["close_s"], 3)
        out["figures"]["postgresql_first_close_s"] = round(p["first_close_s"], 3)
        out["ratio"]["postgresql_first_close"] = round(p["first_ratio"], 2)
        out["ratio"]["postgresql_first_to_floor"] = round(p["first_to_floor"], 2)
        out["floor"]["postgresql"] = p["floor"]
        out["floor_ratio"]["postgresql"] = p["floor_ratio"]
        out["baseline"]["postgresql_read_s"] = round(p["read_s"], 4)
        out["ratio"]["postgresql"] = round(p["ratio"], 2)
        out["cpu_ratio"]["postgresql"] = round(p["cpu_ratio"], 2)
    if args.growth:
        sizes = [args.growth_workers * k for k in (1, 2, 4)]
        times, cpu = [], []
        for n in sizes:
            with tempfile.TemporaryDirectory() as tmp:
                g = measure(f"sqlite:///{tmp}/g.db", n, rounds, f"sqlite {n} workers")
            times.append(g["close_s"])
            cpu.append(g["close_cpu_s"])
        exponent, cpu_exponent = _exponent(sizes, times), _exponent(sizes, cpu)
        print(f"growth: close time at {sizes} workers: {[round(t, 2) for t in times]} s; "
              f"exponent {exponent:.2f} (1.0 = linear); CPU {[round(t, 2) for t in cpu]} s, "
              f"exponent {cpu_exponent:.2f}")
        out["growth"] = {"workers": sizes, "close_s": [round(t, 3) for t in times],
                         "exponent": round(exponent, 2), "close_cpu_s": [round(t, 3) for t in cpu],
                         "cpu_exponent": round(cpu_exponent, 2)}
    out["met"] = all(v <= 2.0 if k.endswith("_first_to_floor") else v <= 5.0
                     for k, v in out["ratio"].items() if not k.endswith("_first_close"))
    out["load"] = {"start": load, "end": [round(x, 2) for x in os.getloadavg()]}
    print(f"load average (1, 5, 15 min) at the start {load}, at the end {out['load']['end']}")
    for line in lines:
        print(line)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
