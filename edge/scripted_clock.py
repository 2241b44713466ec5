"""A scripted wall clock for demos and rehearsals: the wall time comes from a small file that a
driver process (``portgate demo``) rewrites, so a whole port day can be played in minutes through the
real gate service. Never for production: the gate config must say ``clock = "scripted"``.

File format (JSON, replaced atomically by ``set_scripted_time``):
``{"wall": "<ISO 8601 with offset>", "mono_ns": <CLOCK_MONOTONIC ns when it was written>}``.
The clock returns ``wall`` as written: scripted time stands still between two scripted instants,
so every event carries exactly the time the script gave it (``mono_ns`` is kept for diagnosis).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from pathlib import Path

from edge.rules.model import Now


def set_scripted_time(path: str | Path, wall: dt.datetime) -> None:
    """Write ``wall`` (aware) as the scripted time in ``path`` (atomic replace)."""
    if wall.tzinfo is None:
        raise ValueError("scripted time must be aware")
    path = Path(path)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"wall": wall.isoformat(), "mono_ns": time.monotonic_ns()}))
    os.replace(tmp, path)


class ScriptedClock:
    """``Clock`` whose wall time follows the scripted file; trusted. If the file is missing or
    unreadable the last value read is kept (or the system time, before any)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._base = (dt.datetime.now(dt.UTC), time.monotonic_ns())
        self._raw = b""

    def _refresh(self) -> None:
        try:
            raw = self.path.read_bytes()
            if raw == self._raw:
                return
            data = json.loads(raw)
            wall = dt.datetime.fromisoformat(data["wall"]).astimezone(dt.UTC)
            self._base = (wall, int(data["mono_ns"]))
            self._raw = raw
        except (OSError, ValueError, KeyError, TypeError):
            return

    def wall(self) -> dt.datetime:
        self._refresh()
        return self._base[0]

    def mono_ns(self) -> int:
        return time.monotonic_ns()

    def trusted(self) -> bool:
        return True

    def now(self) -> Now:
        return Now(wall=self.wall(), mono_ns=self.mono_ns(), clock_trusted=True)
