"""The production-pay benchmark runs in smoke mode and ends with its JSON line."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_bench_smoke_prints_its_json_line():
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "production_pay.py"), "--smoke"],
                         check=True, capture_output=True, text=True, cwd=ROOT).stdout
    last = json.loads(out.strip().splitlines()[-1])
    assert last["bench"] == "production_pay"
    assert last["figures"]["gangs"] == 50 and last["baseline"]["read_s"] > 0
    assert last["ratio"] > 0
