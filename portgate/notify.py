"""systemd notification (``Type=notify``): READY=1 once a service is set up, WATCHDOG=1 from its main
loop, STOPPING=1 on shutdown. Uses the ``sdnotify`` library; without ``NOTIFY_SOCKET`` every call is a
no-op, so services run the same under systemd, in a terminal and in tests.
"""

from __future__ import annotations

import os
import time

import sdnotify


class Notifier:
    """Thin wrapper: ``ready()``, ``watchdog()`` (rate-limited to half of ``WATCHDOG_USEC``),
    ``status(text)``, ``stopping()``."""

    def __init__(self) -> None:
        self._enabled = bool(os.environ.get("NOTIFY_SOCKET"))
        self._n = sdnotify.SystemdNotifier() if self._enabled else None
        usec = int(os.environ.get("WATCHDOG_USEC", "0") or 0)
        self._interval = usec / 2e6 if usec else 5.0
        self._last = 0.0

    @property
    def interval(self) -> float:
        """Seconds between watchdog pings (half of ``WATCHDOG_USEC``; 5 s without a watchdog)."""
        return self._interval

    def _send(self, text: str) -> None:
        if self._n is not None:
            self._n.notify(text)

    def ready(self, status: str = "") -> None:
        self._send("READY=1" + (f"\nSTATUS={status}" if status else ""))

    def watchdog(self) -> None:
        now = time.monotonic()
        if now - self._last >= self._interval:
            self._last = now
            self._send("WATCHDOG=1")

    def status(self, text: str) -> None:
        self._send(f"STATUS={text}")

    def stopping(self) -> None:
        self._send("STOPPING=1")
