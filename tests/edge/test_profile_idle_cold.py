"""``bench/profile_idle_cold.py`` (run by hand) still runs on the gate's code: a tiny run prints the
decision work's median in each of its four modes."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_idle_cold_profile_times_the_decision_in_every_mode():
    done = subprocess.run([sys.executable, str(ROOT / "bench/profile_idle_cold.py"), "--workers", "60",
                           "--reads", "30", "--pause-us", "20"],
                          capture_output=True, text=True, check=False, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    rows = dict(re.findall(r"^\s+(warm|spin|sleep|fsync)\s+median\s+([0-9.]+) us", done.stdout, re.M))
    assert set(rows) == {"warm", "spin", "sleep", "fsync"}, done.stdout
    assert all(float(v) > 0 for v in rows.values())
    assert re.search(r"^\s+warm .* x1\.00 of warm$", done.stdout, re.M), done.stdout
