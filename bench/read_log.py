"""Benchmark: the office's read log (``GET /reads``, issue 34 item 12) over 1,000,000 taps.

A migrated SQLite ledger (the migrations' indexes, 0024 included) holds ``--taps`` taps spread
over 30 days, 40 gates and 5,000 workers (a card each; one tap in twenty refused, some without a
worker). For each search the office makes, the page over HTTP (uvicorn, logged in) is timed
against the page's SQL alone: the exact statements that one render executes (captured from the
engine), replayed on a plain sqlite3 connection, interleaved with the page samples (same run).

- figures: per search ``page_p95_ms`` and the worst ``ratio`` page / SQL;
- baseline: per search ``sql_p95_ms``;
- target: page p95 <= 2x its SQL alone (issue 34), and the deepest page no slower than the first
  by more than 2x (keyset paging: no OFFSET).

What the SQL side holds: every statement one render executes (all are SELECTs: a GET writes
nothing), the session's user lookup (``central.web.users.session_user``) included, so no query the
page runs is left out. What only the page side holds: the HTTP request and response (the client
runs in this process, beside uvicorn's thread), the middleware (signed session cookie, security
headers), a thread-pool hop for the page's read (the session's user is read on the event loop on
SQLite, ``WebState.quick_read_here``), SQLAlchemy's statement building and row processing, the template. An empty signed-in page costs ~2 ms in process on an idle
core (docs/performance.md, "Read log", "Where the page time goes"), several times a search's SQL.

``--smoke``: 20,000 taps, few samples (CI runs it through ``bench/run_all.py --smoke``). Last line:
one JSON object.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from sqlalchemy import func, select  # noqa: E402

from central.db import make_engine  # noqa: E402
from central.ledger.migrate import upgrade_engine  # noqa: E402
from central.ledger.schema import events  # noqa: E402
from central.registry.schema import workers  # noqa: E402
from office_web import PASSWORD, TZ, measure_pages  # noqa: E402
from portgate.timeutil import as_utc  # noqa: E402
from wire.events import new_event_id  # noqa: E402

GATES, WORKERS, DAYS = 40, 5000, 30


def fill(engine, n: int, end: dt.datetime, rng: random.Random) -> None:
    """``n`` taps over the ``DAYS`` days before ``end``, and the workers they name."""
    from sqlalchemy.orm import Session

    from central.web.users import add_user

    with engine.begin() as conn:
        conn.execute(workers.insert(), [dict(registration=f"W{i:05d}", name=f"Trabalhador {i}", category="vigia",
                                             status="active", rotation_number=i, updated_at=end)
                                        for i in range(1, WORKERS + 1)])
        span = DAYS * 86400.0
        start = end - dt.timedelta(days=DAYS)
        seqs: dict[str, int] = {}
        batch = []
        for i in range(n):
            gate = f"g{rng.randrange(GATES):03d}"
            seq = seqs[gate] = seqs.get(gate, 0) + 1
            w = rng.randrange(1, WORKERS + 1)
            decision = "deny" if rng.random() < 0.05 else rng.choice(("admit", "exit"))
            reg = None if decision == "deny" and rng.random() < 0.3 else f"W{w:05d}"
            uid = f"{0x10000000 + w:08X}" if reg else f"{rng.getrandbits(32):08X}"
            payload = {"type": "tap", "uid": uid, "reader_id": "r", "reader_kind": "control", "decision": decision,
                       "rules_failed": [], "flags": ["CARD_UNKNOWN"] if reg is None else [], "message": "",
                       "registration": reg}
            at = start + dt.timedelta(seconds=span * i / n)
            batch.append(dict(event_id=new_event_id(), port="santos", gate_id=gate, boot_id="b", seq=seq,
                              occurred_at=at, clock_trusted=True, mono_ns=i, type="tap", registration=reg,
                              decision=decision, payload=payload, mac="0" * 64, raw=b"{}", received_at=at))
            if len(batch) == 10_000:
                conn.execute(events.insert(), batch)
                batch = []
        if batch:
            conn.execute(events.insert(), batch)
    with Session(engine) as s, s.begin():
        add_user(s, "bench", role="auditor", password=PASSWORD, actor="bench")


def open_ledger(path: Path, n: int, rng: random.Random):
    """The migrated ledger at ``path`` with ``n`` taps (written by ``fill`` unless it already holds
    taps: then those are used): ``(engine, taps, now, fill_s)``, ``now`` just after the last tap."""
    engine = make_engine(f"sqlite:///{path}")
    upgrade_engine(engine)
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    t0 = time.perf_counter()
    with engine.connect() as conn:
        filled = conn.execute(select(func.count()).select_from(events)).scalar()
        last = conn.execute(select(func.max(events.c.occurred_at))).scalar()
    if filled:
        n, now = filled, as_utc(last) + dt.timedelta(seconds=1)
    else:
        fill(engine, n, now, rng)
    return engine, n, now, time.perf_counter() - t0


def searches(engine, n: int, now: dt.datetime) -> dict[str, str]:
    """The searches the office makes, ``{name: path}``: a week, a month (its first page and a page
    90% of the taps down, by keyset), a gate, a worker, a card, the refusals, a gate's refusals."""
    today = now.astimezone(ZoneInfo(TZ)).date()
    month = f"from={today - dt.timedelta(days=DAYS)}&to={today}"
    with engine.connect() as conn:
        ids = conn.execute(select(events.c.id).order_by(events.c.occurred_at.desc(), events.c.id.desc())
                           .offset(int(n * 0.9)).limit(1)).scalar()
    return {
        "week": f"/reads?from={today - dt.timedelta(days=6)}&to={today}",
        "month_first": f"/reads?{month}",
        "month_deep": f"/reads?{month}&after={ids}",  # 90% of a million rows down: keyset, no OFFSET
        "gate": f"/reads?{month}&gate=g007",
        "worker": f"/reads?{month}&worker=W02500",
        "card": f"/reads?{month}&card={0x10000000 + 2500:08X}",
        "denied": f"/reads?{month}&decision=deny",
        "gate_denied": f"/reads?{month}&gate=g007&decision=deny",
    }


