"""The same requisition dispatched four times at once (issue 37: four parallel posts of one dispatch
form gave one page and three "Internal Server Error"): one dispatch fills it, the three others are
refused as registered (``BadInput``, the office's "requisição já registrada" page), never a crash on
``rotation_turns``' key nor a second dispatch (``central.rotation.dispatch_lock``). Real PostgreSQL
and a real SQLite file (before ``BEGIN IMMEDIATE`` SQLite's dispatches read outside a transaction
and both wrote), four threads, each its own connection and transaction, started together."""

from __future__ import annotations

import datetime as dt
import threading

import pytest
from sqlalchemy import func, insert, select
from sqlalchemy.orm import Session

from central.db import make_engine
from central.registry.schema import workers
from central.rotation import service
from central.rotation.schema import escala, requisitions
from portgate.errors import BadInput
from tests.central.registry.conftest import DAY, DISPATCH_AT, requisition

N = 4


@pytest.mark.parametrize("migrated_url", ["sqlite", "postgresql"], indirect=True)
def test_four_dispatches_of_one_requisition_at_once_fill_it_once(migrated_url):
    engine = make_engine(migrated_url)
    with engine.begin() as conn:
        for n in range(1, 4):
            conn.execute(insert(workers).values(
                registration=f"V{n:03d}", name=f"Vigia {n}", category="vigia", status="active", rotation_number=n,
                health_exam_date=dt.date(2026, 1, 5), booklet_revalidated_year=2026, updated_at=DISPATCH_AT))
    start = threading.Barrier(N)
    outcomes: list[str] = []

    def post() -> None:
        with Session(engine) as s:
            try:
                with s.begin():
                    start.wait(timeout=60)
                    service.dispatch_day(s, DAY, [requisition("A", workers=1)], actor="t", now=DISPATCH_AT)
                outcomes.append("dispatched")
            except BadInput as exc:
                outcomes.append("registered" if "already registered" in str(exc) else f"refused: {exc}")
            except Exception as exc:  # noqa: BLE001 - what the web answered as a 500
                outcomes.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=post) for _ in range(N)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    try:
        assert sorted(outcomes) == ["dispatched"] + ["registered"] * (N - 1), outcomes
        with engine.connect() as c:
            assert c.execute(select(func.count()).select_from(requisitions)).scalar_one() == 1
            assert c.execute(select(func.count()).select_from(escala)).scalar_one() == 1
    finally:
        engine.dispose()
