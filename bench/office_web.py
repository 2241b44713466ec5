"""Benchmark: the office web application's live page over a day of 5,000 workers, 60 ships in port
and 100,000 ledger events (DESIGN.md targets: p95 page time <= 2x its SQL queries alone; event
committed -> visible in the browser p95 <= 2 s).

The real app (``central.web.app.create_app``) is served by uvicorn on loopback over a SQLite
ledger filled here: the registry, one ship call and an escala of 4 periods x 10 posts per ship,
60 gate statuses, and the events (taps with admits, exits, denials, some flags) spread over the
day. Figures, all in the same run:

- ``page_p95_ms``: ``GET /live/panel`` (what the page fetches on every change) over HTTP, logged in;
- ``sql_p95_ms`` (the baseline): the exact SQL statements that one render executes (captured with
  a SQLAlchemy cursor hook), replayed on a raw sqlite3 connection, the whole set per sample,
  each sample right after a page sample (the machine is shared: both see the same load);
- ``live_p95_ms``: a tap admit committed to the ledger (``write_batch``, the ingest's own path) ->
  the worker shown aboard in headless Chromium on the live page (SSE notice + htmx fetch).

- ``registry``: the worker list (``GET /workers``, issue 34) over a registry of 50,000 workers and
  their cards in its own ledger: the first page, a page deep in the list (keyset ``after=``), the
  category + status filter, the exam-expiring filter, a name search and a registration search;
  per page its p95 over HTTP against the p95 of that render's SQL replayed alone, interleaved, as
  above (``registry.pages``), and the worst ratio (``registry.worst_ratio``).

- ``read_log``: the read log's searches (``GET /reads``, issue 34 item 12) over its own ledger
  of ``--taps`` taps (default 1,000,000, written by ``bench/read_log.py``'s filler: 30 days, 40
  gates, 5,000 workers): a week, a month's first page and a page 90% down (keyset), a gate, a
  worker, a card, the refusals, a gate's refusals; measured as the registry's pages
  (``read_log.pages``, ``read_log.worst_ratio``) and the deepest page against the first
  (``read_log.deep_vs_first``). ``--reads-ledger FILE`` reuses the taps of a ledger an earlier
  run kept (``--keep-reads``): a million take ~20 min to write on a loaded machine.

Each page prints a line (its p95, its SQL's p95, the ratio, "met" or "not met" against the issue's
2x, then against "2x SQL + 10 ms"); ``met`` in the JSON: every ratio within 2x (and the live p95
within 2 s when measured), the issue's target, unchanged. A ratio cannot be met once the SQL is
sub-millisecond (a page's fixed cost -- the request, the session, the template -- is a few ms
whatever its SQL), so each page also says whether ``page p95 <= 2x its SQL + 10 ms``
(``SLACK_MS``): ``met_2x`` and ``met_2x_plus_10ms`` per page, ``met_2x_plus_10ms`` in the JSON for
the whole run; both are printed, neither replaces the other.

``--smoke``: 200 workers, 5 ships, 2,000 events, a 2,000-worker registry, 20,000 taps, few
samples; ``--registry-only``: the registry list alone; ``--lists-only``: the registry list and the
read log (not the live page). Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import random
import re
import shutil
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import quote_plus

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx  # noqa: E402
from sqlalchemy import event as sa_event, select  # noqa: E402

from central.calls.schema import ship_calls  # noqa: E402
from central.config import WebSettings  # noqa: E402
from central.db import make_engine  # noqa: E402
from central.ingest.event_store import Accepted, write_batch  # noqa: E402
from central.ledger.migrate import upgrade_engine  # noqa: E402
from central.ledger.schema import events, gate_status  # noqa: E402
from central.registry.schema import workers  # noqa: E402
from central.rotation.schema import escala  # noqa: E402
from wire.events import Dispatch, Event, TapPayload, encode, new_event_id, sign  # noqa: E402

TZ = "America/Sao_Paulo"
PERIODS = ((1, "01-07"), (7, "07-13"), (13, "13-19"), (19, "19-01"))
POSTS = 10
PASSWORD = "bench password"


def p95(values: list[float]) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(0.95 * (len(values) - 1))))]


def fill(engine, n_workers: int, n_ships: int, n_events: int, now: dt.datetime, rng: random.Random) -> list[str]:
    """The day in the ledger; returns the registrations free to be admitted during the live test."""
    from zoneinfo import ZoneInfo

    from central.web.users import add_user
    from sqlalchemy.orm import Session

    tz = ZoneInfo(TZ)
    day = now.astimezone(tz).date()
    regs = [f"W{i:05d}" for i in range(1, n_workers + 1)]
    with engine.begin() as conn:
        conn.execute(workers.insert(), [dict(registration=r, name=f"Trabalhador {i}", category="vigia", status="active",
                                             rotation_number=i, updated_at=now) for i, r in enumerate(regs, 1)])
        rows, calls, statuses = [], [], []
        it = itertools.cycle(regs)
        for s in range(n_ships):
            ship, gate = f"9{s:06d}", f"g{s:03d}"
            calls.append(dict(ship=ship, ship_name=f"Navio {s}", voyage="long_haul" if s % 3 else "cabotage",
                              berth="berthed" if s % 2 else "anchored", gate_id=gate,
                              arrival=now - dt.timedelta(days=1), departure=None, updated_at=now, actor="bench"))
            statuses.append(dict(port="santos", gate_id=gate, state="online", reason="progress", boot_id="b",
                                 since=now, at=now,
                                 sent_seq=1, outbox_depth=0, oldest_unsent_at=None, clock_trusted=True,
                                 copies_updated_at=now, received_at=now))
            for hour, label in PERIODS:
                start = dt.datetime.combine(day, dt.time(hour), tz).astimezone(dt.UTC)
                for p in range(POSTS):
                    rows.append(dict(date=day, period=label, ship=ship, ship_name=f"Navio {s}", voyage="long_haul",
                                     berth="berthed", gate_id=gate, post="portalo" if p == 0 else f"p{p}",
                                     function="vigia", registration=next(it), operator="op", start_at=start,
                                     end_at=start + dt.timedelta(hours=6), status="active", created_at=now))
        conn.execute(ship_calls.insert(), calls)
        conn.execute(escala.insert(), rows)
        conn.execute(gate_status.insert(), statuses)
        start = dt.datetime.combine(day, dt.time(0), tz).astimezone(dt.UTC)
        span = max(1.0, (now - start).total_seconds() - 120)
        batch, seqs = [], {}
        busy = regs[: n_workers // 2]
        for i in range(n_events):
            s = rng.randrange(n_ships)
            gate = f"g{s:03d}"
            seq = seqs[gate] = seqs.get(gate, 0) + 1
            reg = busy[rng.randrange(len(busy))]
            decision = rng.choice(("admit", "exit", "exit", "deny"))
            flags = ["BORROWED_CARD"] if decision == "deny" and rng.random() < 0.1 else []
            payload = {"type": "tap", "uid": "AA" + reg[1:], "reader_id": "r", "reader_kind": "control",
                       "decision": decision, "rules_failed": [], "flags": flags, "message": "",
                       "registration": reg, "dispatch": {"date": day.isoformat(), "period": "07-13",
                                                          "ship": f"9{s:06d}", "berth": "berthed",
                                                          "voyage": "long_haul", "post": "p1", "function": "vigia"}}
            at = start + dt.timedelta(seconds=span * i / n_events)
            batch.append(dict(event_id=new_event_id(), port="santos", gate_id=gate, boot_id="b", seq=seq,
                              occurred_at=at, clock_trusted=True, mono_ns=i, type="tap", registration=reg,
                              decision=decision, payload=payload, mac="0" * 64, raw=b"{}", received_at=at))
            if len(batch) == 5000:
                conn.execute(events.insert(), batch)
                batch = []
        if batch:
            conn.execute(events.insert(), batch)
    with Session(engine) as s, s.begin():
        add_user(s, "bench", role="auditor", password=PASSWORD, actor="bench")
    return regs[n_workers // 2:]


def serve(engine, now_fn):
    import uvicorn

    from central.web.app import create_app
    from app.demo.mosquitto import free_port

    app = create_app(engine, WebSettings(tz=TZ, poll_s=0.2), b"b" * 32, now=now_fn, background=False)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                           timeout_graceful_shutdown=1))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    return server, thread, f"http://127.0.0.1:{port}"


def login(client: httpx.Client) -> None:
    token = re.search(r'name="csrf_token" value="([^"]+)"', client.get("/login").text).group(1)
    r = client.post("/login", data={"login": "bench", "password": PASSWORD, "csrf_token": token, "next": "/"})
    assert r.status_code == 303, r.status_code


def capture_sql(engine, client: httpx.Client, path: str = "/live/panel") -> list[tuple[str, tuple]]:
    """The statements one render of ``path`` executes (SELECTs only)."""
    seen: list[tuple[str, tuple]] = []

    def hook(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith("SELECT"):
            seen.append((statement, tuple(parameters) if parameters else ()))

    sa_event.listen(engine, "before_cursor_execute", hook)
    try:
        client.get(path)
    finally:
        sa_event.remove(engine, "before_cursor_execute", hook)
    return seen


def measure_pages(engine, path: Path, pages: dict[str, str], samples: int, marker: str,
                  timeout: float = 60) -> dict:
    """Each of ``pages`` (``{name: path}``) over HTTP (uvicorn on loopback, logged in as ``bench``)
    against its SQL alone: the SELECTs one render executes (``capture_sql``) replayed on a raw
    sqlite3 connection to the ledger file ``path``, each SQL sample right after a page sample (same
    load). Prints a line per page; ``{name: {page_p95_ms, sql_p95_ms, ratio, statements}}``.
    ``marker``: text every page must contain (it shows rows)."""
    server, thread, url = serve(engine, lambda: dt.datetime.now(dt.UTC))
    out: dict = {}
    try:
        with httpx.Client(base_url=url, follow_redirects=False, timeout=timeout) as client:
            login(client)
            raw = sqlite3.connect(path)
            for name, page_path in pages.items():
                r = client.get(page_path)  # warm
                assert r.status_code == 200 and marker in r.text, (page_path, r.status_code)
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
                ratio = round(page / sql, 2) if sql else None
                out[name] = {"page_p95_ms": round(page, 2), "sql_p95_ms": round(sql, 2),
                             "ratio": ratio, "statements": len(statements), "met_2x": met_word(ratio) == "met",
                             "met_2x_plus_10ms": within_slack(page, sql)}
                print(page_line(name, page, sql, ratio), flush=True)
            raw.close()
    finally:
        server.should_exit = True
        thread.join(10)
    return out


def met_word(ratio: float | None, target: float = 2.0) -> str:
    """``met`` when ``ratio`` is at most ``target`` (page p95 <= 2x its SQL alone), else ``not met``."""
    return "met" if ratio is not None and ratio <= target else "not met"


#: the fixed cost a page may add to twice its SQL in the second target, ms
SLACK_MS = 10.0


def within_slack(page_ms: float, sql_ms: float, slack_ms: float = SLACK_MS) -> bool:
    """True when ``page_ms`` (a page's p95) is at most twice ``sql_ms`` (its SQL's p95) plus
    ``slack_ms``: the issue's 2x with room for the page's fixed cost once the SQL is sub-millisecond."""
    return page_ms <= 2 * sql_ms + slack_ms


#: Said after every verdict: ``_cli.smoke_caveat`` of this run (set by ``main`` for ``--smoke``).
CAVEAT = {"text": ""}


def page_line(name: str, page: float, sql: float, ratio: float | None) -> str:
    """The printed line of a page: its p95, its SQL's p95, the ratio and both targets, each "met"
    or "not met" (the issue's 2x first), then ``CAVEAT`` (smoke sizes)."""
    return (f"{name:20s} page p95 {page:8.2f} ms   its SQL alone p95 {sql:8.2f} ms   ratio "
            f"{ratio if ratio is not None else float('nan'):6.2f}   p95 <= 2x SQL: {met_word(ratio)}   "
            f"p95 <= 2x SQL + {SLACK_MS:g} ms: {'met' if within_slack(page, sql) else 'not met'}{CAVEAT['text']}")


FIRST_NAMES = ("Ana", "Bruno", "Carla", "Diego", "Elisa", "Fábio", "Gustavo", "Helena", "Igor", "Joana", "Lucas",
               "Marta", "Nelson", "Otávio", "Paula", "Rafael", "Sônia", "Tiago", "Vera", "Wagner")
LAST_NAMES = ("Silva", "Santos", "Oliveira", "Souza", "Pereira", "Lima", "Costa", "Ferreira", "Rodrigues",
              "Almeida", "Nascimento", "Carvalho", "Gomes", "Ribeiro", "Martins", "Araújo", "Barbosa", "Rocha", "Dias", "Teixeira")


def fill_registry(engine, n: int, now: dt.datetime, rng: random.Random) -> list[str]:
    """``n`` workers (three categories, a tenth suspended, exams spread over three years) with a
    control card each; returns the registrations in the list's order (name, registration)."""
    from sqlalchemy.orm import Session

    from central.registry.schema import cards
    from central.web.users import add_user

    rows, card_rows = [], []
    for i in range(1, n + 1):
        reg = f"W{i:06d}"
        name = f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)} {rng.choice(LAST_NAMES)} {i}"
        rows.append(dict(registration=reg, name=name, category=("vigia", "estivador", "capatazia")[i % 3],
                         status="suspended" if i % 10 == 0 else "active",
                         health_exam_date=dt.date(2024, 1, 1) + dt.timedelta(days=rng.randrange(1100)),
                         rotation_number=i, updated_at=now))
        card_rows.append(dict(uid=f"{0x10000000 + i:08X}", kind="control", registration=reg, status="active",
                              updated_at=now))
    with engine.begin() as conn:
        for k in range(0, n, 5000):
            conn.execute(workers.insert(), rows[k:k + 5000])
            conn.execute(cards.insert(), card_rows[k:k + 5000])
    with Session(engine) as s, s.begin():
        add_user(s, "bench", role="auditor", password=PASSWORD, actor="bench")
    return [r["registration"] for r in sorted(rows, key=lambda r: (r["name"], r["registration"]))]


