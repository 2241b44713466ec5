"""bench/chain.py runs at smoke size and ends with its JSON summary (figures, not targets: a shared
test machine's timings prove nothing)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_chain_bench_smoke_prints_its_figures():
    done = subprocess.run([sys.executable, str(ROOT / "bench/chain.py"), "--smoke"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    fig = summary["figures"]
    assert summary["bench"] == "chain" and fig["taps"] == 200 and fig["ingest_events"] == 1000
    assert set(fig["ms"]) == {"bare", "hmac", "signed"} and fig["seal_us"] > 0
    assert fig["ingest_events_per_s"]["verified"] > 0 and fig["ingest_events_per_s"]["unverified"] > 0
