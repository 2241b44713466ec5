"""The escala benchmark runs in smoke mode and prints its JSON line last."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_escala_bench_smoke_prints_its_json_line():
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "escala.py"), "--smoke"],
                         capture_output=True, text=True, check=True, cwd=ROOT).stdout
    last = json.loads(out.strip().splitlines()[-1])
    assert last["bench"] == "escala"
    assert last["figures"]["requisitions"] == 20 and last["figures"]["workers"] == 200
    assert last["figures"]["dispatched"] > 0 and last["baseline"]["load_s"] > 0
