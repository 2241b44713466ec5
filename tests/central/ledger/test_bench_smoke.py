"""The pay benchmark runs at smoke size and ends with its JSON summary line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_pay_month_smoke_prints_the_json_summary():
    done = subprocess.run([sys.executable, str(ROOT / "bench/pay_month.py"), "--smoke"],
                          capture_output=True, text=True, check=False, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["bench"] == "pay_month"
    assert summary["figures"]["shifts"] == 50 * 25
    assert summary["baseline"]["sqlite_read_s"] > 0 and summary["target"] == 3.0
    assert summary["ratio"] > 0


def test_month_close_smoke_prints_the_json_summary():
    done = subprocess.run([sys.executable, str(ROOT / "bench/month_close.py"), "--smoke"],
                          capture_output=True, text=True, check=False, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["bench"] == "month_close" and summary["target"] == 5.0
    assert summary["figures"]["shifts"] == 50 * 25 and summary["baseline"]["sqlite_read_s"] > 0
    assert summary["ratio"]["sqlite"] > 0
