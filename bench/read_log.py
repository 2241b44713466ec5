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

``--smoke``: 20,000 taps, few samples (CI runs it through ``bench/run_all.py --smoke``). Last line:
one JSON object.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import httpx  # noqa: E402
from sqlalchemy import func, select  # noqa: E402

from central.db import make_engine  # noqa: E402
from central.ledger.migrate import upgrade_engine  # noqa: E402
from central.ledger.schema import events  # noqa: E402
from central.registry.schema import workers  # noqa: E402
from office_web import PASSWORD, TZ, capture_sql, login, p95, serve  # noqa: E402
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--smoke", action="store_true", help="20,000 taps, few samples")
    ap.add_argument("--taps", type=int, default=1_000_000)
    ap.add_argument("--samples", type=int, default=30)
    ap.add_argument("--ledger", type=Path, help="a ledger an earlier run filled (its taps are reused: the "
                                                "million takes ~20 min to write on a loaded machine)")
    ap.add_argument("--keep", action="store_true", help="keep the ledger written (for --ledger later)")
    args = ap.parse_args(argv)
    n, samples = (20_000, 5) if args.smoke else (args.taps, args.samples)
    rng = random.Random(34)
    tz = ZoneInfo(TZ)
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    made = None if args.ledger else Path(tempfile.mkdtemp(prefix="bench-read-log-"))
    path = args.ledger or made / "ledger.db"
    engine = make_engine(f"sqlite:///{path}")
    upgrade_engine(engine)
    t0 = time.perf_counter()
    with engine.connect() as conn:
        filled = conn.execute(select(func.count()).select_from(events)).scalar()
        last = conn.execute(select(func.max(events.c.occurred_at))).scalar()
    if filled:
        n, now = filled, as_utc(last) + dt.timedelta(seconds=1)
    else:
        fill(engine, n, now, rng)
    fill_s = time.perf_counter() - t0
    today = now.astimezone(tz).date()
    month = f"from={today - dt.timedelta(days=DAYS)}&to={today}"
    with engine.connect() as conn:
        ids = conn.execute(select(events.c.id).order_by(events.c.occurred_at.desc(), events.c.id.desc())
                           .offset(int(n * 0.9)).limit(1)).scalar()
    pages = {
        "week": f"/reads?from={today - dt.timedelta(days=6)}&to={today}",
        "month_first": f"/reads?{month}",
        "month_deep": f"/reads?{month}&after={ids}",  # 90% of a million rows down: keyset, no OFFSET
        "gate": f"/reads?{month}&gate=g007",
        "worker": f"/reads?{month}&worker=W02500",
        "card": f"/reads?{month}&card={0x10000000 + 2500:08X}",
        "denied": f"/reads?{month}&decision=deny",
        "gate_denied": f"/reads?{month}&gate=g007&decision=deny",
    }
    server, thread, url = serve(engine, lambda: dt.datetime.now(dt.UTC))
    out: dict = {}
    try:
        with httpx.Client(base_url=url, follow_redirects=False, timeout=120) as client:
            login(client)
            raw = sqlite3.connect(path)
            for name, page_path in pages.items():
                r = client.get(page_path)  # warm
                assert r.status_code == 200 and "data-decision" in r.text, (page_path, r.status_code)
                statements = capture_sql(engine, client, page_path)
                page_ms, sql_ms = [], []
                for _ in range(samples):
                    t = time.perf_counter()
                    assert client.get(page_path).status_code == 200
                    page_ms.append((time.perf_counter() - t) * 1000)
                    t = time.perf_counter()
                    for statement, params in statements:
                        raw.execute(statement, params).fetchall()
                    sql_ms.append((time.perf_counter() - t) * 1000)
                page, sql = p95(page_ms), p95(sql_ms)
                out[name] = {"page_p95_ms": round(page, 2), "sql_p95_ms": round(sql, 2),
                             "ratio": round(page / sql, 2) if sql else None, "statements": len(statements)}
                print(f"{name:12s} page p95 {page:8.2f} ms   its SQL alone p95 {sql:8.2f} ms   "
                      f"ratio {page / sql:5.2f}", flush=True)
            raw.close()
    finally:
        server.should_exit = True
        thread.join(10)
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
