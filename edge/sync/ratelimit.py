"""A token bucket: at most ``rate`` publishes per second on average, bursts up to ``burst``.

Pure: the caller passes the monotonic time in seconds, so it is tested without sleeping.
"""

from __future__ import annotations


class TokenBucket:
    """``rate`` tokens/s (0 or less = unlimited), capacity ``burst`` tokens, starts full."""

    def __init__(self, rate: float, burst: float, now: float) -> None:
        self.rate = rate
        self.burst = max(1.0, burst)
        self.tokens = self.burst
        self.stamp = now

    def take(self, now: float, n: float = 1.0) -> bool:
        """Take ``n`` tokens if available at time ``now`` (s, monotonic); True on success."""
        if self.rate <= 0:
            return True
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= n:
            self.tokens -= n
            return True
        return False

    def wait_time(self, n: float = 1.0) -> float:
        """Seconds until ``n`` tokens will be available (0 if they are now)."""
        if self.rate <= 0 or self.tokens >= n:
            return 0.0
        return (n - self.tokens) / self.rate
