"""What DL 2.032 asks of a stevedoring requisition and of the gang it asks for, checked at
dispatch (pure, except ``read_details`` which reads the optional requisitions.csv columns).

Art. 9 a: a requisition is made in writing, to one stevedoring entity, for the same ship and,
whenever possible, the day before ("de véspera"): ``made_at`` (ISO 8601 with offset) on a local date
before the requisition's date, else LATE_REQUISITION. Art. 9 b: it states the probable start time
(``start_time`` HH:MM), the ship's name (``ship_name``), the quantity and nature of the cargo
(``cargo``), the number of holds (``holds``) and where the ship operates (``place``): any missing,
or no ``made_at``, is INCOMPLETE_REQUISITION naming what is missing. Only rows of category
``estivador`` are checked (watchmen's requisitions follow 83.611). Art. 13 / DL 3.844 art. 3: the
rows of one ship, period and post that name a ``unit`` (and ``units``) form a gang checked against
the composition table: GANG_COMPOSITION. Flags never block the dispatch: they are printed with it
and kept on the audit log.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections import Counter
from pathlib import Path
from zoneinfo import ZoneInfo

from central.production.composition import Composition, composition_problem
from central.rotation.engine import Requisition
from portgate import tables
from portgate.cells import parse_aware
from portgate.errors import BadInput

LATE = "LATE_REQUISITION"
INCOMPLETE = "INCOMPLETE_REQUISITION"
ART_9A, ART_9B = "DL 2.032 art. 9 a", "DL 2.032 art. 9 b"


@dataclasses.dataclass(frozen=True, slots=True)
class Details:
    """The art. 9 columns of one requisitions.csv row (``None`` / empty when not given)."""

    source: str
    made_at: dt.datetime | None = None
    cargo: str = ""
    holds: int | None = None
    place: str = ""
    start_time: dt.time | None = None
    unit: str | None = None
    units: int = 1


def _details(row: dict, source: str) -> Details:
    made = (row.get("made_at") or "").strip()
    holds_raw, units_raw = (row.get("holds") or "").strip(), (row.get("units") or "").strip()
    start_raw = (row.get("start_time") or "").strip()
    try:
        holds = int(holds_raw) if holds_raw else None
        units = int(units_raw) if units_raw else 1
    except ValueError as exc:
        raise BadInput(f"{source}: holds and units must be whole numbers") from exc
    if (holds is not None and holds < 1) or units < 1:
        raise BadInput(f"{source}: holds and units must be at least 1")
    try:
        start = dt.time.fromisoformat(start_raw) if start_raw else None
    except ValueError as exc:
        raise BadInput(f"{source}: start_time {start_raw!r} is not HH:MM") from exc
    try:
        made_at = parse_aware(made, "made_at") if made else None
    except BadInput as exc:
        raise BadInput(f"{source}: {exc.reason}") from exc
    return Details(source, made_at, (row.get("cargo") or "").strip(), holds,
                   (row.get("place") or "").strip(), start, (row.get("unit") or "").strip() or None, units)


def read_details(path: str | Path) -> list[Details]:
    """The art. 9 / composition columns of every row of requisitions.csv, in file order (the same
    order ``load_requisitions`` returns), read with ``portgate.tables``. Raises one ``BadInput``
    naming every bad row ``file:line``, or the file (missing, not UTF-8, not CSV)."""
    out, errors = [], []
    for where, row in tables.iter_rows(path):
        try:
            out.append(_details(row, where))
        except BadInput as exc:
            errors.append(exc.reason)
    if errors:
        raise BadInput("\n".join(errors))
    return out


def requisition_flags(req: Requisition, det: Details, tz: ZoneInfo) -> list[dict]:
    """LATE_REQUISITION / INCOMPLETE_REQUISITION of one stevedoring requisition (art. 9)."""
    if req.category != "estivador":
        return []
    out = []
    missing = [name for name, value in (("made_at", det.made_at), ("start_time", det.start_time),
                                        ("ship_name", req.ship_name), ("cargo", det.cargo),
                                        ("holds", det.holds), ("place", det.place)) if not value]
    if missing:
        out.append({"ref": req.ref, "source": det.source, "flag": INCOMPLETE, "article": ART_9B,
                    "detail": f"missing: {', '.join(missing)}"})
    if det.made_at is not None and det.made_at.astimezone(tz).date() >= req.date:
        out.append({"ref": req.ref, "source": det.source, "flag": LATE, "article": ART_9A,
                    "detail": f"made {det.made_at.astimezone(tz).isoformat()}, not the day before {req.date}"})
    return out


def gang_flags(reqs: list[Requisition], details: list[Details], table: Composition) -> list[dict]:
    """GANG_COMPOSITION for each ship, period and post whose rows name a unit and whose requested
    members per role depart from the table (DL 2.032 art. 13; DL 3.844 art. 3)."""
    groups: dict[tuple, list[tuple[Requisition, Details]]] = {}
    for req, det in zip(reqs, details, strict=True):
        if det.unit is not None:
            groups.setdefault((req.date, req.period, req.ship, req.post), []).append((req, det))
    out = []
    for (day, period, ship, post), rows in groups.items():
        unit, units = rows[0][1].unit, rows[0][1].units
        roles = Counter()
        for req, _det in rows:
            roles[table.functions.get(req.function, req.function)] += req.workers
        problem = composition_problem(table, unit, units, roles.elements())
        if problem is not None:
            out.append({"ref": ", ".join(r.ref for r, _d in rows), "source": rows[0][1].source,
                        "flag": problem.split(":", 1)[0], "article": problem.rsplit("(", 1)[-1].rstrip(")"),
                        "detail": f"{ship} {day} {period} {post}: {problem.split(': ', 1)[1]}"})
    return out


def dispatch_flags(reqs: list[Requisition], details: list[Details], table: Composition,
                   tz: ZoneInfo) -> list[dict]:
    """Every art. 9 and composition flag of a day's requisitions."""
    flags = [f for req, det in zip(reqs, details, strict=True) for f in requisition_flags(req, det, tz)]
    return flags + gang_flags(reqs, details, table)
