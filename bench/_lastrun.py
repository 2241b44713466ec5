"""The last run of a benchmark on this machine: a small JSON record kept outside the repository, for
the targets stated as "unchanged or better than the last run on the same machine" (DESIGN.md,
"Performance targets": the gate decision at full speed).

Where: ``$XDG_STATE_HOME/portgate/bench/last_runs.json`` (``~/.local/state/portgate/bench/
last_runs.json`` when ``XDG_STATE_HOME`` is unset): one file per user on a machine, shared by every
clone and worktree of that user, never committed (a fresh machine starts with "no previous run").
Shape: ``{machine: {"<bench> <sizes>": {"at", "commit", "ratio"}}}`` where ``machine`` is
``machine_key()`` (hostname and CPU model: another machine's figures never judge this one's) and
``sizes`` names the run's sizes and the options that change what its ratios mean
(``reference_key``: a smoke run is compared with smoke runs only, a ``--seed 2`` run or one built on
another filesystem with its like). ``at`` is an aware
UTC ISO 8601 time, ``commit`` the tree's ``git rev-parse --short HEAD`` (None outside git),
``ratio`` the run's ratios to its same-run baselines (dimensionless).

Only the last run that met its comparison is kept (DESIGN.md's words, "the last run"): a run that
is worse but within the tolerance becomes the next run's reference; a run that did NOT meet it is
reported and not recorded (``judge`` says so), so one large regression is "not met" at every run
until it is fixed, instead of becoming the reference of its second run. The first run at a key
(no previous run) is recorded. Smoke and other sizes have keys of their own (``reference_key``):
they never move the full run's reference.

``TOLERANCE``: how much worse than the last run a ratio may be and still count as unchanged, as a
fraction (0.15: 15 % slower), per ratio, from the spread of back-to-back runs of
``bench/gate_decision.py`` on one tree and machine (docs/performance.md, "The gate at full speed
against its last run"): on a quiet machine the worst run-to-run change for the worse was p50 +11 %
(Xeon 3.07 -> 3.41x), sustained 1.37-fold slower (Xeon 0.26 -> 0.19x) and p99, one tail read in
2,000, 2.47-fold (Xeon 1.63 -> 4.02x): 15 %, 40 % and 150 %. Under load (6 runs at load 13-18,
2026-12-07) p50 moved up to 25 % for the worse: a verdict is worth reading on a quiet machine only
(``run_all`` prints the load average with the table).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: ratio name -> (lower is better, tolerance as a fraction of the last run's ratio)
TOLERANCE: dict[str, tuple[bool, float]] = {
    "p50": (True, 0.15),
    "p99": (True, 1.50),
    "sustained": (False, 0.40),
}


def record_path() -> Path:
    """The record's file (it may not exist yet)."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "portgate" / "bench" / "last_runs.json"


