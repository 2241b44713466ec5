"""Reports: escala vs presence (ledger tap admits), gangway coverage gaps (G11), sanctions, R6
sizing."""

from __future__ import annotations

import datetime as dt
import json
import uuid

import pytest
from sqlalchemy.orm import Session

from central import reports
from central.ledger.schema import events
from central.registry import store
from central.rotation import service
from app.cli import main
from tests.central.registry.conftest import DAY, DISPATCH_AT, requisition, worker

UTC = dt.UTC


def admit(session, registration, gate_id, at):
    session.execute(events.insert().values(
        event_id=str(uuid.uuid4()), port="santos", gate_id=gate_id, boot_id="b", seq=1,
        occurred_at=at, clock_trusted=True, mono_ns=0, type="tap", registration=registration,
        decision="admit", payload={}, mac="00", raw=b"{}", received_at=at))


@pytest.fixture
def day(engine):
    """V001+V002 on ship 1 (long haul, gangway post) and V003 on ship 2 (proa), 07-13 local =
    10:00-16:00 UTC."""
    with Session(engine) as s, s.begin():
        now = store.utcnow()
        for i in range(1, 5):
            store.save_worker(s, worker(f"V00{i}", i), actor="a", now=now, action="t")
        service.dispatch_day(s, DAY, [requisition("a", workers=2, ship="1", gate_id="g1"),
                                      requisition("b", ship="2", gate_id="g2", post="proa")],
                             actor="d", now=DISPATCH_AT)
    return engine


def test_presence_lists_who_did_not_board_and_who_boarded_without_dispatch(day):
    with Session(day) as s, s.begin():
        admit(s, "V001", "g1", dt.datetime(2026, 3, 10, 9, 45, tzinfo=UTC))  # 15 min early: ok
        admit(s, "V003", "g1", dt.datetime(2026, 3, 10, 10, 5, tzinfo=UTC))  # wrong gate
        admit(s, "V004", "g2", dt.datetime(2026, 3, 10, 11, 0, tzinfo=UTC))  # not dispatched
    with Session(day) as s:
        rep = reports.presence(s, DAY)
    assert sorted(r["registration"] for r in rep.dispatched_not_boarded) == ["V002", "V003"]
    assert sorted(r["registration"] for r in rep.boarded_without_dispatch) == ["V003", "V004"]


def test_boarded_without_dispatch_counts_only_the_days_boardings_and_every_covering_entry(engine):
    """R5: a boarding belongs to the port-local date it happened on, and any active entry at that
    gate covers it, the day before's included. V001 and V002 are dispatched 19-01 on DAY (19:00
    local = 22:00 UTC to 04:00 UTC of DAY+1). V001 boards at 18:45 local (21:45 UTC, 15 min early):
    DAY's boarding, with a dispatch. V002 boards at 00:40 local of DAY+1 (03:40 UTC): DAY's entry
    covers it. V003, not dispatched, boards at 00:30 local of DAY+1 (03:30 UTC): DAY+1's boarding
    without dispatch, not DAY's. DAY+1 has no entries: only V003 is listed for it (every admit of
    DAY..DAY+2 used to be)."""
    nxt = DAY + dt.timedelta(days=1)
    with Session(engine) as s, s.begin():
        now = store.utcnow()
        for i in range(1, 4):
            store.save_worker(s, worker(f"V00{i}", i), actor="a", now=now, action="t")
        service.dispatch_day(s, DAY, [requisition("n", workers=2, period="19-01", gate_id="g1")],
                             actor="d", now=DISPATCH_AT)
    with Session(engine) as s:
        assert sorted(e.registration for _, _, e in service.day_entries(s, DAY)) == ["V001", "V002"]
    with Session(engine) as s, s.begin():
        admit(s, "V001", "g1", dt.datetime(2026, 3, 10, 21, 45, tzinfo=UTC))
        admit(s, "V002", "g1", dt.datetime(2026, 3, 11, 3, 40, tzinfo=UTC))
        admit(s, "V003", "g1", dt.datetime(2026, 3, 11, 3, 30, tzinfo=UTC))
    with Session(engine) as s:
        on_day, on_next = reports.presence(s, DAY), reports.presence(s, nxt)
    assert on_day.boarded_without_dispatch == []
    assert on_day.dispatched_not_boarded == []
    assert [(r["registration"], r["at"]) for r in on_next.boarded_without_dispatch] == [
        ("V003", "2026-03-11T03:30:00+00:00")]
    assert on_next.dispatched_not_boarded == []


def test_coverage_gap_when_no_gangway_watchman_is_admitted_30_min_after_start(day, db_url, capsys):
    with Session(day) as s:
        gap, unwatched = reports.coverage_gaps(s, DAY)
    assert (gap["ship"], gap["period"], gap["dispatched"], gap["rule"]) == (
        "1", "07-13", ["V001", "V002"], "G11")
    assert (unwatched["ship"], unwatched["dispatched"]) == ("2", [])  # long haul, no gangway post
    with Session(day) as s, s.begin():
        admit(s, "V002", "g1", dt.datetime(2026, 3, 10, 10, 40, tzinfo=UTC))  # 40 min: too late
    with Session(day) as s:
        assert len(reports.coverage_gaps(s, DAY)) == 2
    with Session(day) as s, s.begin():
        admit(s, "V001", "g1", dt.datetime(2026, 3, 10, 10, 29, tzinfo=UTC))
    assert main(["rotation", "coverage", "--date", "2026-03-10", "--db", db_url, "--actor",
                 "x"]) == 0
    [line] = capsys.readouterr().out.splitlines()
    assert json.loads(line)["ship"] == "2"


def test_presence_and_sanctions_commands_print_json_lines(day, db_url, capsys):
    with Session(day) as s, s.begin():
        store.suspend(s, "V004", start=DAY, days=10, reason="falta", article="83.611 art. 21 a",
                      actor="dtm")
    capsys.readouterr()
    assert main(["rotation", "presence", "--date", "2026-03-10", "--db", db_url, "--actor",
                 "x"]) == 0
    kinds = [json.loads(line)["kind"] for line in capsys.readouterr().out.splitlines()]
    assert kinds == ["dispatched_not_boarded"] * 3
    today = dt.datetime.now(UTC).date().isoformat()
    assert main(["rotation", "sanctions", "--from", today, "--to", today, "--db", db_url,
                 "--actor", "x"]) == 0
    [line] = capsys.readouterr().out.splitlines()
    assert json.loads(line)["section"] == "penalties" and json.loads(line)["registration"] == "V004"


def test_sizing_averages_shifts_per_registered_watchman_over_12_months(day, db_url, capsys):
    capsys.readouterr()
    assert main(["rotation", "sizing", "--month", "2026-04-01", "--db", db_url, "--actor", "x"]) == 0
    figure = json.loads(capsys.readouterr().out)
    assert figure["shifts"] == 3 and figure["registered"] == 4
    assert figure["average_shifts_per_worker_month"] == round(3 / 12 / 4, 2)
    assert (figure["from"], figure["to"]) == ("2025-04-01", "2026-03-31")
    with Session(day) as s:
        assert reports.sizing(s, dt.date(2026, 3, 1))["shifts"] == 0  # March not in the window
