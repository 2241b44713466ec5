"""The suite's migrated-ledger copies (``migrated_url`` and ``ledgers`` of tests/central/conftest.py):
each test gets a ledger at head of its own, on SQLite and PostgreSQL, that no other test sees, and a
filled ledger is filled once per session and copied."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import func, select, text

from central.db import make_engine
from central.ledger.migrate import head
from central.ledger.schema import gate_losses

AT = dt.datetime(2026, 3, 15, 12, 0, tzinfo=dt.UTC)
FILLS: list[str] = []  # the kinds ``_fill`` ran for, this session


def _revision_and_losses(url: str) -> tuple[str, int]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            revision = conn.execute(text("SELECT version_num FROM alembic_version")).scalar_one()
            return revision, conn.execute(select(func.count()).select_from(gate_losses)).scalar_one()
    finally:
        engine.dispose()


def _add_loss(url: str, detail: str) -> None:
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(gate_losses.insert().values(gate_id="g1", seq_from=1, seq_to=1, event_id="x" * 36,
                                                     detail=detail, recorded_at=AT))
    finally:
        engine.dispose()


def test_a_copy_is_at_head_and_its_writes_stay_in_it(migrated_url, ledgers, request, tmp_path):
    assert _revision_and_losses(migrated_url) == (head(), 0)
    _add_loss(migrated_url, "written by this test")
    assert _revision_and_losses(migrated_url) == (head(), 1)
    kind = request.node.callspec.params["migrated_url"]
    (tmp_path / "other").mkdir()
    other = ledgers.url(request, kind, tmp_path / "other")  # the next test's copy
    assert other != migrated_url
    assert _revision_and_losses(other) == (head(), 0)


def _fill(engine) -> None:
    FILLS.append(engine.dialect.name)
    with engine.begin() as conn:
        conn.execute(gate_losses.insert().values(gate_id="g9", seq_from=1, seq_to=2, event_id="y" * 36,
                                                 detail="filled once", recorded_at=AT))


def test_a_filled_ledger_is_filled_once_and_each_copy_starts_from_it(migrated_url, ledgers, request, tmp_path):
    kind = request.node.callspec.params["migrated_url"]
    urls = []
    for n in range(2):
        (tmp_path / str(n)).mkdir()
        urls.append(ledgers.url(request, kind, tmp_path / str(n), "test_ledger_copies", _fill))
    assert FILLS.count(kind) == 1  # the engine's dialect name is the kind
    _add_loss(urls[0], "only in the first copy")
    assert [_revision_and_losses(u) for u in urls] == [(head(), 2), (head(), 1)]
    assert _revision_and_losses(migrated_url) == (head(), 0)  # the plain migrated ledger is not the filled one