def cpu_model() -> str:
    """The CPU's model name from ``/proc/cpuinfo`` (the platform's machine name where unreadable)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or platform.machine()


def machine_key() -> str:
    """``"<hostname> / <CPU model>"``: the machine a record belongs to."""
    return f"{socket.gethostname()} / {cpu_model()}"


def fs_type(path: str | Path) -> str:
    """The type of the filesystem holding ``path`` (``/proc/mounts``' longest mount point above it:
    "ext4", "tmpfs", "overlay"); "unknown" where unreadable."""
    target, best, kind = str(Path(path).resolve()), -1, "unknown"
    try:
        mounts = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return kind
    for line in mounts:
        fields = line.split()
        if len(fields) < 3:
            continue
        point = fields[1].replace("\\040", " ")
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) > best:
            best, kind = len(point), fields[2]
    return kind


def reference_key(sizes: str, options: dict[str, object]) -> str:
    """The record's key after the bench's name: ``sizes`` and each option that changes what the
    ratios mean, ``name=value``, sorted; an option given as None (at its default) is left out, so a
    default run keeps the key of the runs recorded before the options were part of it."""
    extra = " ".join(f"{k}={v}" for k, v in sorted(options.items()) if v is not None)
    return f"{sizes} {extra}".strip()


def _load(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:  # unreadable or not JSON: no previous run, said on stderr
        print(f"bench: {path} unreadable ({exc}): treated as no previous run", file=sys.stderr)
        return {}
    return data if isinstance(data, dict) else {}


def previous(bench: str, sizes: str, path: Path | None = None) -> dict | None:
    """The last recorded run of ``bench`` at ``sizes`` on this machine (``{"at", "commit", "ratio"}``),
    or None (first run here, or an unreadable record: said on stderr)."""
    entry = _load(path or record_path()).get(machine_key(), {}).get(f"{bench} {sizes}")
    if not isinstance(entry, dict) or not isinstance(entry.get("ratio"), dict):
        return None
    return entry


def _commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                             text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def save(bench: str, sizes: str, ratio: dict[str, float], path: Path | None = None,
         at: dt.datetime | None = None) -> dict:
    """Record this run (replacing the last one of ``bench`` at ``sizes`` on this machine) and return
    the entry written. The file is replaced atomically; an ``OSError`` (read-only home) is said on
    stderr and the entry returned unrecorded: a benchmark never fails for its record."""
    path = path or record_path()
    entry = {"at": (at or dt.datetime.now(dt.UTC)).isoformat(timespec="seconds"), "commit": _commit(),
             "ratio": {k: round(float(v), 4) for k, v in ratio.items()}}
    data = _load(path)
    data.setdefault(machine_key(), {})[f"{bench} {sizes}"] = entry
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        print(f"bench: cannot record this run in {path} ({exc})", file=sys.stderr)
    return entry


def not_worse(name: str, now: float, before: float) -> bool:
    """``now`` is not worse than ``before`` beyond ``TOLERANCE[name]``: for a lower-is-better ratio
    ``now <= before * (1 + tol)``, for a higher-is-better one ``now >= before / (1 + tol)`` (the same
    "tol slower" both ways). Raises ``KeyError`` for a ratio with no stated tolerance."""
    lower, tol = TOLERANCE[name]
    return now <= before * (1 + tol) if lower else now * (1 + tol) >= before


def judge(bench: str, key: str, ratio: dict[str, float], path: Path | None = None,
          ) -> tuple[dict | None, dict[str, bool], list[str]]:
    """Compare this run's ``ratio`` with the last run of ``bench`` at ``key`` (``reference_key``) on
    this machine, and record this run in its place when it met the comparison (every ratio
    ``not_worse``) or had none (the first run here at ``key``); a run that did not meet it is not
    recorded, and the lines say so. Returns the last run (or None), the verdict per ratio
    (``not_worse``; empty on the first run) and the lines to print, which name the reference: its
    key (sizes and options), time and commit."""
    before = previous(bench, key, path)
    if before is None:
        save(bench, key, ratio, path)
        return None, {}, [f"last run on this machine at {key}: none (no previous run; this one recorded in "
                          f"{path or record_path()})"]
    vs_last = {k: not_worse(k, v, before["ratio"][k]) for k, v in ratio.items()
               if isinstance(before["ratio"].get(k), (int, float))}
    lines = [f"reference: the last run on this machine at {key} ({before['at']}, {before['commit']})"]
    for k, v in ratio.items():
        lower, tol = TOLERANCE[k]
        lines.append(f"{k} {v:.3f}x vs the last run's {before['ratio'].get(k)}x: "
                     f"{'met' if vs_last.get(k) else 'NOT met'} ({'lower' if lower else 'higher'} is better; "
                     f"tolerance {tol:.0%})")
    if all(vs_last.values()):
        save(bench, key, ratio, path)
        lines.append(f"this run recorded as the next run's reference ({path or record_path()})")
    else:
        lines.append(f"this run NOT recorded (it did not meet its comparison): the reference stays the run of "
                     f"{before['at']} ({before['commit']})")
    return before, vs_last, lines
