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


def test_month_close_says_met_or_not_met_next_to_each_same_run_floor():
    """The closing lines of ``bench/month_close.py``: each figure, its floor or baseline measured in
    the same run, the ratio, the target and "met"/"not met" (issue 32: first close <= 2x its write
    floor, re-close <= 5x reading its events)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("month_close", ROOT / "bench/month_close.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    m = {"first_close_s": 3.0, "floor_s": 2.0, "fastest": "copy", "first_to_floor": 1.5,
         "close_s": 0.6, "reclose_read_s": 0.1, "ratio": 6.0, "skipped": [(), (), ()]}
    first, again = bench.verdicts("postgresql", m)
    assert first == ("[postgresql] first close 3.000 s / its write floor 2.000 s (copy of the same rows, "
                     "one transaction, same run) = 1.50x (target <= 2x): met")
    assert again == ("[postgresql] re-close unchanged 0.600 s (median of 2) / reading its events 0.100 s "
                     "(same rounds) = 6.00x (target <= 5x): not met")
    first, again = bench.verdicts("sqlite", {**m, "fastest": "executemany", "first_to_floor": 2.01,
                                             "ratio": 5.0})
    assert first.endswith("2.01x (target <= 2x): not met") and "executemany" in first
    assert again.endswith("5.00x (target <= 5x): met")
