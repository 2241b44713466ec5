"""Benchmark: the batch payslip PDF of a month (5,000 workers x 25 shifts) from the ledger, next to
computing the same statements in the same run (target: PDF <= 5x the computation).

    .venv/bin/python bench/payslips.py            # 5,000 workers (SQLite)
    .venv/bin/python bench/payslips.py --smoke    # 40 workers

Set-up (timed apart): signed tap events for every shift (``bench/pay_month.populate``), shifts
rebuilt, statements computed and stored, the registry's worker rows. Timed once each, in this run:
- baseline: ``pay_from_ledger`` without storing (read shifts + P1-P7) = computing the statements;
- figure: ``build_slips`` (read the stored statements and lines, group per worker) + ``render``
  (ReportLab, fonts embedded) of the batch PDF; pages per second.
The two alternate for ``--rounds`` rounds (default 3); the round with the median ratio is reported.
The last line is the JSON summary.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import tempfile
import time
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import random  # noqa: E402

from pay_month import FIRST, LAST, populate  # noqa: E402

from central.db import make_engine  # noqa: E402
from central.ledger.store import rebuild_shifts  # noqa: E402
from central.pay.cli import load_setup  # noqa: E402
from central.pay.statements_store import pay_from_ledger  # noqa: E402
from central.pay.payslip import build_slips  # noqa: E402
from central.pay.payslip_pdf import render  # noqa: E402
from central.registry.schema import workers as workers_table  # noqa: E402

Z = ZoneInfo("America/Sao_Paulo")
KEY = b"bench-payslip-key-0123456789abcdef"


def measure(url: str, n_workers: int, out_pdf: Path | None, rounds: int = 3) -> dict:
    t0 = time.perf_counter()
    populate(url, n_workers, 25, random.Random(7))
    engine = make_engine(url)
    now = dt.datetime(2026, 4, 2, tzinfo=dt.UTC)
    rebuild_shifts(engine, FIRST, LAST, Z, now=now)
    _port, rulebook, calendar = load_setup(None)
    pay_from_ledger(engine, FIRST, LAST, rulebook, calendar, now=now, store=True)
    with engine.begin() as conn:
        conn.execute(workers_table.insert(), [
            {"registration": f"{100000 + w}", "name": f"Trabalhador Portuário {w:04d}", "category": "vigia",
             "status": "active", "updated_at": now} for w in range(n_workers)])
    setup_s = time.perf_counter() - t0

    rounds_out = []
    for _ in range(rounds):  # alternating, so both sides see the same machine load
        t0 = time.perf_counter()
        run = pay_from_ledger(engine, FIRST, LAST, rulebook, calendar, now=now, store=False)
        compute_s = time.perf_counter() - t0
        n_computed = len(run.statements)
        del run
        t0 = time.perf_counter()
        with engine.connect() as conn:
            slips = build_slips(conn, FIRST, LAST)
        read_s = time.perf_counter() - t0
        t1 = time.perf_counter()
        data, pages = render(slips, KEY, tz=Z, date_from=FIRST, date_to=LAST)
        render_s = time.perf_counter() - t1
        pdf_s = time.perf_counter() - t0
        rounds_out.append({"compute_s": compute_s, "pdf_s": pdf_s, "read_s": read_s, "render_s": render_s,
                           "ratio": pdf_s / compute_s})
        print(f"round {len(rounds_out)}: computing {n_computed} statements {compute_s:.2f} s; batch PDF "
              f"{pdf_s:.2f} s (read {read_s:.2f} + render {render_s:.2f}), ratio {pdf_s / compute_s:.2f}")
    engine.dispose()
    if out_pdf:
        out_pdf.write_bytes(data)
    statements = sum(len(s.statements) for s in slips)
    mid = sorted(rounds_out, key=lambda r: r["ratio"])[(len(rounds_out) - 1) // 2]  # the median round (lower)
    print(f"set-up (events, shifts, stored statements): {setup_s:.1f} s")
    print(f"baseline: computing {n_computed} statements (read shifts + P1-P7): {mid['compute_s']:.2f} s")
    print(f"batch PDF: {len(slips)} slips, {statements} statements, {pages} pages, {len(data) / 1e6:.1f} MB: "
          f"{mid['pdf_s']:.2f} s (read {mid['read_s']:.2f} s + render {mid['render_s']:.2f} s), "
          f"{pages / mid['pdf_s']:.0f} pages/s, ratio {mid['ratio']:.2f} (median of {len(rounds_out)} rounds)")
    return {**mid, "pages": pages, "slips": len(slips), "statements": statements, "bytes": len(data),
            "rounds": [round(r["ratio"], 2) for r in rounds_out]}


def main() -> None:
    from _cli import count, description, exit_on_signals  # bench/_cli.py (bench/ is sys.path[0])

    exit_on_signals()  # SIGTERM/SIGINT: the clean-up below runs (components stopped, temp dirs removed)
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--smoke", action="store_true", help="40 workers")
    parser.add_argument("--workers", type=count, help="number of workers (default 5000)")
    parser.add_argument("--out", type=Path, help="keep the batch PDF here")
    parser.add_argument("--rounds", type=count, default=3, help="alternating rounds (computation, PDF); the median round is reported")
    args = parser.parse_args()
    n = args.workers if args.workers is not None else (40 if args.smoke else 5000)
    with tempfile.TemporaryDirectory() as tmp:
        m = measure(f"sqlite:///{tmp}/bench.db", n, args.out, max(1, args.rounds))
    print(json.dumps({"bench": "payslips", "workers": n,
                      "figures": {"pdf_s": round(m["pdf_s"], 3), "pages": m["pages"],
                                  "pages_per_s": round(m["pages"] / m["pdf_s"], 1),
                                  "render_s": round(m["render_s"], 3), "read_s": round(m["read_s"], 3),
                                  "statements": m["statements"], "mbytes": round(m["bytes"] / 1e6, 2)},
                      "baseline": {"compute_s": round(m["compute_s"], 3)},
                      "ratio": round(m["ratio"], 2), "round_ratios": m["rounds"], "target": 5.0,
                      "met": m["ratio"] <= 5.0}))


if __name__ == "__main__":
    main()
