"""The ``mqtt`` and ``postgres`` markers follow the fixtures a test uses (tests/conftest.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REJECTS = "tests/central/ingest/test_rejects.py"  # writes no marker itself; its tests use ``broker``
INSERT = "tests/central/ledger/test_ingest_insert.py"  # parametrised over db_url: sqlite and postgresql
SESSION = "tests/central/ledger/test_testkit_postgres.py"
KERNEL = "tests/portgate/test_kernel.py"
RUNS = [(REJECTS,), (REJECTS, "-m", "mqtt"), (REJECTS, "-m", "not mqtt"), (INSERT, "-m", "postgres"),
        (INSERT, "-m", "not postgres"), (SESSION, "-m", "postgres"), (KERNEL, "-m", "mqtt or postgres"), (KERNEL,)]
# One Python process runs each collection in turn (``pytest.main``: a whole pytest session each, the
# suite's conftest and plugins included), instead of a Python and pytest start per collection.
COLLECT = """import contextlib, io, json, sys
import pytest
results = []
for args in json.loads(sys.argv[1]):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", *args])
    results.append([int(code), out.getvalue()])
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def collections() -> dict[tuple[str, ...], tuple[int, str]]:
    """``pytest --collect-only -q`` of each of ``RUNS``: (exit status, output) by its arguments."""
    done = subprocess.run([sys.executable, "-c", COLLECT, json.dumps(RUNS)], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip(), done.stdout + done.stderr
    return {args: (code, out) for args, (code, out) in zip(RUNS, json.loads(done.stdout.strip().splitlines()[-1]))}


def collected(collections, *args: str) -> list[str]:
    """Test ids ``pytest --collect-only`` selects with ``args``."""
    code, out = collections[args]
    assert code in (0, 5), out  # 5: nothing selected
    return [line for line in out.splitlines() if "::" in line]


def test_a_test_using_the_broker_fixture_carries_mqtt(collections):
    target = REJECTS
    assert "pytest.mark" not in (ROOT / target).read_text(encoding="utf-8")
    every = collected(collections, target)
    assert len(every) >= 5
    assert collected(collections, target, "-m", "mqtt") == every
    assert collected(collections, target, "-m", "not mqtt") == []


def test_the_postgres_marker_goes_on_the_postgresql_runs_only(collections):
    target = INSERT
    pg = collected(collections, target, "-m", "postgres")
    rest = collected(collections, target, "-m", "not postgres")
    assert pg and rest
    assert all("postgresql" in t for t in pg) and not any("postgresql" in t for t in rest)
    session = collected(collections, SESSION, "-m", "postgres")
    assert any("separate_databases" in t for t in session)  # uses pg_cluster directly


def test_a_test_without_those_fixtures_carries_neither(collections):
    assert collected(collections, KERNEL, "-m", "mqtt or postgres") == []
    assert collected(collections, KERNEL)
