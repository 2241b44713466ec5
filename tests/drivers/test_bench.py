"""The readers benchmark runs (smoke sizes) and ends with its JSON line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.pcsc
def test_readers_bench_smoke_prints_json_line(pcscd_session):
    # runs in its own process with its own private pcscd; ours is stopped meanwhile (one at a time)
    pcscd_session.stop()
    try:
        out = subprocess.run(
            [sys.executable, str(ROOT / "bench" / "readers.py"), "--smoke"],
            capture_output=True, text=True, timeout=180, check=True,
        ).stdout
    finally:
        pcscd_session.start()
    result = json.loads(out.strip().splitlines()[-1])
    assert result["bench"] == "readers"
    assert result["figures"]["parser_frames_per_s"] > 0
    assert result["baseline"]["bare_pcsc_cycle_ms"] > 0 and result["ratio"] > 0
    # confirm-by-repeat waits for the held card's first repeat (~65 ms); the bare read does not
    figures, baseline = result["figures"], result["baseline"]
    assert figures["confirm_latency_p50_ms"] >= 60 > baseline["held_bare_read_p50_ms"]
    assert "confirm-by-repeat" in out and "baseline bare read, confirmation off" in out
