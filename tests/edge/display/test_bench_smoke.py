"""The screen benchmark runs in --smoke mode (real gate, screen and chromium) and ends with its JSON line."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[3]


def test_gate_display_bench_smoke_prints_its_json_line() -> None:
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "gate_display.py"), "--smoke"],
                         check=True, capture_output=True, text=True, cwd=ROOT).stdout
    last = json.loads(out.strip().splitlines()[-1])
    assert last["bench"] == "gate_display"
    f = last["figures"]
    assert f["taps"] == 40 and 0 < f["p50_ms"] <= f["p99_ms"] and f["photo_p50_ms"] > 0
    assert f["display_rss_mb"] > 0 and f["gate_rss_mb"] > 0
    assert last["baseline"]["commit_p50_ms"] > 0
    assert last["target"] == {"p99_ms": 150, "display_rss_mb": 40, "gate_rss_mb": 60}
