"""``pay mark-paid`` refuses a payment dated before the shift's work day, or more than a day ahead
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
    ("2026-03-10T00:00:00-03:00", "--at: the payment date 2026-03-10 is before the work day of "),
    ("2026-03-14T23:59:00-03:00", "--at: the payment date 2026-03-14 is before the work day of "),
    ("2099-01-01T00:00:00-03:00", "--at: the payment time 2099-01-01T00:00:00-03:00 is more than a day after now"),
])
def test_a_payment_before_the_work_day_or_far_ahead_is_refused_in_one_line(stored, db_url, capsys, at, words):
    engine, sid = stored
    code, _, err = run(capsys, "pay", "mark-paid", "--db", db_url, "--at", at, sid)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert f"portgate: {words}" in err, err
    assert _paid_at(engine, sid) is None


def test_a_payment_on_the_work_day_itself_in_the_port_s_time_is_accepted(stored, db_url, capsys):
    engine, sid = stored
    assert run(capsys, "pay", "mark-paid", "--db", db_url, "--at", "2026-03-15T23:00:00-03:00", sid)[0] == 0
    assert _paid_at(engine, sid) is not None


def test_the_store_checks_against_the_clock_its_caller_gives(stored):
    engine, sid = stored
    now = dt.datetime(2026, 3, 20, 12, tzinfo=dt.UTC)
    with pytest.raises(BadInput, match="more than a day after now"):
        mark_paid(engine, [sid], now + dt.timedelta(days=1, seconds=1), None, now=now)
    mark_paid(engine, [sid], now + dt.timedelta(days=1), "booked", now=now)  # tomorrow: a booked transfer
    assert _paid_at(engine, sid) is not None
