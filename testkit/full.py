"""The size of a long fault or crash run: the smaller form the suite plays in CI, or the full one
(``PORTGATE_FULL=1 bash scripts/test.sh``, by hand before a release; docs/performance.md, "The test
suite").

    TRIALS = full_or(8, 100)   # 8 in CI, 100 with PORTGATE_FULL=1 (tests/central/ledger/test_migration_kills.py)

A smaller form must still fail on the bug its test guards (fewer kills at random moments, fewer
events, fewer gates: the same checks)."""

from __future__ import annotations

import os

FULL = os.environ.get("PORTGATE_FULL", "").strip() not in ("", "0")


def full_or(ci, full):
    """``full`` when ``PORTGATE_FULL`` is set (to anything but ``0``), else ``ci``."""
    return full if FULL else ci
