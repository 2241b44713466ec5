"""Benchmark: the watchman's screen. Journal commit -> page updated in a real browser, and memory.

A real gate process (``portgate edge run``, FIFO control reader, system clock) decides ``--taps``
reads of distinct workers from a store of ``--workers`` workers, each with a photo file on disk in
its state directory (``edge.sync.photos`` layout). Its screen (``portgate edge display``) follows the
journal read-only; headless chromium (``testkit.browser``) shows the page, where a
MutationObserver stamps the moment each read's panel is swapped in (``performance.timeOrigin +
performance.now()``, wall ms) and the moment its photo has loaded. Latency = that stamp minus the
event's ``occurred_at`` (the gate's wall clock when it decided, just before the commit: so the
figure includes the gate's decide + fsync'd commit, a little more than commit -> page).

Baseline, same run, same directory, interleaved with the taps: one bare SQLite ``synchronous=FULL``
(WAL) commit of a 400-byte row. Memory: peak RSS (``VmHWM``) of the display process (target
<= 40 MB) and of the gate process while the display runs (target <= 60 MB, 50,000 workers with
photos on disk). ``--smoke``: 500 workers, 40 taps. Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GATE, SHIP = "g-bench", "9311111"

OBSERVER = """
window.__seen = {};
const wrap = document.getElementById('now-wrap');
new MutationObserver(() => {
  const now = document.getElementById('now');
  if (!now) return;
  const seq = +now.dataset.seq;
  if (!seq || window.__seen[seq]) return;
  const t = performance.timeOrigin + performance.now();
  window.__seen[seq] = {swap: t, photo: null};
  const img = now.querySelector('img.photo');
  const done = () => { if (window.__seen[seq]) window.__seen[seq].photo = performance.timeOrigin + performance.now(); };
  if (img.complete && img.naturalWidth) done(); else img.addEventListener('load', done, {once: true});
}).observe(wrap, {childList: true, subtree: true});
"""


def build(root: Path, workers: int) -> Path:
    """The gate's state dir: roster of ``workers`` (control + badge cards), photo files and index;
    gate.toml and key. Returns the config path."""
    from edge.store import Store
    from edge.sync.photos import PhotoStore, sha256_hex
    from portgate.config import write_secret
    from portgate.records import Card, CardKind, CardStatus, Worker, WorkerStatus
    from testkit.display import png
    from wire.downlink import PhotoRef

    state = root / "state"
    now = dt.datetime.now(dt.UTC)
    store = Store(state / "store.db", gate_id=GATE, ship=SHIP)
    ws = [Worker(f"W{i:06d}", f"Trabalhador {i}", "vigia", WorkerStatus.ACTIVE,
                 health_exam_date=dt.date(2025, 6, 1), rotation_number=i) for i in range(workers)]
    cs = [Card(f"0A{i:08X}", CardKind.CONTROL, f"W{i:06d}", CardStatus.ACTIVE) for i in range(workers)]
    cs += [Card(f"0B{i:08X}", CardKind.BADGE, f"W{i:06d}", CardStatus.ACTIVE) for i in range(workers)]
    store.replace_roster(1, ws, cs, now)
    store.replace_escala(1, [], now)
    store.close()
    photos = PhotoStore(state)
    refs = []
    for i in range(workers):  # files written directly (no fsync per file): build only
        data = png(i, size=48, pad=2000)
        sha = sha256_hex(data)
        (photos.dir / sha).write_bytes(data)
        refs.append(PhotoRef(registration=f"W{i:06d}", sha256=sha, size=len(data), media_type="image/png"))
    photos.replace_index(1, refs, now)
    photos.close()
    write_secret(root / "gate.key", b"bench-display-key")
    fifo = root / "reads.fifo"
    os.mkfifo(fifo, 0o600)
    cfg = root / "gate.toml"
    cfg.write_text(f'port = "santos"\ngate_id = "{GATE}"\nship = "{SHIP}"\nstate_dir = "state"\n'
                   f'key_file = "gate.key"\nindicator = "none"\nclock_trust = "always"\nlog_json = true\n'
                   f'\n[[readers]]\nid = "r-control"\nkind = "control"\ndriver = "fifo"\n'
                   f'device = "{fifo}"\n')
    return cfg


def vm_hwm_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def pct(values: list[float], p: int) -> float:
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[p - 1]


def wait_for(predicate, timeout: float, what: str):
    """``testkit.wait.wait_until``, ending the benchmark with one line when it times out."""
    from testkit.wait import wait_until

    try:
        return wait_until(predicate, timeout, what=what)
    except AssertionError as exc:
        raise SystemExit(f"gate_display: {exc}") from None


def run(root: Path, workers: int, taps: int, seed: int) -> dict:
    from testkit.browser import launch_chromium
    from wire.events import decode

    t = time.perf_counter()
    cfg = build(root, workers)
    build_s = time.perf_counter() - t
    cmd = [sys.executable, "-m", "app.cli", "edge"]
    gate = subprocess.Popen([*cmd, "run", "--config", str(cfg)], stdout=open(root / "gate.log", "ab"),
                            stderr=subprocess.STDOUT, start_new_session=True)
    url_file = root / "display.url"
    display = subprocess.Popen([*cmd, "display", "--config", str(cfg), "--port", "0", "--url-file", str(url_file)],
                               stdout=open(root / "display.log", "ab"), stderr=subprocess.STDOUT,
                               start_new_session=True)
    journal = root / "state" / "journal.db"
    base = sqlite3.connect(root / "baseline.db", isolation_level=None)
    base.execute("PRAGMA journal_mode=WAL")
    base.execute("PRAGMA synchronous=FULL")
    base.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB)")
    payload = os.urandom(400)
    baseline: list[float] = []
    try:
        wait_for(url_file.exists, 60, "the display's URL")
        url = url_file.read_text().strip()
        wait_for(lambda: journal.exists() and b"gate_started" in (root / "gate.log").read_bytes(), 60, "the gate")
        fifo = os.open(root / "reads.fifo", os.O_WRONLY)
        who = random.Random(seed).sample(range(workers), taps)
        with launch_chromium() as browser:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(url)
            page.wait_for_selector("#now-wrap")
            page.evaluate(OBSERVER)
            for n, i in enumerate(who, 1):
                t0 = time.perf_counter()
                base.execute("INSERT INTO t (body) VALUES (?)", (payload,))
                baseline.append((time.perf_counter() - t0) * 1000)
                os.write(fifo, f"0A{i:08X}\n".encode())
                page.wait_for_function(f"Object.keys(window.__seen).length >= {n}", timeout=30_000)
                time.sleep(0.02)
            page.wait_for_function(f"Object.values(window.__seen).filter(s => s.photo).length >= {taps}",
                                   timeout=30_000)
            seen = page.evaluate("window.__seen")
        display_rss = vm_hwm_mb(display.pid)
        gate_rss = vm_hwm_mb(gate.pid)
        os.close(fifo)
    finally:
        for proc in (display, gate):
            proc.terminate()
        for proc in (display, gate):
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
    with sqlite3.connect(f"{journal.as_uri()}?mode=ro", uri=True) as db:
        occurred = {}
        for seq, body in db.execute("SELECT seq, body FROM journal WHERE kind = 'tap'"):
            occurred[seq] = decode(body).occurred_at.timestamp() * 1000
    swap = [seen[str(s)]["swap"] - at for s, at in occurred.items() if str(s) in seen]
    photo = [seen[str(s)]["photo"] - at for s, at in occurred.items() if str(s) in seen and seen[str(s)]["photo"]]
    return {"swap": swap, "photo": photo, "baseline": baseline, "display_rss_mb": display_rss,
            "gate_rss_mb": gate_rss, "taps": len(occurred), "build_s": build_s}


def main() -> None:
    from _cli import count, description, exit_on_signals  # bench/_cli.py (bench/ is sys.path[0])

    exit_on_signals()  # SIGTERM/SIGINT: the clean-up below runs (components stopped, temp dirs removed)
    ap = argparse.ArgumentParser(description=description(__doc__))
    ap.add_argument("--smoke", action="store_true", help="tiny sizes (seconds)")
    ap.add_argument("--workers", type=count)
    ap.add_argument("--taps", type=count)
    ap.add_argument("--dir", help="where to build (default: a temporary dir under ./bench/results)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    workers = args.workers if args.workers is not None else (500 if args.smoke else 50_000)
    taps = args.taps if args.taps is not None else (40 if args.smoke else 500)
    results = ROOT / "bench" / "results"
    results.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=args.dir or results) as tmp:
        m = run(Path(tmp), workers, taps, args.seed)
    figures = {"p50_ms": round(pct(m["swap"], 50), 2), "p99_ms": round(pct(m["swap"], 99), 2),
               "photo_p50_ms": round(pct(m["photo"], 50), 2), "photo_p99_ms": round(pct(m["photo"], 99), 2),
               "display_rss_mb": round(m["display_rss_mb"], 1), "gate_rss_mb": round(m["gate_rss_mb"], 1),
               "taps": m["taps"], "workers": workers}
    baseline = {"commit_p50_ms": round(pct(m["baseline"], 50), 3), "commit_p99_ms": round(pct(m["baseline"], 99), 3)}
    ratio = {"p99": round(figures["p99_ms"] / baseline["commit_p99_ms"], 2)}
    target = {"p99_ms": 150, "display_rss_mb": 40, "gate_rss_mb": 60}
    print(f"built: {workers} workers with photos on disk in {m['build_s']:.1f} s")
    print(f"gate decided -> page updated (panel swapped): p50 {figures['p50_ms']} ms, p99 {figures['p99_ms']} ms "
          f"over {m['taps']} taps (target p99 <= 150)")
    print(f"gate decided -> photo loaded:                 p50 {figures['photo_p50_ms']} ms, "
          f"p99 {figures['photo_p99_ms']} ms")
    print(f"baseline bare SQLite FULL commit:             p50 {baseline['commit_p50_ms']} ms, "
          f"p99 {baseline['commit_p99_ms']} ms")
    print(f"peak RSS: display {figures['display_rss_mb']} MB (target <= 40), gate with the display running "
          f"{figures['gate_rss_mb']} MB (target <= 60)")
    ok = figures["p99_ms"] <= 150 and figures["display_rss_mb"] <= 40 and figures["gate_rss_mb"] <= 60
    print(json.dumps({"bench": "gate_display", "figures": figures, "baseline": baseline, "ratio": ratio,
                      "target": target, "met": ok}))


if __name__ == "__main__":
    main()
