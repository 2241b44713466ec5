"""A day's dispatch from a requisitions.csv, as ``portgate rotation dispatch`` and the office's
escala screen run it: load and check the file (every bad row named), the DL 2.032 arts. 9/13
requisition flags (never blocking, kept on the audit log), then ``service.dispatch_day`` (R1-R3:
store the escala and publish every entry as an escala change row for the gates)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path
from zoneinfo import ZoneInfo

from sqlalchemy.orm import Session

from central.production.composition import load_composition
from central.registry.changes import audit
from central.rotation import service
from central.rotation.requisition_checks import dispatch_flags, read_details
from central.rotation.requisitions import load_requisitions


@dataclasses.dataclass(frozen=True, slots=True)
class FileDispatch:
    requisitions: list
    done: service.DayResult
    flags: list[dict]


def dispatch_file(session: Session, day: dt.date, path: str | Path, *, actor: str, now: dt.datetime,
                  composition_toml: str | Path | None = None,
                  ports: service.RotationPorts | None = None) -> FileDispatch:
    """Dispatch ``path`` for ``day`` in the caller's transaction; ``now`` is the caller's clock
    (aware: the web app's, the command's ``--at``), see ``service.dispatch_day``. ``BadInput``
    naming every bad row (a function the office does not know included), or requisitions of
    another date or of a period ended at ``now``, or at a gate outside ``ports``' view (nothing is
    written then); ``ConfigError`` for a bad composition table. ``ports``: the office's ports, each
    requisition filled from its gate's port's workers (``central.rotation.ports``)."""
    reqs = load_requisitions(path, service.known_functions(session))
    flags = dispatch_flags(reqs, read_details(path), load_composition(composition_toml),
                           ZoneInfo(service.RotationSettings().tz))
    done = service.dispatch_day(session, day, reqs, actor=actor, now=now, ports=ports)
    if flags:  # kept with the dispatch (DL 2.032 arts. 9, 13)
        audit(session, actor=actor, action="rotation.requisition-flags", subject=day.isoformat(),
              detail={"flags": flags}, now=now)
    return FileDispatch(reqs, done, flags)
