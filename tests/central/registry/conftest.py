"""Fixtures for the office tests: a real SQLite database file per test, CSV writers, sample data."""

from __future__ import annotations

import csv
import datetime as dt
from pathlib import Path

import pytest
from sqlalchemy.orm import Session

from central import db
from central.rotation.engine import Requisition
from portgate.records import Berth, Voyage, Worker, WorkerStatus

DAY = dt.date(2026, 3, 10)
# the office's clock for a dispatch of DAY (``service.dispatch_day``'s ``now``): the evening before,
# when none of DAY's periods has ended (the machine's date is later: a past escala is refused)
DISPATCH_AT = dt.datetime(2026, 3, 9, 21, 0, tzinfo=dt.UTC)


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'office.db'}"


@pytest.fixture
def engine(db_url):
    engine = db.make_engine(db_url)
    db.load_all_tables().create_all(engine)
    yield engine
    engine.dispose()


@pytest.fixture
def session(engine):
    with Session(engine) as session:
        yield session


def write_csv(path: Path, columns, rows) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(columns))
        writer.writeheader()
        for row in rows:
            writer.writerow(row)
    return path


def worker(reg: str, n: int, *, category: str = "vigia", status: WorkerStatus = WorkerStatus.ACTIVE,
           **kw) -> Worker:
    return Worker(registration=reg, name=f"Worker {reg}", category=category, status=status,
                  health_exam_date=kw.pop("health_exam_date", dt.date(2025, 6, 1)),
                  booklet_revalidated_year=kw.pop("booklet_revalidated_year", 2026),
                  rotation_number=n, **kw)


def requisition(ref: str = "r1", *, day: dt.date = DAY, period: str = "07-13", workers: int = 1,
                ship: str = "9123456", post: str = "portalo", function: str = "vigia",
                operator: str = "Op A", category: str = "vigia", gate_id: str = "g1") -> Requisition:
    return Requisition(ref=ref, date=day, period=period, operator=operator, ship=ship,
                       ship_name=f"Ship {ship}", voyage=Voyage.LONG_HAUL, berth=Berth.BERTHED,
                       gate_id=gate_id, post=post, function=function, workers=workers,
                       category=category)


WORKER_COLUMNS = ("registration", "name", "category", "status", "suspended_from", "suspended_until",
                  "health_exam_date", "booklet_revalidated_year", "rotation_number")


def worker_rows(n: int, category: str = "vigia", prefix: str = "V"):
    return [dict(registration=f"{prefix}{i:03d}", name=f"Vigia {i}", category=category,
                 status="active", suspended_from="", suspended_until="",
                 health_exam_date="2025-06-01", booklet_revalidated_year="2026",
                 rotation_number=str(i)) for i in range(1, n + 1)]


REQ_COLUMNS = ("ref", "date", "period", "operator", "ship", "ship_name", "voyage", "berth",
               "gate_id", "post", "function", "workers")


def req_row(ref, *, date="2026-03-10", period="07-13", operator="Op A", ship="9123456",
            voyage="long_haul", gate_id="g1", post="portalo", function="vigia", workers="1"):
    return dict(ref=ref, date=date, period=period, operator=operator, ship=ship,
                ship_name=f"Ship {ship}", voyage=voyage, berth="berthed", gate_id=gate_id,
                post=post, function=function, workers=workers)
