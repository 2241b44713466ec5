"""The crew hours benchmark runs in --smoke mode and ends with its JSON line."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[3]


def test_crew_hours_bench_smoke_prints_its_json_line():
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "crew_hours.py"), "--smoke"],
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
    ).stdout
    last = json.loads(out.strip().splitlines()[-1])
    assert last["bench"] == "crew_hours"
    assert last["figures"]["rows"] > 0 and last["baseline"]["csv_read_s"] > 0
    assert last["ratio"] > 0 and last["target"] == 20.0
