"""The pay benchmark runs at smoke size and ends with its JSON summary line."""

from __future__ import annotations

import json
import statistics
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
    # the first close against its own write floor, the same rows by executemany, in interleaved
    # rounds on fresh databases: the median of the rounds' ratios, each round printed with its
    # CPU times and load (issue 32)
    rounds = summary["rounds"]["sqlite"]
    assert len(rounds["first"]) == len(rounds["first_to_floor"]) == 2
    for r, ratio in zip(rounds["first"], rounds["first_to_floor"]):
        assert r["close_s"] > 0 and r["floor_s"] > 0 and r["close_cpu_s"] > 0 and r["load"] >= 0
        assert ratio == pytest.approx(r["close_s"] / r["floor_s"], rel=0.05, abs=0.02)
    assert summary["ratio"]["sqlite_first_to_floor"] == pytest.approx(
        statistics.median(rounds["first_to_floor"]), abs=0.02)
    assert summary["floor"]["sqlite"]["executemany"] == summary["baseline"]["sqlite_floor_s"] > 0
    assert summary["met"] == (summary["ratio"]["sqlite"] <= 5.0 and summary["ratio"]["sqlite_first_to_floor"] <= 2.0)
    assert "round 1/2: first close " in done.stdout and ", load " in done.stdout


def test_month_close_says_met_or_not_met_next_to_each_same_run_floor():
    """The closing lines of ``bench/month_close.py``: each figure, its floor or baseline measured in
    the same run, the ratio, the target and "met"/"not met" (issue 32: first close <= 2x its write
    floor, re-close <= 5x reading its events)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("month_close", ROOT / "bench/month_close.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    m = {"first_close_s": 3.0, "floor_s": 2.0, "fastest": "copy", "first_to_floor": 1.5,
         "close_s": 0.6, "reclose_read_s": 0.1, "ratio": 6.0, "skipped": [(), ()],
         "first_to_floor_rounds": [1.4, 1.5, 1.7]}
    first, again = bench.verdicts("postgresql", m)
    assert first == ("[postgresql] first close 3.000 s / its write floor 2.000 s (copy of the same rows, "
                     "one transaction; medians of 3 interleaved rounds) = 1.50x median of the rounds' "
                     "ratios (target <= 2x): met")
    assert again == ("[postgresql] re-close unchanged 0.600 s (median of 2) / reading its events 0.100 s "
                     "(same rounds) = 6.00x (target <= 5x): not met")
    first, again = bench.verdicts("sqlite", {**m, "fastest": "executemany", "first_to_floor": 2.01,
                                             "ratio": 5.0})
    assert first.endswith("2.01x median of the rounds' ratios (target <= 2x): not met") and "executemany" in first
    assert again.endswith("5.00x (target <= 5x): met")


def test_interleave_ratios_and_cluster_cpu(tmp_path):
    """``bench/_interleave.py``: the per-round and median ratios, wall and CPU (process + server);
    a cluster's CPU read from /proc through its ``postmaster.pid`` (0.0 when there is none)."""
    import importlib.util
    import os

    sys.path.insert(0, str(ROOT / "bench"))
    spec = importlib.util.spec_from_file_location("_interleave", ROOT / "bench/_interleave.py")
    inter = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(inter)
    T = inter.Timed
    r = inter.ratios([T(4.0, 1.0, 1.0, 3.0), T(9.0, 2.0, 2.0, 3.0), T(3.0, 1.0, 0.0, 3.0)],
                     [T(2.0, 0.5, 0.5, 3.0), T(3.0, 1.0, 1.0, 3.0), T(1.0, 0.5, 0.0, 3.0)])
    assert r["wall"] == [2.0, 3.0, 3.0] and r["median"] == 3.0
    assert r["cpu"] == [2.0, 2.0, 2.0] and r["cpu_median"] == 2.0
    assert inter.cluster_cpu(tmp_path) == 0.0  # no postmaster.pid
    (tmp_path / "postmaster.pid").write_text(f"{os.getpid()}\n{tmp_path}\n")
    sum(i * i for i in range(200_000))  # some CPU of "the postmaster" (this process)
    assert inter.cluster_cpu(tmp_path) > 0.0
    with inter.Stopwatch(tmp_path) as sw:
        sum(i * i for i in range(100_000))
    assert sw.timed.wall > 0 and sw.timed.cpu >= 0 and sw.timed.server >= 0
    assert "s wall, CPU " in inter.describe(sw.timed) and ", load " in inter.describe(sw.timed)
