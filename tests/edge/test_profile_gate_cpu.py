"""``bench/profile_gate_cpu.py`` (run by hand, and under callgrind) still runs on the gate's code: a
tiny run prints the CPU per tap of each round, in both modes."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("mode", ["sustained", "single"])
def test_the_gate_cpu_profile_prints_the_cpu_per_tap_of_each_round(mode):
    done = subprocess.run([sys.executable, str(ROOT / "bench/profile_gate_cpu.py"), "--mode", mode,
                           "--workers", "60", "--events", "200", "--taps", "40", "--rounds", "2"],
                          capture_output=True, text=True, check=False, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    found = re.search(rf"^{mode}: 40 taps x 2 rounds, CPU per tap \(us\): (\d+), (\d+)$", done.stdout, re.M)
    assert found, done.stdout
    assert all(int(v) > 0 for v in found.groups())


def test_the_light_mode_prints_the_cpu_from_each_taps_start_to_its_light():
    """``--mode light``: the median CPU from a tap's start to its light, each round (the indicator
    it installs is the one that shows: a round with no light would have no median)."""
    done = subprocess.run([sys.executable, str(ROOT / "bench/profile_gate_cpu.py"), "--mode", "light",
                           "--workers", "60", "--events", "200", "--taps", "40", "--rounds", "2"],
                          capture_output=True, text=True, check=False, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    found = re.search(r"^light: 40 taps x 2 rounds, CPU from a tap's start to its light, median \(us\): "
                      r"(\d+), (\d+)$", done.stdout, re.M)
    assert found, done.stdout
    assert all(int(v) > 0 for v in found.groups())
