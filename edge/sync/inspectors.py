"""The union inspectors' names at the gate (issue 33): ``<state_dir>/inspectors.json``, written
from the roster downlink (``RosterSnapshot.inspectors``, ``RosterDelta.inspectors_upsert``) and
read by the watchman's screen (``edge.display.lookup``), so an inspector's card shows his name
(and his photo, the photo index row of his registration) instead of an unnamed "Fiscal".

Shape: ``{"inspectors": {registration: name}}``. Written whole each time (a few dozen rows):
a temporary file, fsync, ``os.replace``, so a reader sees the old file or the new one. The rules
never read it: an inspector card decides by its roster ``cards`` row (G10).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

import structlog

log = structlog.get_logger(__name__)

FILE = "inspectors.json"
MAX_BYTES = 1024 * 1024  # a reader refuses a bigger file (never the gate's memory for a bad file)


class InspectorFile:
    """``<state_dir>/inspectors.json`` (see the module doc)."""

    def __init__(self, state_dir: str | Path) -> None:
        self.path = Path(state_dir) / FILE

    def replace(self, rows: Iterable) -> None:
        """The whole list (``InspectorRow`` values) from a snapshot. Raises ``OSError``."""
        self._write({r.registration: r.name for r in rows})

    def upsert(self, rows: Iterable) -> None:
        """Rows added or renamed by a delta. Raises ``OSError``."""
        rows = list(rows)
        if rows:
            self._write(read_inspectors(self.path.parent) | {r.registration: r.name for r in rows})

    def _write(self, names: dict[str, str]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{FILE}.{os.getpid()}.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump({"inspectors": names}, f, ensure_ascii=False, sort_keys=True)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)
        log.info("inspectors_replaced", count=len(names))


def read_inspectors(state_dir: str | Path) -> dict[str, str]:
    """``{registration: name}`` from ``<state_dir>/inspectors.json``; empty when the file is
    missing, too big or not that shape (the screen then shows an unnamed inspector)."""
    path = Path(state_dir) / FILE
    try:
        with open(path, "rb") as f:
            data = json.loads(f.read(MAX_BYTES + 1)[:MAX_BYTES + 1])
        names = data["inspectors"]
        return {str(k): str(v) for k, v in names.items()} if isinstance(names, dict) else {}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}
