"""P6 from the gate's meal-worked record (83.611 art. 26 d) through the ledger and ``portgate pay``:
the rebuilt shift has ``meal_worked`` (flag MEAL_AT_GATE), P7 is computed on it at anchorage, and
an office correction recorded later wins. Figures by hand (RULES.md example 2, SD = R$ 180.00)."""

from __future__ import annotations

import datetime as dt
import json
from zoneinfo import ZoneInfo

import pytest

from app.cli import main
from central.db import make_engine
from central.ledger.migrate import upgrade
from central.ledger.shifts import reconstruct
from central.ledger.store import insert_events
from testkit.shift_events import ShiftEvents, dispatch
from tests.central.pay.test_billing_and_meal import CHIEF, _pay, _port

Z = ZoneInfo("America/Sao_Paulo")
D2 = dispatch(dt.date(2026, 3, 15), "19-01", "9300002", berth="anchored", function="vigia_chefe")


@pytest.fixture
def db_url(migrated_url):
    """This module's ledgers start migrated: each test gets a copy of the session's migrated ledger
    (``migrated_url``, tests/central/conftest.py) on SQLite and on PostgreSQL instead of running the
    migrations itself (they have their own tests: tests/central/ledger/test_migrations.py)."""
    return migrated_url


def _at(day: int, hour: int, minute: int = 0) -> dt.datetime:
    return dt.datetime(2026, 3, day, hour, minute, tzinfo=Z).astimezone(dt.UTC)


def _chief_events(meal_for: str = "101", d=D2):
    g = ShiftEvents("g2")
    return [g.admit("101", _at(15, 18, 58), D2), g.meal(meal_for, _at(15, 22, 30), d),
            g.exit("101", _at(16, 2, 30), D2)]


def test_reconstruct_sets_meal_worked_from_the_gate_record():
    [shift] = reconstruct(_chief_events(), Z)
    assert shift.meal_worked and not shift.held
    assert [f.code for f in shift.flags] == ["MEAL_AT_GATE"]
    assert "F001" in shift.flags[0].detail and "g2" in shift.flags[0].detail


def test_a_record_for_another_worker_or_period_changes_nothing():
    other = dispatch(dt.date(2026, 3, 15), "13-19", "9300002", berth="anchored", function="vigia_chefe")
    for events in (_chief_events(meal_for="102"), _chief_events(d=other)):
        [shift] = reconstruct(events, Z)
        assert not shift.meal_worked and shift.flags == ()


def test_gate_meal_record_is_paid_p6_and_p7_and_an_office_correction_wins(db_url, tmp_path, capsys):
    upgrade(db_url)
    engine = make_engine(db_url)
    with engine.begin() as conn:
        insert_events(conn, _chief_events(), dt.datetime(2026, 4, 1, tzinfo=dt.UTC))
    engine.dispose()
    port = _port(tmp_path, "0.00")
    paid = _pay(capsys, db_url, port)
    # SDe 270.00: P1 270.00, P2 108.00, P3 67.50, P4 135.00, P6 270.00 = 850.50; P7 0.20 × = 170.10
    assert paid[CHIEF]["P6"] == "270.00" and paid[CHIEF]["P7"] == "170.10"
    assert paid[CHIEF]["TOTAL"] == "1020.60"
    code = main(["ledger", "correct-meal", "--db", db_url, "--shift", CHIEF, "--not-worked",
                 "--actor", "chefe.silva", "--reason", "registrado por engano no portaló"])
    out = capsys.readouterr()
    assert code == 0, out.err
    again = _pay(capsys, db_url, port)
    assert "P6" not in again[CHIEF] and again[CHIEF]["TOTAL"] == "696.60"
    main(["ledger", "shifts", "--db", db_url, "--from", "2026-03-15", "--to", "2026-03-15"])
    [listed] = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert listed["meal_worked"] is False
    assert [f["flag"] for f in listed["flags"]] == ["MEAL_AT_GATE", "MEAL_CORRECTED"]
