"""Benchmark: production pay for one month (DESIGN.md: 5,000 workers × 25 shifts).

Figure: time to pay every gang of the month with the pure engine (``pay_gangs``), from ready
``GangWork`` values. Baseline, measured in the same run: reading the same input rows (members and
tally rows) back from a SQLite table. Rounds alternate baseline and pay (``--rounds``, default 3);
the figures are the medians, the ratio the median of the rounds' ratios. Target (issue 23): ≤ 3.

    .venv/bin/python bench/production_pay.py          # 12,500 gangs of 10 (125,000 member-shifts)
    .venv/bin/python bench/production_pay.py --smoke  # 50 gangs
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import random
import sqlite3
import statistics
import tempfile
import time
from decimal import Decimal
from pathlib import Path

from central.production.engine import pay_gangs
from central.production.model import GangWork, Interruption, Member, Tariff, TariffTable, TallyRow
from central.production.rulebook import find_rulebook

ROLES = ["general_foreman", "hatch_foreman"] + ["stevedore"] * 8


def build(gangs: int, seed: int = 7) -> list[GangWork]:
    rnd = random.Random(seed)
    works = []
    for g in range(gangs):
        day = dt.date(2026, 3, 1) + dt.timedelta(days=g % 28)
        members = tuple(Member(f"R{(g * 10 + i) % 5000:05d}", role, rnd.randint(1, 4), True,
                               Decimal(rnd.randint(120, 480)), f"gang.csv:{g * 10 + i + 2}")
                        for i, role in enumerate(ROLES))
        tally = tuple(TallyRow(rnd.choice(["bagged", "general", "containers"]),
                               Decimal(rnd.randint(0, 300000)) / 1000, f"tally.csv:{g * 2 + k + 2}") for k in range(2))
        stops = (Interruption("rain", Decimal(rnd.randint(5, 90)), f"interruptions.csv:{g + 2}"),) if g % 3 == 0 else ()
        works.append(GangWork(f"T{g}", "9123456", day, "07-13", dt.datetime.combine(day, dt.time(16), dt.UTC),
                              members, tally, stops))
    return works


def store_rows(works: list[GangWork], path: Path) -> None:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE m (gang TEXT, registration TEXT, role TEXT, holds INT, minutes TEXT)")
    con.execute("CREATE TABLE t (gang TEXT, cargo_class TEXT, quantity TEXT)")
    con.executemany("INSERT INTO m VALUES (?,?,?,?,?)", [(w.gang_id, m.registration, m.role, m.holds_worked,
                    str(m.minutes_worked)) for w in works for m in w.members])
    con.executemany("INSERT INTO t VALUES (?,?,?)", [(w.gang_id, r.cargo_class, str(r.quantity))
                                                     for w in works for r in w.tally])
    con.commit()
    con.close()


def baseline_read(path: Path) -> float:
    """Seconds to read the input rows back (members and tally rows, ordered by gang)."""
    con = sqlite3.connect(path)
    start = time.perf_counter()
    rows = con.execute("SELECT * FROM m ORDER BY gang").fetchall() + con.execute("SELECT * FROM t ORDER BY gang").fetchall()
    elapsed = time.perf_counter() - start
    con.close()
    assert rows
    return elapsed


def main() -> None:
    from _cli import count, exit_on_signals  # bench/_cli.py (bench/ is sys.path[0])

    exit_on_signals()  # SIGTERM/SIGINT: the clean-up below runs (components stopped, temp dirs removed)
    parser = argparse.ArgumentParser()
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--rounds", type=count, default=3, help="alternating baseline/pay rounds")
    args = parser.parse_args()
    gangs = 50 if args.smoke else 12_500
    works = build(gangs)
    tariffs = TariffTable((Tariff("bagged", "t", Decimal("3.20"), dt.date(2026, 1, 1)),
                           Tariff("general", "t", Decimal("4.50"), dt.date(2026, 1, 1)),
                           Tariff("containers", "unit", Decimal("25.00"), dt.date(2026, 1, 1))))
    book = find_rulebook("dl-2032-1940")
    reads, pays, ratios = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        store_rows(works, db)
        for _ in range(max(1, args.rounds)):
            read_s = baseline_read(db)
            start = time.perf_counter()
            results = pay_gangs(works, book, tariffs)
            pay_s = time.perf_counter() - start
            reads.append(read_s)
            pays.append(pay_s)
            ratios.append(pay_s / read_s if read_s else float("inf"))
            del results
            gc.collect()  # the previous round's statements are not the next round's garbage
    results = pay_gangs(works, book, tariffs)
    total = sum(m.total for r in results for m in r.members)
    lines = sum(len(m.lines) for r in results for m in r.members)
    read_s, pay_s, ratio = statistics.median(reads), statistics.median(pays), statistics.median(ratios)
    print(f"gangs {gangs}, member-shifts {gangs * len(ROLES)}, statement lines {lines}, total R$ {total}")
    print(f"pay (engine)            {pay_s:8.3f} s  (rounds: {', '.join(f'{x:.3f}' for x in pays)})")
    print(f"baseline (SQLite read)  {read_s:8.3f} s  (rounds: {', '.join(f'{x:.3f}' for x in reads)})")
    print(f"ratio                   {ratio:8.2f} (median of the rounds' ratios; target ≤ 3, issue 23)")
    print(json.dumps({"bench": "production_pay", "figures": {"pay_s": round(pay_s, 4), "gangs": gangs,
                      "lines": lines, "total": str(total)}, "baseline": {"read_s": round(read_s, 4)},
                      "ratio": round(ratio, 2), "target": 3.0, "met": ratio <= 3.0}))


if __name__ == "__main__":
    main()