def registry_bench(n_workers: int, samples: int, rng: random.Random) -> dict:
    """The worker list's pages over ``n_workers``: ``{workers, pages: {name: {page_p95_ms,
    sql_p95_ms, ratio, statements}}, worst_ratio}`` (same-run baselines, interleaved samples)."""
    tmp = Path(tempfile.mkdtemp(prefix="bench-office-registry-"))
    path = tmp / "ledger.db"
    engine = make_engine(f"sqlite:///{path}")
    upgrade_engine(engine)
    now = dt.datetime.now(dt.UTC)
    order = fill_registry(engine, n_workers, now, rng)
    deep = order[int(len(order) * 0.9)]
    with engine.connect() as conn:  # a name's three words without its number: a handful of workers
        rare = " ".join(conn.execute(select(workers.c.name).where(
            workers.c.registration == f"W{n_workers // 3:06d}")).scalar().split()[:3])
    searches = {"name_search": "/workers?q=silva", "name_search_rare": f"/workers?q={quote_plus(rare.lower())}",
                "registration_search": f"/workers?q=W{n_workers // 2:06d}"}
    pages = {"first": "/workers", "deep": f"/workers?after={deep}",
             "category_status": "/workers?category=estivador&status=active",
             "exam_expiring_30d": "/workers?expiring=30", **searches}
    try:
        out = measure_pages(engine, path, pages, samples, "data-registration")
        before = without_name_index(engine, path, searches, samples)
    finally:
        engine.dispose()
    return {"workers": n_workers, "pages": out, "searches_without_index": before,
            "worst_ratio": max((v["ratio"] or 0) for v in out.values()),
            "met_2x_plus_10ms": all(v["met_2x_plus_10ms"] for v in out.values()),
            "target": "page p95 <= 2x its SQL alone (issue 34); also reported: <= 2x SQL + 10 ms"}


