"""Fair timings on a shared, noisy machine (issue 32): wall time next to CPU time (this process's
and a PostgreSQL cluster's), the load average at each figure, medians of per-round ratios.

A figure and its floor timed minutes apart see different loads (one run of the month close gave
3.54x with the load falling between the close and its floor, another 2.03x at a steady load), so
the benchmarks that use this module time them in interleaved rounds on fresh databases and report
the median of the per-round ratios with each round's ratio, CPU times and load.
"""

from __future__ import annotations

import dataclasses
import os
import resource
import statistics
import time
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK")


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (index 0 = state), or None when
    the process is gone or unreadable."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()


def cluster_cpu(datadir: str | Path) -> float:
    """Seconds of CPU (user + system) used so far by the PostgreSQL cluster of ``datadir``: its
    postmaster, the children it has reaped (the ended backends: ``cutime``/``cstime``) and its live
    children (backends, checkpointer, WAL writer, autovacuum). 0.0 when the cluster's
    ``postmaster.pid`` or ``/proc`` cannot be read (not Linux, another user's processes hidden):
    the caller prints CPU figures as the process's only then."""
    try:
        pid = int(Path(datadir, "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0.0
    own = _stat_fields(pid)
    if own is None:
        return 0.0
    ticks = sum(int(x) for x in own[11:15])  # utime, stime, cutime, cstime
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and entry.name != str(pid):
            f = _stat_fields(int(entry.name))
            if f is not None and f[1] == str(pid):  # ppid
                ticks += int(f[11]) + int(f[12])
    return ticks / _TICK


@dataclasses.dataclass(frozen=True, slots=True)
class Timed:
    """One timed piece of work: ``wall`` and ``cpu`` (this process and its reaped children) and
    ``server`` (the database cluster's CPU, 0 for SQLite) in seconds; ``load``: the 1-minute load
    average at its end."""

    wall: float
    cpu: float
    server: float
    load: float

    @property
    def all_cpu(self) -> float:
        """This process's CPU plus the server's."""
        return self.cpu + self.server


class Stopwatch:
    """``with Stopwatch(datadir) as sw: ...`` then ``sw.timed``: wall, process and server CPU."""

    def __init__(self, datadir: str | Path | None = None) -> None:
        self.datadir = datadir
        self.timed: Timed | None = None

    def _server(self) -> float:
        return cluster_cpu(self.datadir) if self.datadir else 0.0

    def __enter__(self) -> Stopwatch:
        self._s0 = self._server()
        self._c0 = _own_cpu()
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        wall = time.perf_counter() - self._t0
        cpu = _own_cpu() - self._c0
        self.timed = Timed(wall, cpu, self._server() - self._s0, os.getloadavg()[0])


def _own_cpu() -> float:
    """Seconds of CPU of this process and of its children it has reaped (the month close's input
    digests run in a forked child on PostgreSQL: ``central.ledger.forked``)."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


def ratios(figures: list[Timed], floors: list[Timed]) -> dict:
    """Per-round and median ratios of ``figures`` over ``floors`` (same rounds): wall, and CPU
    (process + server) when the server's CPU or the process's is known."""
    wall = [f.wall / b.wall for f, b in zip(figures, floors)]
    cpu = [f.all_cpu / b.all_cpu for f, b in zip(figures, floors) if b.all_cpu > 0]
    return {"wall": wall, "median": statistics.median(wall),
            "cpu": cpu, "cpu_median": statistics.median(cpu) if cpu else None}


def describe(t: Timed) -> str:
    """``12.345 s wall, CPU 3.210 s + server 1.234 s, load 3.4``."""
    server = f" + server {t.server:.3f} s" if t.server else ""
    return f"{t.wall:.3f} s wall, CPU {t.cpu:.3f} s{server}, load {t.load:.1f}"
