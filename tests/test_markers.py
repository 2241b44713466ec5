"""The ``mqtt`` and ``postgres`` markers follow the fixtures a test uses (tests/conftest.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def collected(*args: str) -> list[str]:
    """Test ids ``pytest --collect-only`` selects with ``args``."""
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode in (0, 5), done.stdout + done.stderr  # 5: nothing selected
    return [line for line in done.stdout.splitlines() if "::" in line]


def test_a_test_using_the_broker_fixture_carries_mqtt():
    target = "tests/central/ingest/test_rejects.py"  # writes no marker itself; its tests use ``broker``
    assert "pytest.mark" not in (ROOT / target).read_text(encoding="utf-8")
    every = collected(target)
    assert len(every) >= 5
    assert collected(target, "-m", "mqtt") == every
    assert collected(target, "-m", "not mqtt") == []


def test_the_postgres_marker_goes_on_the_postgresql_runs_only():
    target = "tests/central/ledger/test_ingest_insert.py"  # parametrised over db_url: sqlite and postgresql
    pg = collected(target, "-m", "postgres")
    rest = collected(target, "-m", "not postgres")
    assert pg and rest
    assert all("postgresql" in t for t in pg) and not any("postgresql" in t for t in rest)
    session = collected("tests/central/ledger/test_testkit_postgres.py", "-m", "postgres")
    assert any("separate_databases" in t for t in session)  # uses pg_cluster directly


def test_a_test_without_those_fixtures_carries_neither():
    assert collected("tests/portgate/test_kernel.py", "-m", "mqtt or postgres") == []
    assert collected("tests/portgate/test_kernel.py")
