"""``wait_until``: poll a condition in a test that waits on a real component (a broker, a process)."""

from __future__ import annotations

import time


def wait_until(predicate, timeout: float = 30.0, interval: float = 0.05, what: str = "condition"):
    """Call ``predicate()`` every ``interval`` seconds until it returns a true value, and return that
    value. Raises ``AssertionError("timed out waiting for <what>")`` after ``timeout`` seconds, so a
    test fails instead of hanging."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {what}")
