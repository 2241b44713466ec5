"""``testkit.warm_pyc`` (run by ``scripts/test.sh`` before the workers start): it writes pytest's
assert-rewritten bytecode of every stale test module and conftest, in several processes, and skips
what is already cached; run on a planted suite by real pytest processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from _pytest.assertion.rewrite import PYC_TAIL

from testkit import warm_pyc

ROOT = Path(__file__).resolve().parents[2]


def _plant(tmp_path: Path) -> Path:
    tests = tmp_path / "suite"
    (tests / "sub").mkdir(parents=True)
    (tests / "conftest.py").write_text("import pytest\n")
    (tests / "helper.py").write_text("X = 1\n")  # not a test module: pytest does not rewrite it
    for i in range(3):
        (tests / f"test_a{i}.py").write_text(f"def test_{i}():\n    assert {i} == {i}\n")
    (tests / "sub" / "test_b.py").write_text("def test_b():\n    assert 'b'\n")
    return tests


def _cached(tests: Path) -> list[str]:
    return sorted(str(p.relative_to(tests)) for p in tests.rglob("*" + PYC_TAIL))


def test_every_stale_test_module_and_conftest_is_rewritten_once(tmp_path, monkeypatch):
    tests = _plant(tmp_path)
    monkeypatch.chdir(tmp_path)  # the planted suite's own rootdir
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")  # as in the CI's environment: warm_pyc drops it
    assert warm_pyc.warm(tests, jobs=2) == 5
    assert _cached(tests) == [f"__pycache__/conftest{PYC_TAIL}", *(f"__pycache__/test_a{i}{PYC_TAIL}" for i in range(3)),
                              f"sub/__pycache__/test_b{PYC_TAIL}"]
    assert warm_pyc.warm(tests, jobs=2) == 0  # all cached: nothing to do
    later = (tests / "sub" / "__pycache__" / f"test_b{PYC_TAIL}").stat().st_mtime + 5
    os.utime(tests / "sub" / "test_b.py", (later, later))  # an edited module is stale again
    assert warm_pyc.stale(tests, PYC_TAIL) == [tests / "sub" / "test_b.py"]


def test_the_command_says_how_many_it_compiled_and_exits_0_even_on_a_broken_module(tmp_path):
    tests = _plant(tmp_path)
    (tests / "test_broken.py").write_text("def test_x(:\n")  # a syntax error: the real run reports it
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "testkit.warm_pyc", str(tests)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    assert "warm_pyc: 6 test files compiled in" in done.stderr, done.stderr
    assert f"__pycache__/test_a0{PYC_TAIL}" in _cached(tests)