def without_name_index(engine, path: Path, searches: dict[str, str], samples: int) -> dict:
    """The text searches again, same run and ledger, after the substring index is dropped
    (``central.registry.name_search.drop``): the search's SQL as it was before the index (migration
    0027), the baseline of its figures. ``{name: {page_p95_ms, sql_p95_ms, ...}}``."""
    from central.registry import name_search

    with engine.begin() as conn:
        name_search.drop(conn)
    name_search._KNOWN.clear()
    print("-- the same searches without the substring index (the search before migration 0027):", flush=True)
    return measure_pages(engine, path, {f"{k}_before": v for k, v in searches.items()}, samples, "data-registration")


def read_log_bench(taps: int, samples: int, ledger: Path | None = None, keep: bool = False) -> dict:
    """The read log's searches (``GET /reads``, issue 34 item 12) over its own ledger of ``taps``
    taps, written by ``bench/read_log.py``'s filler (or the taps of ``ledger``, a file an earlier
    run kept): ``{taps, pages: {name: {page_p95_ms, sql_p95_ms, ratio, statements}}, worst_ratio,
    deep_vs_first}`` (same-run baselines, interleaved samples, as the registry's)."""
    import read_log  # lazy: read_log imports this module's helpers

    made = None if ledger else Path(tempfile.mkdtemp(prefix="bench-office-reads-"))
    path = ledger or made / "ledger.db"
    engine, taps, now, fill_s = read_log.open_ledger(path, taps, random.Random(34))
    try:
        out = measure_pages(engine, path, read_log.searches(engine, taps, now), samples, "data-decision", timeout=120)
    finally:
        engine.dispose()
        if made is not None and not keep:
            shutil.rmtree(made, ignore_errors=True)  # a million taps are 700 MB
        elif made is not None:
            print(f"read-log ledger kept: {path} (reuse it with --reads-ledger)", flush=True)
    return {"taps": taps, "fill_s": round(fill_s, 1), "pages": out,
            "worst_ratio": max((v["ratio"] or 0) for v in out.values()),
            "deep_vs_first": round(out["month_deep"]["page_p95_ms"] / out["month_first"]["page_p95_ms"], 2),
            "met_2x_plus_10ms": all(v["met_2x_plus_10ms"] for v in out.values()),
            "target": "page p95 <= 2x its SQL alone; deepest page <= 2x the first (issue 34); "
                      "also reported: <= 2x SQL + 10 ms"}


