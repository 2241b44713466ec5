"""Benchmark: the month close, 125,000 shifts' events (5,000 workers x 25) -> shifts rebuilt ->
statements computed -> stored, next to reading the month's event rows in the same run (DESIGN.md
target: <= 5x).

    .venv/bin/python bench/month_close.py              # 5,000 workers, SQLite and PostgreSQL
    .venv/bin/python bench/month_close.py --smoke      # 50 workers, SQLite only
    .venv/bin/python bench/month_close.py --no-sqlite --workers 1000 --rounds 5   # PostgreSQL
    .venv/bin/python bench/month_close.py --growth     # also 1x, 2x, 4x --growth-workers (SQLite)

Set-up (not timed): the signed admit/exit taps of every shift are made once for both databases
(``bench/pay_month.month_events``) and inserted into ``events`` of a template ledger by the bulk
path (``insert_month``: COPY on PostgreSQL, the same rows as ``insert_events``; 250,000 events
went in one INSERT per row before, 295 s at load 18). The two targets of issue 32, each against a
floor measured in the same run, in rounds that take turns so that both see the same load (one
run on this shared machine gave 3.54x with the load falling between a close and its floor timed
minutes apart, another 2.03x at a steady load):
- first close <= 2x its write floor, in ``--rounds`` interleaved rounds (close then floor, then
  floor then close, ...), each on fresh databases: ``central.pay.close.close_month`` on a copy of
  the template (nothing derived stored yet: every shift, flag, statement and line written) and
  the floor, the same rows (shifts, flags, statements, lines, as the driver stores them, read back
  from the first round's closed ledger) inserted into a copy of an empty migrated ledger by that
  database's fastest path, in one transaction, change counting triggers on
  (``central.ledger.changes``): ``executemany`` on SQLite, ``COPY`` on PostgreSQL (through
  ``central.ledger.bulk.insert_tuples``, the close's own path: binary format where the columns'
  types allow, which is the database's fastest path for these rows, docs/performance.md, ninth
  pass). The verdict is
  the median of the rounds' ratios; each round is printed with its wall time, this process's CPU
  time, the PostgreSQL cluster's CPU time (``bench/_interleave.cluster_cpu``: postmaster,
  backends, background processes, from /proc) and the load average, and the CPU ratio (process +
  server) beside the wall one. PostgreSQL: copies by ``CREATE DATABASE ... STRATEGY FILE_COPY``
  and a CHECKPOINT before each timed piece, the template VACUUM ANALYZEd, no autovacuum in the
  bench's cluster: no background work of a copy or of the last figure inside the next one;
- re-close of an unchanged month <= 5x reading its events: on the last round's closed ledger,
  ``--reclose-rounds`` rounds of reading the month's tap rows (best of 3) then re-closing (every
  worker skipped); the median of the rounds' ratios.
Printed per re-close round: the workers skipped and the stored rows read back
(``CloseResult.read``). The closing lines give each figure with its floor or baseline, the ratio
and "met"/"not met", and the machine's load average at the start and end. ``--growth`` fits the
exponent of re-close time vs workers (1.0 = linear), on wall time and on this process's CPU time.
The last line is the JSON summary.
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
from pay_month import FIRST, LAST, insert_month, month_events  # noqa: E402
from _interleave import Stopwatch, Timed, describe, ratios  # noqa: E402

Z = ZoneInfo("America/Sao_Paulo")
NOW = dt.datetime(2026, 4, 2, tzinfo=dt.UTC)


DERIVED = (shifts, shift_flags, statements, statement_lines)


def derived_rows(engine) -> dict[str, tuple[list[str], list[tuple]]]:
    """``{table: (columns, rows)}``: the rows a close stored (shifts, flags, statements, lines), as
    the driver hands them back, without the autoincrement ids."""
    data = {}
    with engine.connect() as conn:
        for table in DERIVED:
            names = [c.name for c in table.c if not (c.primary_key and c.autoincrement is True
                                                     and c.name == "id")]
            q = f"SELECT {', '.join(names)} FROM {table.name}"
            data[table.name] = (names, [tuple(r) for r in conn.exec_driver_sql(q)])
    return data


def insert_floor(target: str, data: dict, method: str, datadir=None) -> Timed:
    """Insert ``data`` into the empty migrated ledger ``target`` in one transaction, change counting
    triggers on (``central.ledger.changes``) unless ``method`` ends with " no triggers": ``copy``
    (PostgreSQL's COPY, ``insert_tuples(bound=True)``: binary format where the columns allow) or ``executemany``; timed."""
    eng = make_engine(target)
    if method.endswith(" no triggers"):  # what the change counters cost the inserts
        with eng.begin() as conn:
            _drop_triggers(conn)
    with eng.connect() as conn:  # the connection opened before the clock starts, as the close's
        conn.rollback()
    with Stopwatch(datadir) as sw:
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
    eng.dispose()
    return sw.timed


def _drop_triggers(conn) -> None:
    """Drop the change-counting triggers of ``central.ledger.changes`` (the floor without them)."""
    for table in WATCHED:
        if conn.dialect.name == "postgresql":
            conn.exec_driver_sql(f"DROP TRIGGER IF EXISTS {table}_changes ON {table}")
        else:
            for op in ("insert", "update", "delete"):
                conn.exec_driver_sql(f"DROP TRIGGER IF EXISTS {table}_changes_{op}")


def first_closes(populated, empty, rounds: int, label: str, method: str, datadir=None) -> dict:
    """The first close against its write floor in ``rounds`` interleaved rounds, each on fresh
    databases (``populated(i)``: a copy of the month's events, nothing closed; ``empty(i)``: an
    empty migrated ledger): close then floor in even rounds, floor then close in odd ones (a load
    that rises or falls through the run weighs on both alike). The floor inserts the rows the first
    round's close stored, by ``method``. Returns the per-round figures, the median ratio and the
    last round's closed ledger (``url``) for the re-close rounds."""
    _port, rulebook, calendar = load_setup(None)
    data, closes, floors, url, done = None, [], [], None, None
    for i in range(rounds):
        for what in (("close", "floor") if i % 2 == 0 else ("floor", "close")):
            if what == "close":
                url = populated(i)
                engine = make_engine(url)
                with engine.connect() as conn:  # a pooled connection, as a running office has
                    conn.rollback()
                with Stopwatch(datadir) as sw:
                    done = close_month(engine, FIRST, LAST, Z, rulebook, calendar, now=NOW)
                closes.append(sw.timed)
                if data is None:
                    data = derived_rows(engine)
                engine.dispose()
            else:
                floors.append(insert_floor(empty(i), data, method, datadir))
        print(f"[{label}] round {i + 1}/{rounds}: first close {describe(closes[-1])}; {method} floor "
              f"{describe(floors[-1])}; ratio {closes[-1].wall / floors[-1].wall:.2f}x wall, "
              f"{closes[-1].all_cpu / max(floors[-1].all_cpu, 1e-9):.2f}x CPU", flush=True)
    r = ratios(closes, floors)
    n_rows = sum(len(rows) for _names, rows in data.values())
    print(f"[{label}] first close / {method} floor of the same {n_rows} rows, {rounds} interleaved rounds: "
          f"median {r['median']:.2f}x wall (rounds {', '.join(f'{x:.2f}' for x in r['wall'])}), "
          f"median {r['cpu_median']:.2f}x CPU incl. server (rounds {', '.join(f'{x:.2f}' for x in r['cpu'])})")
    return {"closes": closes, "floors": floors, "ratios": r, "url": url, "rows": n_rows, "done": done,
            "method": method}


def recloses(url: str, rounds: int, label: str) -> dict:
    """Re-closes of the unchanged month of the closed ledger ``url``, each after reading its
    events (best of 3) in the same round; the median of the per-round ratios."""
    engine = make_engine(url)
    _port, rulebook, calendar = load_setup(None)
    lo = dt.datetime.combine(FIRST, dt.time(0), Z).astimezone(dt.UTC) - dt.timedelta(days=2)
    hi = dt.datetime.combine(LAST + dt.timedelta(days=1), dt.time(0), Z).astimezone(dt.UTC) + dt.timedelta(days=2)

    def read_rows() -> int:
        with engine.connect() as conn:
            return len(conn.execute(select(events.c.raw).where(
                events.c.type == "tap", events.c.occurred_at >= lo, events.c.occurred_at < hi)).all())

    reads, closes, skips = [], [], []
    for _ in range(rounds):
        best = []
        for _ in range(3):  # the read is short: its best of 3 per round
            with Stopwatch() as sw:
                n_rows = read_rows()
            best.append(sw.timed)
        reads.append(min(best, key=lambda t: t.wall))
        with Stopwatch() as sw:
            done = close_month(engine, FIRST, LAST, Z, rulebook, calendar, now=NOW)
        closes.append(sw.timed)
        skips.append((done.shifts_skipped, done.pay_skipped, done.workers, done.read))
    engine.dispose()
    r = ratios(closes, reads)
    print(f"[{label}] re-close of the unchanged month / reading its {n_rows} event rows, {rounds} rounds: "
          f"median {r['median']:.2f}x wall (rounds {', '.join(f'{x:.2f}' for x in r['wall'])}); "
          f"re-closes {', '.join(describe(t) for t in closes)}")
    print(f"[{label}] workers skipped (shifts, pay) of all, stored rows read back, per round: {skips}")
    return {"closes": closes, "reads": reads, "ratios": r, "skipped": skips, "events": n_rows,
            "done": done}


def measure(template: str, copy_of, evs: list, rounds: int, reclose_rounds: int, label: str,
            method: str, datadir=None) -> dict:
    """One database: the month's events ``evs`` (``month_events``) into ``template``, then
    ``first_closes`` on copies (``copy_of(template or None, name)``: a fresh database, a copy of
    that one or empty and migrated) and ``recloses`` on the last closed copy."""
    t0 = time.perf_counter()
    n_events = insert_month(template, evs)
    print(f"[{label}] set-up: {n_events} events inserted in {time.perf_counter() - t0:.1f} s", flush=True)
    first = first_closes(lambda i: copy_of(template, f"close{i}"), lambda i: copy_of(None, f"floor{i}"),
                         rounds, label, method, datadir)
    again = recloses(first["url"], reclose_rounds, label)
    med = statistics.median
    return {"first_close_s": med(t.wall for t in first["closes"]),
            "floor_s": med(t.wall for t in first["floors"]), "fastest": method,
            "first_to_floor": first["ratios"]["median"], "first_to_floor_rounds": first["ratios"]["wall"],
            "first_cpu_ratio": first["ratios"]["cpu_median"], "first_cpu_rounds": first["ratios"]["cpu"],
            "first_rounds": [{"close_s": round(c.wall, 3), "close_cpu_s": round(c.cpu, 3),
                              "close_server_cpu_s": round(c.server, 3), "floor_s": round(f.wall, 3),
                              "floor_cpu_s": round(f.cpu, 3), "floor_server_cpu_s": round(f.server, 3),
                              "load": round(c.load, 2)} for c, f in zip(first["closes"], first["floors"])],
            "close_s": med(t.wall for t in again["closes"]), "reclose_read_s": med(t.wall for t in again["reads"]),
            "read_s": med(t.wall for t in again["reads"]), "ratio": again["ratios"]["median"],
            "close_cpu_s": med(t.cpu for t in again["closes"]), "cpu_ratio": again["ratios"]["cpu_median"],
            "skipped": again["skipped"], "events": again["events"], "rows": first["rows"],
            "shifts": again["done"].shifts, "statements": again["done"].statements,
            "first_read": first["done"].read}


#: The full run's workers (DESIGN.md's month close is judged at this size; fewer: ``smoke_caveat``).
FULL_WORKERS = 5000


def verdicts(label: str, m: dict, caveat: str = "") -> list[str]:
    """The lines that say, for one database, each figure next to its same-run floor or baseline,
    the ratio (the median of the interleaved rounds' ratios), the target and whether it was met;
    ``caveat`` after each verdict (``_cli.smoke_caveat``: a run below the full size)."""
    def met(ratio: float, target: float) -> str:
        return "met" if ratio <= target else "not met"
    n_first = len(m.get("first_to_floor_rounds", ())) or 1
    return [f"[{label}] first close {m['first_close_s']:.3f} s / its write floor {m['floor_s']:.3f} s "
            f"({m['fastest']} of the same rows, one transaction; medians of {n_first} interleaved rounds) "
            f"= {m['first_to_floor']:.2f}x median of the rounds' ratios (target <= 2x): "
            f"{met(m['first_to_floor'], 2.0)}{caveat}",
            f"[{label}] re-close unchanged {m['close_s']:.3f} s (median of {len(m['skipped'])}) / "
            f"reading its events {m['reclose_read_s']:.3f} s (same rounds) = {m['ratio']:.2f}x "
            f"(target <= 5x): {met(m['ratio'], 5.0)}{caveat}"]


def _exponent(sizes: list[int], times: list[float]) -> float:
    """Least-squares slope of log time vs log size."""
    xs, ys = [math.log(n) for n in sizes], [math.log(t) for t in times]
    mx, my = statistics.mean(xs), statistics.mean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def _sqlite_copies(tmp: str):
    """``copy_of(template_url | None, name)`` for SQLite files in ``tmp``: a copy of the template's
    file (and its WAL, if any), or of one empty migrated ledger."""
    import shutil

    empty = f"{tmp}/empty.db"
    upgrade(f"sqlite:///{empty}")

    def copy_of(template: str | None, name: str) -> str:
        src = template.removeprefix("sqlite:///") if template else empty
        dst = f"{tmp}/{name}.db"
        for suffix in ("", "-wal"):
            if os.path.exists(src + suffix):
                shutil.copyfile(src + suffix, dst + suffix)
        return f"sqlite:///{dst}"
    return copy_of


def _pg_copies(pg):
    """``copy_of(template_url | None, name)`` in the cluster ``pg``: ``CREATE DATABASE ... TEMPLATE
    ... STRATEGY FILE_COPY`` of the template's database or of one empty migrated ledger, then a
    CHECKPOINT, so that no copy's pages or WAL are still being written while the next figure is
    timed (the default WAL_LOG strategy logs the whole copy; its checkpoint would land in a timed
    close or floor). The template is VACUUM ANALYZEd first, as autovacuum leaves an office's
    ledger (the bench's cluster runs without autovacuum: no background work in either figure)."""
    from sqlalchemy import create_engine

    admin = create_engine(pg.url.rsplit("/", 1)[0] + "/postgres", isolation_level="AUTOCOMMIT")
    upgrade(pg.create_database("empty"))
    vacuumed = set()

    def copy_of(template: str | None, name: str) -> str:
        source = template.rsplit("/", 1)[1] if template else "empty"
        if template and template not in vacuumed:
            vac = create_engine(template, isolation_level="AUTOCOMMIT")
            with vac.connect() as conn:
                conn.exec_driver_sql("VACUUM ANALYZE")
            vac.dispose()
            vacuumed.add(template)
        with admin.connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE "{name}" TEMPLATE "{source}" STRATEGY FILE_COPY')
            conn.exec_driver_sql("CHECKPOINT")
        return pg.url.rsplit("/", 1)[0] + f"/{name}"
    return copy_of


def _summary(out: dict, label: str, m: dict) -> None:
    """``m`` (``measure``) into the JSON summary ``out`` under ``label``."""
    out["figures"][f"{label}_close_s"] = round(m["close_s"], 3)
    out["figures"][f"{label}_first_close_s"] = round(m["first_close_s"], 3)
    out["ratio"][f"{label}_first_to_floor"] = round(m["first_to_floor"], 2)
    out["ratio"][label] = round(m["ratio"], 2)
    out["floor"][label] = {m["fastest"]: round(m["floor_s"], 3), "rows": m["rows"]}
    out["baseline"][f"{label}_read_s"] = round(m["read_s"], 4)
    out["baseline"][f"{label}_floor_s"] = round(m["floor_s"], 3)
    out["cpu_ratio"][label] = round(m["cpu_ratio"], 2) if m["cpu_ratio"] is not None else None
    out["cpu_ratio"][f"{label}_first_to_floor"] = (round(m["first_cpu_ratio"], 2)
                                                   if m["first_cpu_ratio"] is not None else None)
    out["rounds"][label] = {"first_to_floor": [round(x, 2) for x in m["first_to_floor_rounds"]],
                            "first_cpu": [round(x, 2) for x in m["first_cpu_rounds"]],
                            "first": m["first_rounds"]}
    out["figures"]["shifts"] = m["shifts"]


def main() -> None:
    from _cli import count, description, exit_on_signals, smoke_caveat  # bench/_cli.py (bench/ is sys.path[0])

    exit_on_signals()  # SIGTERM/SIGINT: the clean-up below runs (components stopped, temp dirs removed)
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--smoke", action="store_true", help="50 workers, SQLite only")
    parser.add_argument("--workers", type=count, help="number of workers (default 5000)")
    parser.add_argument("--rounds", type=count, help="interleaved first-close/floor rounds, each on "
                        "fresh databases (default 5; smoke 2)")
    parser.add_argument("--reclose-rounds", type=count, help="re-close rounds (default 3; smoke 2)")
    parser.add_argument("--no-postgres", action="store_true", help="SQLite only")
    parser.add_argument("--no-sqlite", action="store_true", help="PostgreSQL only")
    parser.add_argument("--growth", action="store_true", help="also 1x, 2x, 4x --growth-workers")
    parser.add_argument("--growth-workers", type=count, default=1000)
    args = parser.parse_args()
    workers = args.workers if args.workers is not None else (50 if args.smoke else FULL_WORKERS)
    rounds = args.rounds if args.rounds is not None else (2 if args.smoke else 5)
    reclose_rounds = args.reclose_rounds if args.reclose_rounds is not None else (2 if args.smoke else 3)
    caveat = smoke_caveat(args.smoke or workers < FULL_WORKERS)  # tiny sizes: the verdicts say nothing
    if args.no_sqlite and (args.no_postgres or args.smoke):
        parser.error("nothing to measure: --no-sqlite with " + ("--no-postgres" if args.no_postgres else
                     "--smoke (smoke sizes run SQLite only)"))
    load = [round(x, 2) for x in os.getloadavg()]
    lines = []
    out = {"bench": "month_close", "figures": {}, "baseline": {}, "ratio": {}, "floor": {},
           "cpu_ratio": {}, "rounds": {},
           "target": {"re_close_to_read": 5.0, "first_close_to_floor": 2.0}}
    t0 = time.perf_counter()
    evs = month_events(workers, 25, random.Random(7))  # once, for both databases
    print(f"set-up: {len(evs)} signed events of {workers} workers x 25 shifts made in "
          f"{time.perf_counter() - t0:.1f} s", flush=True)
    if not args.no_sqlite:
        with tempfile.TemporaryDirectory() as tmp:
            m = measure(f"sqlite:///{tmp}/bench.db", _sqlite_copies(tmp), evs, rounds,
                        reclose_rounds, "sqlite", "executemany")
        lines += verdicts("sqlite", m, caveat)
        _summary(out, "sqlite", m)
    if not (args.smoke or args.no_postgres):
        from testkit.postgres import PostgresCluster

        with PostgresCluster(options="-c autovacuum=off") as pg:
            p = measure(pg.url, _pg_copies(pg), evs, rounds, reclose_rounds, "postgresql", "copy",
                        datadir=pg.datadir)
        lines += verdicts("postgresql", p, caveat)
        _summary(out, "postgresql", p)
    if args.growth:
        sizes = [args.growth_workers * k for k in (1, 2, 4)]
        times, cpu = [], []
        for n in sizes:
            with tempfile.TemporaryDirectory() as tmp:
                g = measure(f"sqlite:///{tmp}/g.db", _sqlite_copies(tmp), month_events(n, 25, random.Random(7)), 1,
                            reclose_rounds,
                            f"sqlite {n} workers", "executemany")
            times.append(g["close_s"])
            cpu.append(g["close_cpu_s"])
        exponent, cpu_exponent = _exponent(sizes, times), _exponent(sizes, cpu)
        print(f"growth: re-close time at {sizes} workers: {[round(t, 2) for t in times]} s; "
              f"exponent {exponent:.2f} (1.0 = linear); CPU {[round(t, 2) for t in cpu]} s, "
              f"exponent {cpu_exponent:.2f}")
        out["growth"] = {"workers": sizes, "close_s": [round(t, 3) for t in times],
                         "exponent": round(exponent, 2), "close_cpu_s": [round(t, 3) for t in cpu],
                         "cpu_exponent": round(cpu_exponent, 2)}
    out["met"] = all(v <= 2.0 if k.endswith("_first_to_floor") else v <= 5.0
                     for k, v in out["ratio"].items())
    out["load"] = {"start": load, "end": [round(x, 2) for x in os.getloadavg()]}
    print(f"load average (1, 5, 15 min) at the start {load}, at the end {out['load']['end']}")
    for line in lines:
        print(line)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
