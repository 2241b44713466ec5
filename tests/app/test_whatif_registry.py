"""The web's gate what-if over the registry's copies (``[publish] source = "registry"``): the
roster comes from the registry and the escala from the stored dispatch, and nothing is stored."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.whatif import web_gate_what_if
from central.config import PublishSettings
from central.db import make_engine
from central.ledger.migrate import upgrade
from central.registry.schema import workers
from central.registry.store import import_files

DEMO = Path(__file__).resolve().parents[2] / "config" / "demo"
RULEBOOK = 'name = "t"\n[[version]]\neffective_from = 2026-01-01\n[version.g4]\ncard_and_badge_required = false\n'


def test_the_gate_what_if_reads_the_registry_copies_and_stores_nothing(tmp_path):
    url = f"sqlite:///{tmp_path / 'office.db'}"
    upgrade(url)
    engine = make_engine(url)
    try:
        with Session(engine) as s, s.begin():
            import_files(s, workers_csv=DEMO / "workers.csv", cards_csv=DEMO / "cards.csv", actor="t",
                         now=dt.datetime(2026, 3, 1, tzinfo=dt.UTC))
        with engine.connect() as c:
            before = c.execute(select(func.count()).select_from(workers)).scalar()
        run = web_gate_what_if(PublishSettings(source="registry"))
        rows, summary = run(engine, dt.date(2026, 3, 15), None, RULEBOOK, {}, "pt")
        assert rows == [] and summary["changes"] == {}  # no taps recorded that day: nothing to replay
        with engine.connect() as c:
            assert c.execute(select(func.count()).select_from(workers)).scalar() == before > 0
    finally:
        engine.dispose()
