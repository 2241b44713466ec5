"""A shift with no exit read is not paid while it may still get one: until its period's end plus the
exit grace (2 h) it is held OPEN; after that it is paid (the ledger flags it MISSING_EXIT). Ledger path on
SQLite and PostgreSQL, CSV path through the real CLI."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import func, select

from central.db import make_engine
from central.ledger.tables import statements
from central.ledger.store import rebuild_shifts
from central.pay.cli import load_setup
from central.pay.statements_store import OPEN_GRACE, pay_from_ledger
from central.ledger.shifts import period_bounds
from tests.central.pay.test_pay_cli import Z, run, write_csv
from tests.central.pay.test_pay_refusals import HEADER, _ledger

DAY = dt.date(2026, 3, 10)
OPEN_SHIFT = [("300", "vigia", "9300001", "berthed", DAY, "07-13", (3, 10, 6, 58), None)]


@pytest.fixture
def db_url(migrated_url):
    """This module's ledgers start migrated: each test gets a copy of the session's migrated ledger
    (``migrated_url``, tests/central/conftest.py) on SQLite and on PostgreSQL instead of running the
    migrations itself (they have their own tests: tests/central/ledger/test_migrations.py)."""
    return migrated_url


def _pay_at(db_url, now):
    _port, rulebook, calendar = load_setup(None)
    engine = make_engine(db_url)
    try:
        rebuild_shifts(engine, DAY, DAY, Z, now=now)
        run_ = pay_from_ledger(engine, DAY, DAY, rulebook, calendar, now=now)
        with engine.connect() as conn:
            stored = conn.execute(select(func.count()).select_from(statements)).scalar()
    finally:
        engine.dispose()
    return run_, stored


def test_an_open_shift_is_held_open_until_its_period_end_plus_the_grace(db_url):
    _ledger(db_url, OPEN_SHIFT)
    _start, end = period_bounds(DAY, "07-13", Z)
    for now in (dt.datetime(2026, 3, 10, 10, 0, tzinfo=Z), end, end + OPEN_GRACE - dt.timedelta(seconds=1)):
        run_, stored = _pay_at(db_url, now.astimezone(dt.UTC))
        assert run_.statements == [] and stored == 0, now
        (held,) = run_.held
        assert held.reasons[0].startswith("OPEN: no exit read yet") and (end + OPEN_GRACE).isoformat() in held.reasons[0]
    run_, stored = _pay_at(db_url, (end + OPEN_GRACE).astimezone(dt.UTC))
    assert run_.held == [] and stored == 1
    (st,) = run_.statements
    assert st.shift_id == "300/9300001/2026-03-10/07-13" and st.total > 0


def test_the_csv_path_holds_a_shift_of_the_running_period_open(tmp_path, capsys):
    now = dt.datetime.now(Z)
    today, yesterday = now.date(), now.date() - dt.timedelta(days=1)
    start, end = next(period_bounds(day, p, Z) for day in (today, yesterday)
                      for p in ("01-07", "07-13", "13-19", "19-01")
                      if period_bounds(day, p, Z)[0] <= now < period_bounds(day, p, Z)[1] + OPEN_GRACE)
    admit = start + dt.timedelta(minutes=1)
    path = tmp_path / "shifts.csv"
    path.write_text(f"{HEADER}\n301,vigia,9300001,berthed,{start.isoformat()},{end.isoformat()},"
                    f"{admit.isoformat()},,false\n")
    code, out, err = run(capsys, "pay", "--shifts", str(path))
    assert code == 0, err
    assert [r["rule"] for r in out] == ["HELD"]
    assert out[0]["flags"][0].startswith("OPEN:")
