"""The case page's due-process record (R7, 83.611 art. 21 §1, §2), read from the ledger: the
accused worker, who opened the case and when, and its timeline (charge, defence, decision and
notice, appeal, final), each step done with its time and who, or pending with its deadline.

Times are aware UTC datetimes (the page shows them in the port's time); deadlines are port-local
dates (``central.registry.cases.appeal_last_day``). Read-only.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.orm import Session

from central.registry import cases as svc
from central.registry.schema import audit_log, workers
from portgate.timeutil import as_utc

# step -> the audit action that records it (``central.registry.cases``)
STEPS = (("charge", "case.open"), ("defence", "case.defence"), ("decision", "case.decide"),
         ("appeal", "case.appeal"), ("final", "case.final"))


@dataclasses.dataclass(frozen=True, slots=True)
class Step:
    """One step of the timeline: ``key`` in ``STEPS``; ``at`` (aware UTC) and ``who`` when done
    (``who`` from the audit log: ``web:<login>``, ``inspector:<registration>``, ``ingest``...);
    ``until``: a port-local date by which it may be taken (the appeal), None otherwise."""

    key: str
    at: dt.datetime | None
    who: str = ""
    until: dt.date | None = None

    @property
    def done(self) -> bool:
        return self.at is not None


@dataclasses.dataclass(frozen=True, slots=True)
class Record:
    worker_name: str | None
    opened_by: str
    steps: list[Step]


def _who(actors: dict[str, list[str]], action: str) -> str:
    found = actors.get(action) or [""]
    return found[0].removeprefix("web:")


def record(session: Session, row, tz: ZoneInfo) -> Record:
    """The due-process record of case ``row`` (a ``cases`` row)."""
    name = None
    if row.registration:
        name = session.execute(select(workers.c.name).where(workers.c.registration == row.registration)).scalar()
    actors: dict[str, list[str]] = {}
    for a in session.execute(select(audit_log.c.action, audit_log.c.actor).where(
            audit_log.c.subject == str(row.id), audit_log.c.action.like("case.%")).order_by(audit_log.c.id)):
        actors.setdefault(a.action, []).append(a.actor)
    opened_by = _who(actors, "case.open") or (f"inspector:{row.inspector_registration or row.inspector_uid}"
                                              if row.inspector_uid else "")
    decided = as_utc(row.decided_at)
    steps = [
        Step("charge", as_utc(row.opened_at), opened_by),
        Step("defence", as_utc(row.defence_at), _who(actors, "case.defence")),
        Step("decision", decided, _who(actors, "case.decide")),
        Step("appeal", as_utc(row.appeal_at), _who(actors, "case.appeal"),
             svc.appeal_last_day(row, tz) if decided is not None else None),
        Step("final", as_utc(row.final_at), _who(actors, "case.final")),
    ]
    return Record(name, opened_by, steps)
