"""A pay run whose write fails says so in one line without SQL or parameters: a read-only ledger is
exit 2; another run storing the same statements meanwhile is a retryable conflict (exit 1) that
leaves nothing of the failed run stored."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import event, select
from sqlalchemy.engine import Engine

from central.db import make_engine
from central.pay.cli import load_setup
from central.pay.close import close_month
from central.ledger.tables import statement_lines
from tests.central.pay.test_statement_versions import _close_day, _ledger, _rows
from tests.central.pay.test_pay_cli import run

DAY = ("--from", "2026-03-15", "--to", "2026-03-15", "--at", "2026-04-05T00:00:00+00:00")


@pytest.fixture
def db_url(migrated_url):
    """This module's ledgers start migrated: each test gets a copy of the session's migrated ledger
    (``migrated_url``, tests/central/conftest.py) on SQLite and on PostgreSQL instead of running the
    migrations itself (they have their own tests: tests/central/ledger/test_migrations.py)."""
    return migrated_url


def test_a_read_only_ledger_is_one_line_without_sql(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    _ledger(url).dispose()
    read_only = f"sqlite:///file:{tmp_path / 'ledger.db'}?mode=ro&uri=true"
    code, _, err = run(capsys, "pay", "close", "--db", read_only, *DAY)
    line = err.strip()
    assert code == 2, err
    assert len(line.splitlines()) == 1 and "readonly database" in line
    assert "[SQL" not in line and "INSERT" not in line.upper() and "parameters" not in line


def _race(other_url):
    """Right after the pay run has read the statements' history (what it numbers versions by),
    another run stores the same statements and commits."""
    fired = []

    def after(conn, cursor, statement, parameters, context, executemany):
        text = " ".join(statement.split())
        if not fired and "FROM statements WHERE statements.shift_id IN" in text:
            fired.append(True)
            other = make_engine(other_url)
            try:
                _close_other(other)
            finally:
                other.dispose()
    return after, fired


def _close_other(engine):
    _port, rulebook, calendar = load_setup(None)
    close_month(engine, dt.date(2026, 3, 15), dt.date(2026, 3, 15), calendar.zone, rulebook, calendar,
                now=dt.datetime(2026, 4, 5, tzinfo=dt.UTC), by="other")


def test_a_close_racing_another_is_a_retryable_conflict_with_nothing_half_stored(db_url, capsys):
    url = db_url
    engine = _ledger(url)
    after, fired = _race(url)
    event.listen(Engine, "after_cursor_execute", after)
    try:
        code, _, err = run(capsys, "pay", "close", "--db", url, *DAY)
    finally:
        event.remove(Engine, "after_cursor_execute", after)
    try:
        assert fired
        line = err.strip()
        assert code == 1, err
        assert len(line.splitlines()) == 1 and "[SQL" not in line
        assert "another pay run changed these statements meanwhile; run again" in line
        rows = _rows(engine)  # only the other run's statements, each once
        assert rows and {r["computed_by"] for r in rows} == {"other"}
        assert len({r["statement_id"] for r in rows}) == len(rows)
        with engine.connect() as conn:
            ids = set(conn.execute(select(statement_lines.c.statement_id)).scalars())
        assert ids == {r["statement_id"] for r in rows}
        _close_day(capsys, url)  # run again: it succeeds, nothing to change
        assert _rows(engine) == rows
    finally:
        engine.dispose()
