"""A per-client rate limit over a sliding minute (the public payslip verification page, issue 34).

``RateLimiter(limit).allow(key, now)`` is pure: ``now`` is a monotonic second count the caller
passes (``time.monotonic()``), so a test moves time by hand. It keeps, per key (a client address),
the instants of the look-ups allowed in the last ``window`` seconds; at most ``max_keys`` keys are
kept (the least recently seen dropped first), so a flood of addresses cannot grow it without bound.
"""

from __future__ import annotations

from collections import OrderedDict, deque


class RateLimiter:
    """At most ``limit`` look-ups per key in any ``window`` seconds (60: "N per minute")."""

    def __init__(self, limit: int, *, window: float = 60.0, max_keys: int = 10_000) -> None:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        self.limit, self.window, self.max_keys = limit, window, max_keys
        self._seen: OrderedDict[str, deque[float]] = OrderedDict()

    def allow(self, key: str, now: float) -> bool:
        """True (and counted) when ``key`` has had fewer than ``limit`` allowed look-ups in the
        ``window`` seconds before ``now``; False (not counted) otherwise."""
        times = self._seen.pop(key, None) or deque()
        while times and times[0] <= now - self.window:
            times.popleft()
        allowed = len(times) < self.limit
        if allowed:
            times.append(now)
        self._seen[key] = times
        while len(self._seen) > self.max_keys:
            self._seen.popitem(last=False)
        return allowed

    def retry_after(self, key: str, now: float) -> int:
        """Whole seconds until ``key`` may look up again (0 when it may now)."""
        times = self._seen.get(key)
        if not times or len(times) < self.limit:
            return 0
        return max(1, int(times[0] + self.window - now + 0.999))