def main(argv=None) -> int:
    from _cli import count, exit_on_signals  # bench/_cli.py (bench/ is sys.path[0])

    exit_on_signals()  # SIGTERM/SIGINT: the clean-up below runs (components stopped, temp dirs removed)
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--smoke", action="store_true", help="20,000 taps, few samples")
    ap.add_argument("--taps", type=count, default=1_000_000)
    ap.add_argument("--samples", type=count, default=30)
    ap.add_argument("--ledger", type=Path, help="a ledger an earlier run filled (its taps are reused: the "
                                                "million takes ~20 min to write on a loaded machine)")
    ap.add_argument("--keep", action="store_true", help="keep the ledger written (for --ledger later)")
    args = ap.parse_args(argv)
    n, samples = (20_000, 5) if args.smoke else (args.taps, args.samples)
    made = None if args.ledger else Path(tempfile.mkdtemp(prefix="bench-read-log-"))
    path = args.ledger or made / "ledger.db"
    engine, n, now, fill_s = open_ledger(path, n, random.Random(34))
    pages = searches(engine, n, now)
    try:
        out = measure_pages(engine, path, pages, samples, "data-decision", timeout=120)
    finally:
        engine.dispose()
        if made is not None and not args.keep:
            shutil.rmtree(made, ignore_errors=True)  # a million taps are 700 MB
        elif made is not None:
            print(f"ledger kept: {path} (reuse it with --ledger)", flush=True)
    worst = max(v["ratio"] or 0 for v in out.values())
    deep_vs_first = out["month_deep"]["page_p95_ms"] / out["month_first"]["page_p95_ms"]
    print(json.dumps({
        "bench": "read_log",
        "figures": {"taps": n, "fill_s": round(fill_s, 1), "worst_ratio": worst,
                    "deep_vs_first": round(deep_vs_first, 2),
                    "pages": {k: {"page_p95_ms": v["page_p95_ms"], "ratio": v["ratio"]} for k, v in out.items()}},
        "baseline": {"sql_p95_ms": {k: v["sql_p95_ms"] for k, v in out.items()}},
        "ratio": worst,
        "target": "page p95 <= 2x its SQL alone; deepest page <= 2x the first (issue 34)",
        "met": worst <= 2 and deep_vs_first <= 2,
    }))
    return 0

if __name__ == "__main__":
    raise SystemExit(main())
