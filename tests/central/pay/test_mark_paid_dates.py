"""``pay mark-paid`` refuses a payment dated before the shift's start in the port's time (a 19-01
shift of the 15th starts at 19:00 of the 15th), or more than a day ahead
of the office's clock (read by the command, not by the store): one line, exit 2, nothing marked."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select

from central.db import make_engine
from central.ledger.tables import statements
from central.pay.statements_store import mark_paid
from portgate.errors import BadInput
from tests.central.pay.test_pay_cli import _shifts_ledger, run

SHIFT_101 = "101/9300002/2026-03-15/19-01"  # work day 2026-03-15, period 19-01


@pytest.fixture
def db_url(migrated_url):
    """This module's ledgers start migrated: each test gets a copy of the session's migrated ledger
    (``migrated_url``, tests/central/conftest.py) on SQLite and on PostgreSQL instead of running the
    migrations itself (they have their own tests: tests/central/ledger/test_migrations.py)."""
    return migrated_url


@pytest.fixture
def stored(db_url, capsys):
    _shifts_ledger(db_url)
    assert run(capsys, "pay", "--db", db_url, "--from", "2026-03-01", "--to", "2026-03-31")[0] == 0
    engine = make_engine(db_url)
    with engine.connect() as conn:
        sid = conn.execute(select(statements.c.statement_id).where(
            statements.c.shift_id == SHIFT_101)).scalar_one()
    yield engine, sid
    engine.dispose()


def _paid_at(engine, sid):
    with engine.connect() as conn:
        return conn.execute(select(statements.c.paid_at).where(statements.c.statement_id == sid)).scalar()


@pytest.mark.parametrize("at, words", [
    ("2026-03-10T00:00:00-03:00", "--at: the payment time 2026-03-10T00:00-03:00 is before the start of the shift of "),
    ("2026-03-14T23:59:00-03:00", "--at: the payment time 2026-03-14T23:59-03:00 is before the start of the shift of "),
    ("2026-03-15T18:59:00-03:00", "--at: the payment time 2026-03-15T18:59-03:00 is before the start of the shift of "),
    ("2026-03-15T21:59:00Z", "--at: the payment time 2026-03-15T18:59-03:00 is before the start of the shift of "),
    ("2099-01-01T00:00:00-03:00", "--at: the payment time 2099-01-01T00:00:00-03:00 is more than a day after now"),
])
def test_a_payment_before_the_work_day_or_far_ahead_is_refused_in_one_line(stored, db_url, capsys, at, words):
    engine, sid = stored
    code, _, err = run(capsys, "pay", "mark-paid", "--db", db_url, "--at", at, sid)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert f"portgate: {words}" in err, err
    assert _paid_at(engine, sid) is None


@pytest.mark.parametrize("at", [
    "2026-03-15T19:00:00-03:00",  # the shift's start itself
    "2026-03-15T23:00:00-03:00",  # the day it starts, in the port's time
    "2026-03-16T02:30:00Z",  # 23:30 of the 15th in the port's time, already the 16th in UTC
    "2026-03-16T00:30:00-03:00",  # after midnight, the shift still running
])
def test_a_payment_from_the_shift_s_start_in_the_port_s_time_is_accepted(stored, db_url, capsys, at):
    engine, sid = stored
    assert run(capsys, "pay", "mark-paid", "--db", db_url, "--at", at, sid)[0] == 0
    assert _paid_at(engine, sid) is not None


def test_the_refusal_names_the_shift_s_start_in_the_port_s_time(stored, db_url, capsys):
    _engine, sid = stored
    _code, _out, err = run(capsys, "pay", "mark-paid", "--db", db_url, "--at", "2026-03-15T18:00:00-03:00", sid)
    assert f"{sid} (2026-03-15T19:00-03:00)" in err


def test_the_store_checks_against_the_clock_its_caller_gives(stored):
    engine, sid = stored
    now = dt.datetime(2026, 3, 20, 12, tzinfo=dt.UTC)
    with pytest.raises(BadInput, match="more than a day after now"):
        mark_paid(engine, [sid], now + dt.timedelta(days=1, seconds=1), None, now=now)
    mark_paid(engine, [sid], now + dt.timedelta(days=1), "booked", now=now)  # tomorrow: a booked transfer
    assert _paid_at(engine, sid) is not None
