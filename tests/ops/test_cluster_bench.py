"""``bench/cluster.py`` runs at smoke size (2 gates x 100 taps, mosquitto then a 3-node NATS cluster)
and ends with its JSON summary line; every event reached the ledger in both (the bench exits non-zero
otherwise). Its full run (and the ledger failover times) is by hand: docs/performance.md."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.mqtt, pytest.mark.nats]


def test_cluster_bench_smoke_prints_the_json_summary():
    done = subprocess.run([sys.executable, str(ROOT / "bench/cluster.py"), "--smoke"],
                          capture_output=True, text=True, check=False, cwd=ROOT, timeout=240)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["bench"] == "cluster" and summary["target"] == 0.5
    assert summary["figures"]["gates"] == 2 and summary["figures"]["events_per_gate"] == 100
    rate, base = summary["figures"]["cluster_events_per_s"], summary["baseline"]["mosquitto_events_per_s"]
    assert rate > 0 and base > 0
    assert summary["ratio"] == pytest.approx(rate / base, rel=0.01, abs=0.002)
    assert summary["met"] == (summary["ratio"] >= 0.5)
    # the batch size both offices ran with, and the JetStream ingest thread's CPU during the drain (/proc)
    assert summary["figures"]["batch_size"] == 200 and summary["figures"]["ingest_thread_cpu_s"] >= 0.0
