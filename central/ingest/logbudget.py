"""A budget of log lines: at most ``burst`` lines per ``window_s`` seconds, the rest counted.

The ingest logs one warning per dead letter; a flood of junk (50,000 messages) must not write
megabytes of log. ``LogBudget.take()`` says whether a line may be written and how many were
swallowed before it, so the next line written carries the count (``suppressed``). The dead-letter
counter (``portgate_ingest_dead_letters_total``) and the ``dead_letters`` table still count every one.
"""

from __future__ import annotations

import time
from collections.abc import Callable


class LogBudget:
    """``take()`` → ``None`` (over budget: do not log) or the number of lines suppressed since the
    last one allowed (0 normally). Not thread-safe: one per writer."""

    def __init__(self, burst: int = 20, window_s: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        if burst < 1 or window_s <= 0:
            raise ValueError("burst must be >= 1 and window_s > 0")
        self.burst = burst
        self.window_s = window_s
        self._clock = clock
        self._start = clock()
        self._used = 0
        self.suppressed = 0

    def take(self) -> int | None:
        now = self._clock()
        if now - self._start >= self.window_s:
            self._start, self._used = now, 0
        if self._used >= self.burst:
            self.suppressed += 1
            return None
        self._used += 1
        swallowed, self.suppressed = self.suppressed, 0
        return swallowed


class DeadLetterBudget:
    """At most ``per_window`` dead letters stored per sender and ``window_s`` seconds (the sender:
    the gate of the topic, which the broker's ACL binds to its credentials; any other topic is its
    own sender). Past it, in that window, one summary row says the limit was reached and the rest
    are counted, not stored: a gate sending junk without end cannot fill the ledger. Not
    thread-safe: one per writer."""

    def __init__(self, per_window: int, window_s: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        if per_window < 1 or window_s <= 0:
            raise ValueError("per_window must be >= 1 and window_s > 0")
        self.per_window = per_window
        self.window_s = window_s
        self._clock = clock
        self._windows: dict[str, tuple[float, int]] = {}  # sender -> (window start, dead letters seen)

    def keep(self, sender: str) -> str:
        """``"store"`` (within the limit), ``"summary"`` (the first one over it in this window:
        store one summary row instead) or ``"drop"`` (counted only)."""
        now = self._clock()
        start, seen = self._windows.get(sender, (now, 0))
        if now - start >= self.window_s:
            start, seen = now, 0
        seen += 1
        if len(self._windows) > 10_000:  # senders of long ago
            self._windows = {k: v for k, v in self._windows.items() if now - v[0] < self.window_s}
        self._windows[sender] = (start, seen)
        if seen <= self.per_window:
            return "store"
        return "summary" if seen == self.per_window + 1 else "drop"
