"""Admission records in the registry and the ``portgate registry register`` / ``admissions``
commands' work (83.611 art. 15; DL 2.032 art. 5 §1-§3; rules in ``central.registry.admission``).

``admissions.csv`` (UTF-8, header row): ``registration``, ``birth_date``, ``nationality`` (ISO code,
``BR`` Brazilian), ``registered_on`` (YYYY-MM-DD), and per condition two columns: ``NAME`` (the
document: number or where it is filed) and ``NAME_on`` (its date), NAME one of
``CONDITION_NAMES`` (vision, police_record, military, electoral, vaccination, fitness,
criminal_record, legal_stay). A condition with both columns empty is missing.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from sqlalchemy import JSON, Column, Date, DateTime, ForeignKey, String, Table, func, select
from sqlalchemy.orm import Session

from central.db import metadata
from central.registry.admission import (
    CONDITION_NAMES,
    FOREIGN_SHARE_ARTICLE,
    Admission,
    Evidence,
    admission_problems,
    foreign_share,
)
from central.registry.changes import audit, utcnow
from central.registry.schema import workers
from central.registry.store import PortScope, import_files
from portgate import cells, tables
from portgate.errors import BadInput
from portgate.records import Worker, build_rows, load_csv

admissions = Table(
    "admissions",
    metadata,
    Column("registration", String(64), ForeignKey("workers.registration"), primary_key=True),
    Column("birth_date", Date, nullable=False),
    Column("nationality", String(8), nullable=False),
    Column("registered_on", Date, nullable=False),
    Column("evidence", JSON, nullable=False),  # {condition: {"document": ..., "dated": "YYYY-MM-DD"}}
    Column("recorded_at", DateTime(timezone=True), nullable=False),
    Column("actor", String(128), nullable=False),
)

REQUIRED = ("registration", "birth_date", "nationality", "registered_on")


def admission_from_row(row, source: str) -> Admission:
    """One ``Admission`` from an admissions.csv row; raises ``BadInput`` for a bad field."""
    for field in REQUIRED:
        if not (row.get(field) or "").strip():
            raise BadInput(f"{field} is required")
    evidence = {}
    for name in CONDITION_NAMES:
        document, dated = (row.get(name) or "").strip(), (row.get(f"{name}_on") or "").strip()
        if document and not dated:
            raise BadInput(f"{name}_on is required with {name}")
        if dated and not document:
            raise BadInput(f"{name} (the document) is required with {name}_on")
        if document:
            evidence[name] = Evidence(document, cells.date(row.get(f"{name}_on"), f"{name}_on"))
    return Admission(registration=row["registration"].strip(),
                     birth_date=cells.date(row.get("birth_date"), "birth_date"),
                     nationality=row["nationality"].strip().upper(),
                     registered_on=cells.date(row.get("registered_on"), "registered_on"),
                     evidence=evidence, source=source)


def read_admissions(path: str | Path) -> list[Admission]:
    """Read admissions.csv (``portgate.tables``); raises one ``BadInput`` naming every bad row
    ``file:line`` (or the file: missing, not UTF-8, a header lacking a ``REQUIRED`` column or
    naming a column that is neither required nor a condition's ``NAME``/``NAME_on``)."""
    known = REQUIRED + tuple(c for name in CONDITION_NAMES for c in (name, f"{name}_on"))
    return build_rows(tables.read_rows(path, REQUIRED, known=known), admission_from_row)


def _stevedore_counts(session: Session) -> tuple[int, int, int]:
    """(stevedores not cancelled, of them recorded foreign, of them with no admission record)."""
    rows = session.execute(
        select(workers.c.registration, admissions.c.nationality)
        .select_from(workers.outerjoin(admissions, admissions.c.registration == workers.c.registration))
        .where(workers.c.category == "estivador", workers.c.status != "cancelled")).all()
    return (len(rows), sum(1 for _r, nat in rows if nat is not None and nat != "BR"),
            sum(1 for _r, nat in rows if nat is None))


def register(session: Session, *, workers_csv: str | Path, admissions_csv: str | Path, actor: str,
             now: dt.datetime | None = None, port: str | None = None, served: tuple[str, ...] = ()) -> int:
    """Register the new workers of ``workers_csv`` with their admission evidence, all or nothing.

    Refused (one ``BadInput`` naming each row and the article): a registration already in the
    registry, a worker with no admissions.csv row, an unmet condition (age, nationality, a missing
    or later-dated document), and stevedores whose registration would make foreigners more than one
    third of the stevedores (DL 2.032 art. 5 §3). Returns how many were registered. Each worker's
    port: his row's ``port`` cell, else ``port``, else the home port (``import_files``; ``served``: the
    office's ports, home first, as ``PortScope.served``: under several, the port is stored)."""
    now = now or utcnow()
    new = load_csv(workers_csv, Worker)
    found = {a.registration: a for a in read_admissions(admissions_csv)}
    existing = set(session.execute(select(workers.c.registration)).scalars())
    wname, errors = Path(workers_csv).name, []
    for line, w in enumerate(new, start=2):
        if w.registration in existing:
            errors.append(f"{wname}:{line}: {w.registration} is already registered")
            continue
        adm = found.get(w.registration)
        if adm is None:
            errors.append(f"{wname}:{line}: {w.registration} has no row in {Path(admissions_csv).name} "
                          f"(admission conditions: 83.611 art. 15; DL 2.032 art. 5)")
            continue
        errors += [f"{adm.source}: {w.registration}: {p}" for p in admission_problems(w.category, adm)]
    total, foreign, _unknown = _stevedore_counts(session)
    new_stevedores = [w for w in new if w.category == "estivador" and w.registration in found]
    new_foreign = [w for w in new_stevedores if found[w.registration].foreign]
    share = foreign_share(total + len(new_stevedores), foreign + len(new_foreign))
    if new_foreign and not share["within"]:
        rows = ", ".join(found[w.registration].source for w in new_foreign)
        errors.append(f"{rows}: {FOREIGN_SHARE_ARTICLE}: foreigners would be {share['foreign']} of "
                      f"{share['stevedores']} stevedores; at most one third ({share['limit']})")
    if errors:
        raise BadInput("\n".join(errors))
    import_files(session, workers_csv=workers_csv, actor=actor, now=now, port=port, ports=PortScope(served=served))
    for w in new:
        record_admission(session, w, found[w.registration], actor=actor, now=now)
    return len(new)


def record_admission(session: Session, worker: Worker, adm: Admission, *, actor: str,
                     now: dt.datetime) -> None:
    """Store ``adm`` (the evidence of ``worker``'s admission, R9) with its ``worker.admission``
    audit row. The caller has checked it (``admission_problems``, ``foreign_share_refusal``)."""
    evidence = {k: {"document": e.document, "dated": e.dated.isoformat()} for k, e in adm.evidence.items()}
    session.execute(admissions.insert().values(
        registration=worker.registration, birth_date=adm.birth_date, nationality=adm.nationality,
        registered_on=adm.registered_on, evidence=evidence, recorded_at=now, actor=actor))
    audit(session, actor=actor, action="worker.admission", subject=worker.registration,
          detail={"category": worker.category, "registered_on": adm.registered_on.isoformat(),
                  "nationality": adm.nationality, "evidence": evidence}, now=now)


def foreign_share_refusal(session: Session, new: list[tuple[Worker, Admission]]) -> str | None:
    """Why registering ``new`` would make foreigners more than one third of the stevedores
    (DL 2.032 art. 5 §3, counted with the new ones), or None."""
    total, foreign, _unknown = _stevedore_counts(session)
    stevedores = [a for w, a in new if w.category == "estivador"]
    foreigners = [a for a in stevedores if a.foreign]
    share = foreign_share(total + len(stevedores), foreign + len(foreigners))
    if foreigners and not share["within"]:
        return (f"{FOREIGN_SHARE_ARTICLE}: foreigners would be {share['foreign']} of "
                f"{share['stevedores']} stevedores, at most one third ({share['limit']})")
    return None


def admissions_report(session: Session) -> dict:
    """The foreigners' share of the stevedore registry (DL 2.032 art. 5 §3) and how many workers
    of each category have an admission record."""
    total, foreign, unknown = _stevedore_counts(session)
    recorded = dict(session.execute(
        select(workers.c.category, func.count())
        .select_from(workers.join(admissions, admissions.c.registration == workers.c.registration))
        .group_by(workers.c.category)).all())
    return {"foreign_share": foreign_share(total, foreign) | {"no_admission_record": unknown},
            "admission_records": recorded}
