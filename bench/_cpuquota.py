"""A CPU quota for a benchmark's child process: a fraction of one core, through the kernel's CFS
bandwidth control (a Raspberry-class budget on this machine).

``CpuQuota.create(fraction)`` makes a private cgroup with that quota, under cgroup v2 (``cpu.max``,
where ``/sys/fs/cgroup`` is the unified hierarchy with the ``cpu`` controller) or cgroup v1
(``cpu.cfs_quota_us`` under the ``cpu`` hierarchy), whichever this machine has and lets us write;
``None`` when neither is writable (not root, a read-only cgroupfs): the caller says "not measured".
``QuotaRefused`` when a cgroup was made but the kernel refused the quota or period written to it
(v1: a period over 1 s, which a fraction under 0.001 of one core would need): its message names the
file, the value and the kernel's words; the cgroup is removed before it is raised.
``join`` is a ``preexec_fn`` for ``subprocess``: the child enters the cgroup before it execs, so
its interpreter start-up is under the quota too. ``remove`` deletes the cgroup (its processes must
have ended).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
from pathlib import Path

# The CFS period: 10 ms, not the kernel's 100 ms default. The quota models a board several times
# slower than this machine, whose CPU runs all the time at a fraction of the speed; with a 100 ms
# period the process instead runs at full speed for 25 ms and then stands still for 75 ms, so a
# read that meets the end of a period's budget waits up to 75 ms, a stall no Raspberry-class board
# has (the quota's p99 measured that stall: docs/performance.md, "The quota's period"). A 10 ms
# period keeps the same quarter of one core with stalls of 7.5 ms at most. The kernel refuses a
# quota under 1 ms: a small fraction gets a longer period (0.05 of one core: 20 ms).
PERIOD_US = 10_000
MIN_QUOTA_US = 1_000
#: The longest CFS period the kernel takes (1 s): with the 1 ms minimum quota, the smallest fraction
#: of one core a cgroup can express is MIN_QUOTA_US / MAX_PERIOD_US = 0.001 (``bench/_cli.cpu_fraction``
#: refuses less before anything runs: it was "not measured (the kernel refused cpu.cfs_period_us ...)"
#: at the end of the run).
MAX_PERIOD_US = 1_000_000
MIN_FRACTION = MIN_QUOTA_US / MAX_PERIOD_US
V2_ROOT = Path("/sys/fs/cgroup")
V1_CPU = Path("/sys/fs/cgroup/cpu")


class QuotaRefused(Exception):
    """The kernel refused the quota or period written to a cgroup (the message says which)."""


@dataclasses.dataclass(frozen=True)
class CpuQuota:
    path: Path
    version: int  # 1 or 2
    fraction: float  # of one core
    period_us: int = PERIOD_US  # the CFS period the quota is a fraction of

    @classmethod
    def create(cls, fraction: float, name: str | None = None) -> "CpuQuota | None":
        """A new cgroup limited to ``fraction`` (``MIN_FRACTION`` <= fraction <= 64) of one core, or ``None`` when
        this machine offers no writable cgroup with a CPU controller. ``QuotaRefused`` when the
        kernel refused the quota/period (the cgroup removed); ``ValueError`` for a fraction out of range."""
        if not MIN_FRACTION <= fraction <= 64:  # also NaN
            raise ValueError(f"cpu quota {fraction} is not in [{MIN_FRACTION:g}, 64]")
        name = name or f"portgate-bench-{os.getpid()}"
        period = max(PERIOD_US, math.ceil(MIN_QUOTA_US / fraction))
        quota = max(MIN_QUOTA_US, int(period * fraction))
        for make in (cls._v2, cls._v1):
            try:
                made = make(name, quota, period, fraction)
            except QuotaRefused:
                raise
            except OSError:
                continue
            if made is not None:
                return made
        return None

    @staticmethod
    def _write(path: Path, knob: str, value: str) -> None:
        """Write ``value`` to ``path/knob``; on the kernel's refusal remove ``path`` and raise
        ``QuotaRefused`` naming the knob, the value and the kernel's words (EINVAL: out of range)."""
        try:
            (path / knob).write_text(value)
        except OSError as exc:
            with contextlib.suppress(OSError):
                path.rmdir()
            raise QuotaRefused(f"the kernel refused {knob} = {value} in {path}: "
                               f"{os.strerror(exc.errno) if exc.errno else exc}") from exc

    @classmethod
    def _v2(cls, name: str, quota: int, period: int, fraction: float) -> "CpuQuota | None":
        controllers = V2_ROOT / "cgroup.controllers"
        if not controllers.exists() or "cpu" not in controllers.read_text().split():
            return None
        subtree = V2_ROOT / "cgroup.subtree_control"
        if "cpu" not in subtree.read_text().split():
            subtree.write_text("+cpu")
        path = V2_ROOT / name
        path.mkdir(exist_ok=True)
        cls._write(path, "cpu.max", f"{quota} {period}")
        return cls(path, 2, fraction, period)

    @classmethod
    def _v1(cls, name: str, quota: int, period: int, fraction: float) -> "CpuQuota | None":
        if not (V1_CPU / "cpu.cfs_quota_us").exists():
            return None
        path = V1_CPU / name
        path.mkdir(exist_ok=True)
        cls._write(path, "cpu.cfs_period_us", str(period))
        cls._write(path, "cpu.cfs_quota_us", str(quota))
        return cls(path, 1, fraction, period)

    def join(self) -> None:
        """Move the calling process into the cgroup (use as ``subprocess``'s ``preexec_fn``)."""
        (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def throttled_s(self) -> float:
        """Seconds the cgroup's processes waited for the quota so far (``cpu.stat``)."""
        for line in (self.path / "cpu.stat").read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == "throttled_usec":
                return int(value) / 1e6
            if key == "throttled_time":  # v1: nanoseconds
                return int(value) / 1e9
        return 0.0

    def describe(self) -> str:
        knob = "cpu.max" if self.version == 2 else "cpu.cfs_quota_us"
        return f"cgroup v{self.version} {knob}: {self.fraction:g} of one core, period {self.period_us / 1000:g} ms"

    def remove(self) -> None:
        try:
            self.path.rmdir()
        except OSError:
            pass
