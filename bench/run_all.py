"""Run every benchmark in ``bench/`` with one command and write a Markdown table.

    .venv/bin/python bench/run_all.py [--smoke] [--only NAME ...] [--out bench/results/latest.md]

Each ``bench/<name>.py`` (every ``.py`` here except this file, ``_*.py`` and the profilers
``profile_*.py``, which print cProfile tables, not figures, and are run by hand) is run as a separate
process (``--smoke`` passed through) and must print, as its last line, one JSON object
``{"bench", "figures", "baseline", "ratio", "target", "met"}`` (BRIEF.md). The table has one row per
benchmark: its figures, the baseline measured in the same run, the ratio, the target, whether the
benchmark found its target met in that run, the time it took, and ``FAILED`` with the last lines of its output if it crashed or printed no JSON line. The
machine (CPU model, cores, Python, kernel) is written above the table, so figures are never quoted
without the machine they came from. Exit status: 1 if any benchmark failed, else 0.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def discover(only: list[str] | None = None) -> list[Path]:
    """The benchmark scripts, sorted by name; ``only`` restricts to those names (without .py)."""
    found = sorted(p for p in HERE.glob("*.py")
                   if p.name != "run_all.py" and not p.name.startswith(("_", "profile_")))
    if only:
        missing = set(only) - {p.stem for p in found}
        if missing:
            raise SystemExit(f"run_all: no such benchmark: {', '.join(sorted(missing))}")
        found = [p for p in found if p.stem in only]
    return found


def last_json(text: str) -> dict | None:
    """The last line of ``text`` that is a JSON object with a ``bench`` key, or None."""
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                return None
            return obj if isinstance(obj, dict) and "bench" in obj else None
    return None


def run_one(script: Path, smoke: bool, timeout: float) -> dict:
    """Run one benchmark; return its JSON result plus ``seconds`` (or ``error`` and ``tail``)."""
    cmd = [sys.executable, str(script), *(["--smoke"] if smoke else [])]
    t0 = time.monotonic()
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=HERE.parent)
        out, code = res.stdout, res.returncode
        err = res.stderr
    except subprocess.TimeoutExpired as exc:
        out, code, err = (exc.stdout or b"").decode() if isinstance(exc.stdout, bytes) else (exc.stdout or ""), -1, "timeout"
    seconds = time.monotonic() - t0
    result = last_json(out)
    if code != 0 or result is None:
        tail = "\n".join((out + "\n" + (err or "")).strip().splitlines()[-5:])
        return {"bench": script.stem, "error": f"exit {code}" if result is not None or code else "no JSON line",
                "tail": tail, "seconds": seconds}
    result["seconds"] = seconds
    return result


def _fmt(value) -> str:
    if isinstance(value, dict):
        return "<br>".join(f"{k}: {_fmt(v)}" for k, v in value.items())
    if isinstance(value, float):
        return f"{value:,.4g}" if abs(value) < 1e6 else f"{value:,.0f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{cpu}, {os.cpu_count()} logical CPUs, Python {platform.python_version()}, "
            f"{platform.system()} {platform.release()}")


def table(results: list[dict], smoke: bool) -> str:
    head = [f"# Benchmarks ({'smoke sizes' if smoke else 'full run'})", "",
            f"- run: {dt.datetime.now(dt.UTC).isoformat(timespec='seconds')}",
            f"- machine: {machine()}", "",
            "| bench | figures | baseline (same run) | ratio | target | met | time (s) |",
            "|---|---|---|---|---|---|---|"]
    rows = []
    for r in results:
        if "error" in r:
            rows.append(f"| {r['bench']} | FAILED ({_fmt(r['error'])}): {_fmt(r['tail'])} | | | | | {r['seconds']:.1f} |")
        else:
            rows.append(f"| {r['bench']} | {_fmt(r.get('figures', ''))} | {_fmt(r.get('baseline', ''))} | "
                        f"{_fmt(r.get('ratio', ''))} | {_fmt(r.get('target', ''))} | {met_word(r)} | "
                        f"{r['seconds']:.1f} |")
    verdicts = [r for r in results if isinstance(r.get("met"), bool)]
    missed = [r["bench"] for r in verdicts if not r["met"]]
    foot = ["", f"Targets met: {len(verdicts) - len(missed)} of {len(verdicts)}"
            + (f"; not met: {', '.join(missed)}" if missed else "")
            + (" (smoke sizes: the verdicts say nothing of the targets)" if smoke else "") + "."]
    return "\n".join(head + rows + foot) + "\n"


def met_word(result: dict) -> str:
    """``yes``/``**no**`` from the benchmark's own ``met`` verdict (same run); ``—`` without one."""
    met = result.get("met")
    return "yes" if met is True else "**no**" if met is False else "—"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="tiny sizes (CI)")
    ap.add_argument("--only", nargs="*", help="run only these benchmarks (names without .py)")
    ap.add_argument("--out", default=str(HERE / "results" / "latest.md"), help="Markdown output file")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per benchmark")
    args = ap.parse_args(argv)
    results = []
    for script in discover(args.only):
        print(f"run_all: {script.stem} ...", file=sys.stderr, flush=True)
        results.append(run_one(script, args.smoke, args.timeout))
    md = table(results, args.smoke)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(md)
    print(md)
    failed = [r["bench"] for r in results if "error" in r]
    missed = [r["bench"] for r in results if r.get("met") is False]
    print(json.dumps({"bench": "run_all", "figures": {"benchmarks": len(results), "failed": failed,
                                                      "targets_not_met": missed},
                      "baseline": {}, "ratio": None, "target": "all benchmarks print their JSON line"}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