def lists_met(registry: dict, reads: dict | None) -> bool:
    """Issue 34's lists: every registry page and every read-log search at most 2x its SQL alone,
    and the read log's deepest page at most 2x its first."""
    ok = registry["worst_ratio"] <= 2
    if reads is not None:
        ok = ok and reads["worst_ratio"] <= 2 and reads["deep_vs_first"] <= 2
    return ok


def lists_met_slack(registry: dict, reads: dict | None) -> bool:
    """As ``lists_met`` with "page p95 <= 2x its SQL + 10 ms" in place of the 2x ratio."""
    ok = registry["met_2x_plus_10ms"]
    if reads is not None:
        ok = ok and reads["met_2x_plus_10ms"] and reads["deep_vs_first"] <= 2
    return ok


def main(argv=None) -> int:
    from _cli import count, exit_on_signals, smoke_caveat  # bench/_cli.py (bench/ is sys.path[0])

    exit_on_signals()  # SIGTERM/SIGINT: the clean-up below runs (components stopped, temp dirs removed)
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--registry-only", action="store_true", help="only the worker list over the large registry")
    ap.add_argument("--lists-only", action="store_true",
                    help="only the worker list and the read log (issue 34), not the live page")
    ap.add_argument("--taps", type=count, default=1_000_000, help="taps in the read log's own ledger")
    ap.add_argument("--reads-ledger", type=Path,
                    help="a read-log ledger an earlier run kept (its taps are reused: a million take ~20 min)")
    ap.add_argument("--keep-reads", action="store_true", help="keep the read-log ledger written (--reads-ledger)")
    args = ap.parse_args(argv)
    CAVEAT["text"] = smoke_caveat(args.smoke)
    rng = random.Random(17)
    reg_workers, reg_samples = (2_000, 10) if args.smoke else (50_000, 60)
    taps, read_samples = (20_000, 5) if args.smoke else (args.taps, 30)
    if args.registry_only or args.lists_only:
        registry = registry_bench(reg_workers, reg_samples, rng)
        reads = None if args.registry_only else read_log_bench(taps, read_samples, args.reads_ledger,
                                                                 args.keep_reads)
        out = {"bench": "office_web", "registry": registry, "met": lists_met(registry, reads),
               "met_2x_plus_10ms": lists_met_slack(registry, reads)}
        if reads is not None:
            out["read_log"] = reads
        print(json.dumps(out))
        return 0
    n_workers, n_ships, n_events, samples, live_samples = (
        (200, 5, 2_000, 15, 3) if args.smoke else (5_000, 60, 100_000, 60, 20))
    tmp = Path(tempfile.mkdtemp(prefix="bench-office-web-"))
    path = tmp / "ledger.db"
    engine = make_engine(f"sqlite:///{path}")
    upgrade_engine(engine)
    now = dt.datetime.now(dt.UTC)
    t0 = time.monotonic()
    free = fill(engine, n_workers, n_ships, n_events, now, rng)
    fill_s = time.monotonic() - t0
    server, thread, url = serve(engine, lambda: dt.datetime.now(dt.UTC))
    try:
        with httpx.Client(base_url=url, follow_redirects=False, timeout=60) as client:
            login(client)
            client.get("/live/panel")  # warm
            statements = capture_sql(engine, client)
            raw = sqlite3.connect(path)
            page_ms, sql_ms = [], []
            for _ in range(samples):  # interleaved, so both see the same load on a shared machine
                t = time.perf_counter()
                r = client.get("/live/panel")
                page_ms.append((time.perf_counter() - t) * 1000)
                assert r.status_code == 200
                t = time.perf_counter()
                for statement, params in statements:
                    raw.execute(statement, params).fetchall()
                sql_ms.append((time.perf_counter() - t) * 1000)
            raw.close()
        live_ms = live_latency(engine, url, free, live_samples, now)
    finally:
        server.should_exit = True
        thread.join(10)
        engine.dispose()
    page, sql = p95(page_ms), p95(sql_ms)
    live = p95(live_ms) if live_ms else None
    registry = registry_bench(reg_workers, reg_samples, rng)
    reads = read_log_bench(taps, read_samples, args.reads_ledger, args.keep_reads)
    ratio = round(page / sql, 3) if sql else None
    print(page_line("live_panel", page, sql, ratio), flush=True)
    print(json.dumps({
        "bench": "office_web",
        "figures": {"page_p95_ms": round(page, 2), "page_p50_ms": round(statistics.median(page_ms), 2),
                    "sql_p50_ms": round(statistics.median(sql_ms), 2), "live_p95_ms": None if live is None else round(live, 1),
                    "live_max_ms": round(max(live_ms), 1) if live_ms else None,
                    "statements_per_page": len(statements), "workers": n_workers, "ships": n_ships,
                    "events": n_events, "fill_s": round(fill_s, 1)},
        "baseline": {"sql_p95_ms": round(sql, 2)},
        "ratio": ratio,
        "target": "page p95 <= 2x its SQL alone; event -> browser p95 <= 2000 ms",
        "registry": registry,
        "read_log": reads,
        "met": bool(ratio is not None and ratio <= 2 and live is not None and live <= 2000
                    and lists_met(registry, reads)),
        "met_2x_plus_10ms": bool(within_slack(page, sql) and live is not None and live <= 2000
                                 and lists_met_slack(registry, reads)),
    }))
    return 0


