"""The pay benchmark runs at smoke size and ends with its JSON summary line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def test_pay_month_smoke_prints_the_json_summary():
    done = subprocess.run([sys.executable, str(ROOT / "bench/pay_month.py"), "--smoke"],
                          capture_output=True, text=True, check=False, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["bench"] == "pay_month"
    assert summary["figures"]["shifts"] == 50 * 25
    assert summary["baseline"]["sqlite_read_s"] > 0 and summary["target"] == 2.0
    assert summary["ratio"] > 0


def test_month_close_smoke_prints_the_json_summary():
    done = subprocess.run([sys.executable, str(ROOT / "bench/month_close.py"), "--smoke"],
                          capture_output=True, text=True, check=False, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["bench"] == "month_close"
    assert summary["target"] == {"re_close_to_read": 5.0, "first_close_to_floor": 2.0}
    assert summary["figures"]["shifts"] == 50 * 25 and summary["baseline"]["sqlite_read_s"] > 0
    assert summary["ratio"]["sqlite"] > 0
    # the first close against its own write floor, the same rows by executemany (issue 32)
    first, floor = summary["figures"]["sqlite_first_close_s"], summary["floor"]["sqlite"]["executemany"]
    assert summary["ratio"]["sqlite_first_to_floor"] == pytest.approx(first / floor, rel=0.05, abs=0.02)
    assert summary["met"] == (summary["ratio"]["sqlite"] <= 5.0 and summary["ratio"]["sqlite_first_to_floor"] <= 2.0)
