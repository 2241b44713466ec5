"""The gate's heartbeat file ``<state_dir>/gate-alive.json``: proof of life and the office link
state, for the watchman's screen (``edge.display``), which reads it read-only.

Shape (JSON object): ``{"pid": int, "at": float (Unix seconds, system clock), "uplink": "online" |
"offline" | "standalone", "since": float | null (Unix seconds the uplink last changed)}``.
Written every ``EVERY_S`` seconds by a daemon thread of the gate process, atomically (a temporary
file in the same directory, then ``os.replace``), so a reader sees the old or the new file, never a
half. The file is removed when the gate stops cleanly; a killed gate leaves a file that ages.

``read_alive(path, now)`` gives ``(gate_running, uplink, since)``: ``gate_running`` is False when
the file is missing, unreadable or older than ``STALE_S``; then ``uplink`` is "unknown".
Needs no ``metrics_port``. Never in the decision path: a failed write is logged and retried.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import structlog

log = structlog.get_logger(__name__)

FILE = "gate-alive.json"
EVERY_S = 1.0
STALE_S = 3.0


class Heartbeat:
    """Writes ``FILE`` in ``state_dir``. ``connected``: the sync's "session up" test, None for a
    standalone gate."""

    def __init__(self, state_dir: Path | str, connected: Callable[[], bool] | None) -> None:
        self.path = Path(state_dir) / FILE
        self._connected = connected
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._uplink: str | None = None
        self._since: float | None = None

    def _state(self) -> str:
        if self._connected is None:
            return "standalone"
        return "online" if self._connected() else "offline"

    def beat(self) -> None:
        """Write the file once (atomic replace). Raises ``OSError``."""
        now = time.time()
        uplink = self._state()
        if uplink != self._uplink:
            self._uplink, self._since = uplink, now
        body = json.dumps({"pid": os.getpid(), "at": now, "uplink": uplink, "since": self._since})
        tmp = self.path.with_name(f".{FILE}.{os.getpid()}.tmp")
        tmp.write_text(body, encoding="utf-8")
        os.replace(tmp, self.path)

    def start(self) -> Heartbeat:
        self._thread = threading.Thread(target=self._run, name="heartbeat", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        failing = False
        while not self._stop.is_set():
            try:
                self.beat()
                failing = False
            except OSError as exc:
                if not failing:
                    log.warning("heartbeat_write_failed", path=str(self.path), error=exc.strerror)
                failing = True
            self._stop.wait(EVERY_S)

    def stop(self) -> None:
        """Stop writing and remove the file (the gate is no longer running)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        try:
            self.path.unlink(missing_ok=True)
        except OSError:
            pass


def read_alive(path: Path | str, now: float | None = None) -> tuple[bool, str, float | None]:
    """``(gate_running, uplink, since)`` from the heartbeat file (see module doc)."""
    now = time.time() if now is None else now
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        at = float(data["at"])
        uplink = str(data["uplink"])
        since = data.get("since")
    except (OSError, ValueError, KeyError, TypeError):
        return False, "unknown", None
    if now - at > STALE_S or uplink not in ("online", "offline", "standalone"):
        return False, "unknown", None
    return True, uplink, float(since) if isinstance(since, (int, float)) else None