def live_latency(engine, url: str, free: list[str], n: int, now: dt.datetime) -> list[float]:
    from testkit.browser import launch_chromium

    out = []
    with launch_chromium() as browser:
        page = browser.new_page()
        page.set_default_timeout(30_000)
        page.goto(url + "/login")
        page.fill("#login", "bench")
        page.fill("#password", PASSWORD)
        page.click("form[action='/login'] button[type=submit]")
        page.wait_for_url(url + "/")
        time.sleep(1.0)  # the SSE stream is open
        for i in range(n):
            reg = free[i]
            at = dt.datetime.now(dt.UTC)
            payload = TapPayload(uid="AA" + reg[1:], reader_id="r", reader_kind="control", decision="admit",
                                 registration=reg, dispatch=Dispatch(date=at.date(), period="07-13", ship="9000000",
                                                                     berth="berthed", voyage="long_haul", post="p1",
                                                                     function="vigia"))
            ev = sign(Event(event_id=new_event_id(), port="santos", gate_id="g000", boot_id="live", seq=10**9 + i,
                            occurred_at=at, clock_trusted=True, mono_ns=i, payload=payload), b"k")
            locator = page.locator(f'.person[data-registration="{reg}"]')
            with engine.begin() as conn:
                write_batch(conn, [Accepted("portgate/v1/santos/gate/g000/events", ev, encode(ev))], [], at)
            t = time.perf_counter()
            locator.wait_for()
            out.append((time.perf_counter() - t) * 1000)
            time.sleep(0.3)
    return out


if __name__ == "__main__":
    sys.exit(main())
