"""Warm the suite's bytecode before the pytest-xdist workers start (``scripts/test.sh``; docs/performance.md,
"The test suite, CI time pass").

Every worker imports every test module at collection, and pytest rewrites each one's ``assert``
statements first (an AST pass and a compile: ~24 s of CPU per worker for the whole suite, 6 s
when its rewritten bytecode is cached in ``__pycache__``). On a fresh clone there is no cache, and
the four workers would each rewrite all of it on two cores at the same moment. Here the stale test
files are collected (``pytest --collect-only``, which rewrites them and writes the cache) in one
process per CPU, each a share of the files, so the workers find them cached; the collection also
byte-compiles the project modules the tests import, which the components' subprocesses reuse.

    python -m testkit.warm_pyc [TESTS_DIR]     # exit status 0 always: the real run reports errors

Needs ``PYTHONDONTWRITEBYTECODE`` unset (Python and pytest write no cache with it). A file whose
cache is newer than itself is skipped, so a second run costs a directory walk.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def _pyc_tail() -> str:
    try:
        from _pytest.assertion.rewrite import PYC_TAIL  # lazy: only the warming needs pytest's cache name
    except ImportError:  # another pytest layout: warm everything
        return ""
    return PYC_TAIL


def stale(tests: Path, tail: str) -> list[Path]:
    """The test modules and conftest files under ``tests`` (sorted) whose pytest-rewritten bytecode is
    missing or older than the source."""
    out = []
    for path in sorted(tests.rglob("*.py")):
        if not (path.name.startswith("test_") or path.name == "conftest.py") or "__pycache__" in path.parts:
            continue
        pyc = path.parent / "__pycache__" / (path.stem + tail)
        if not tail or not pyc.exists() or pyc.stat().st_mtime < path.stat().st_mtime:
            out.append(path)
    return out


def warm(tests: Path, jobs: int) -> int:
    """Collect the stale files of ``tests`` in ``jobs`` pytest processes at once (every ``jobs``-th
    file each); returns how many files were stale."""
    files = stale(tests, _pyc_tail())
    shares = [files[i::jobs] for i in range(jobs) if files[i::jobs]]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    procs = [subprocess.Popen([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                               *map(str, share)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for share in shares]
    for proc in procs:
        proc.wait()
    return len(files)


def main(argv: list[str]) -> int:
    tests = Path(argv[0] if argv else "tests")
    jobs = max(1, min(len(os.sched_getaffinity(0)), 8))
    n = warm(tests, jobs)
    print(f"warm_pyc: {n} test files compiled in {jobs} processes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
