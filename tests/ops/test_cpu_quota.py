"""The benchmarks' CPU quota (bench/_cpuquota.py, issue 32 item 4): a quarter of one core on a 10 ms
CFS period (a slower CPU that runs all the time, not full speed for 25 ms then 75 ms stopped), a
longer period where a small fraction's quota would fall under the kernel's 1 ms minimum, and the
kernel really holding the child to its share. Skipped only where no cgroup is writable (not root)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench._cpuquota import CpuQuota


def _made(fraction: float, tag: str) -> CpuQuota:
    quota = CpuQuota.create(fraction, name=f"portgate-test-{tag}-{os.getpid()}")
    if quota is None:
        pytest.skip("no writable cgroup (v2 cpu.max or v1 cpu.cfs_quota_us): not root here")
    return quota


def _written(quota: CpuQuota) -> tuple[int, int]:
    if quota.version == 2:
        q, period = (quota.path / "cpu.max").read_text().split()
        return int(q), int(period)
    return int((quota.path / "cpu.cfs_quota_us").read_text()), int((quota.path / "cpu.cfs_period_us").read_text())


@pytest.mark.parametrize(("fraction", "quota_us", "period_us"), [(0.25, 2_500, 10_000), (0.05, 1_000, 20_000),
                                                                  (2.0, 20_000, 10_000)])
def test_the_quota_is_the_fraction_of_a_short_period(fraction, quota_us, period_us):
    quota = _made(fraction, str(fraction).replace(".", "-"))
    try:
        assert _written(quota) == (quota_us, period_us) and quota.period_us == period_us
        assert f"{fraction:g} of one core, period {period_us // 1000} ms" in quota.describe()
    finally:
        quota.remove()


def test_a_child_in_the_quota_gets_about_its_share_of_one_core():
    """A busy loop of 1.5 s of wall time inside a 0.25 quota uses about 0.375 s of CPU (not 1.5)."""
    quota = _made(0.25, "share")
    try:
        started = time.monotonic()
        child = subprocess.run(
            [sys.executable, "-c",
             "import time,os\nend=time.monotonic()+1.5\nwhile time.monotonic()<end: pass\n"
             "t=os.times(); print(t.user+t.system)"],
            preexec_fn=quota.join, capture_output=True, text=True, check=True)
        wall = time.monotonic() - started
        cpu = float(child.stdout)
        assert cpu < 0.6 * wall, f"{cpu:.2f} s of CPU in {wall:.2f} s inside a quarter core"
        assert quota.throttled_s() > 0
    finally:
        quota.remove()


def test_a_fraction_outside_what_a_cgroup_can_hold_is_refused():
    for bad in (0, -0.5, 65):
        with pytest.raises(ValueError, match="cpu quota"):
            CpuQuota.create(bad)


def test_a_quota_the_kernel_refuses_is_said_and_its_cgroup_removed(monkeypatch):
    """0.0001 of one core needs a 10 s period; the kernel takes 1 ms - 1 s (v1 cfs_period_us; v2 cpu.max
    the same): ``QuotaRefused`` names the file, the value and the kernel's words, and the cgroup made
    for it is gone (it was left in /sys/fs/cgroup/cpu, and the bench said "no writable cgroup").
    ``MIN_FRACTION`` refuses such a quota before the kernel is asked (test_bench_cli.py); lowered
    here so that the real kernel's own refusal, kept for a kernel with other limits, is reached."""
    import bench._cpuquota as cpuquota
    from bench._cpuquota import QuotaRefused

    monkeypatch.setattr(cpuquota, "MIN_FRACTION", 0.0)

    _made(0.25, "probe").remove()  # skips where no cgroup is writable
    name = f"portgate-test-refused-{os.getpid()}"
    with pytest.raises(QuotaRefused, match=r"the kernel refused cpu\.(cfs_period_us|max) = .*10000000"):
        CpuQuota.create(0.0001, name=name)
    assert not any(root.joinpath(name).exists() for root in (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/cpu")))


def test_the_gate_bench_says_what_the_kernel_refused(tmp_path, monkeypatch):
    """``bench/gate_decision.under_quota`` at 0.0001 of one core: "not measured" with the kernel's
    refusal as the reason (not "no writable cgroup"), before any gate starts (``MIN_FRACTION``
    lowered as above: the command line refuses 0.0001 first)."""
    import importlib.util

    _made(0.25, "probe2").remove()  # skips where no cgroup is writable
    spec = importlib.util.spec_from_file_location("gate_decision", Path(__file__).resolve().parents[2]
                                                  / "bench" / "gate_decision.py")
    gate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gate)
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "bench"))
    import _cpuquota  # as the bench imports it: a top-level module of bench/

    monkeypatch.setattr(_cpuquota, "MIN_FRACTION", 0.0)
    got = gate.under_quota(tmp_path, [], 0.0001)
    assert got["measured"] is False and got["why"].startswith("the kernel refused cpu."), got
    assert not Path(f"/sys/fs/cgroup/cpu/portgate-bench-{os.getpid()}").exists()
    assert not Path(f"/sys/fs/cgroup/portgate-bench-{os.getpid()}").exists()
