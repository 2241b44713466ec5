"""The registry import's writes of new workers in batches (``central.registry.csv_import``): the
rows ``save_with_history`` and ``ids.set_ids`` write for one worker (his ``workers`` row with his
CPF/PIS, a ``worker.import`` audit row, a roster change row, his health exam and booklet year
history, a ``worker.ids`` audit row), written for every new worker of a file with one statement
per table (``executemany``; SQLAlchemy's insertmanyvalues where ids come back) instead of about ten
statements per worker: 2,000 rows took 13 s, 100,000 more than 10 minutes (docs/performance.md).

What is written is what the one-worker path writes: a new worker's port is NULL (the home port)
until ``worker_ports.apply_import`` moves him, so his audit rows and change row carry that port, and
his audit rows follow him if he moves (``audit_ports.remember``). It works inside the caller's
transaction.
"""

from __future__ import annotations

import dataclasses
import datetime as dt

from sqlalchemy import insert
from sqlalchemy.orm import Session

from central.audit import audit_log
from central.registry import audit_ports
from central.registry.changes import body
from central.registry.ids import FIELDS
from central.registry.schema import booklet_revalidations, downlink_changes, health_exams, workers
from portgate.errors import BadInput
from portgate.records import Worker, WorkerIds
from portgate.textfold import fold


def insert_new_workers(session: Session, new: list[Worker], given: dict[str, WorkerIds], *, actor: str,
                       now: dt.datetime) -> None:
    """Write the checked workers ``new`` (none registered yet) with the CPF/PIS ``given`` for them
    (registration -> ``WorkerIds``), as ``save_with_history`` and ``set_ids`` would one by one:
    same rows, same audit details, same change bodies, in the workers' order (all their
    ``worker.import`` entries, then their ``worker.ids`` entries). ``BadInput`` without an actor."""
    if not new:
        return
    if not actor or not actor.strip():
        raise BadInput("actor is required (who makes the change)", where="--actor")
    none = WorkerIds()
    session.execute(insert(workers), [
        dataclasses.asdict(w) | {"status": w.status.value, "updated_at": now, "name_folded": fold(w.name)}
        | dataclasses.asdict(given.get(w.registration, none)) for w in new])
    _audit(session, [(w.registration, "worker.import", body(w)) for w in new], actor=actor, now=now)
    session.execute(insert(downlink_changes), [
        {"kind": "roster", "op": "upsert", "key": w.registration, "body": body(w), "created_at": now,
         "actor": actor, "port": None} for w in new])
    exams = [{"registration": w.registration, "exam_date": w.health_exam_date, "recorded_at": now, "actor": actor}
             for w in new if w.health_exam_date]
    if exams:
        session.execute(insert(health_exams), exams)
    years = [{"registration": w.registration, "year": w.booklet_revalidated_year, "recorded_at": now,
              "actor": actor} for w in new if w.booklet_revalidated_year]
    if years:
        session.execute(insert(booklet_revalidations), years)
    ids = [(w.registration, "worker.ids", {"changed": {f: ["", getattr(given[w.registration], f)] for f in FIELDS
                                                       if getattr(given[w.registration], f)}})
           for w in new if given.get(w.registration, none) != none]
    _audit(session, ids, actor=actor, now=now)


def _audit(session: Session, entries: list[tuple[str, str, dict]], *, actor: str, now: dt.datetime) -> None:
    """One audit row per ``(registration, action, detail)`` of a new worker (port NULL, the home
    port), each remembered to follow his port (``audit_ports.remember``)."""
    if not entries:
        return
    found = session.execute(insert(audit_log).returning(audit_log.c.id, sort_by_parameter_order=True), [
        {"at": now, "actor": actor, "action": action, "subject": reg, "detail": detail, "port": None}
        for reg, action, detail in entries]).scalars().all()
    for audit_id, (reg, _action, _detail) in zip(found, entries, strict=True):
        audit_ports.remember(session, int(audit_id), reg)
