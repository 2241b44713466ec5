"""Production from the gate (issue 22 item 5): a gang member's minutes worked come from his gate taps
in the ledger (the typed figure becomes a correction with its difference on the statement), and the
same registration in two gangs on two ships at once is flagged DOUBLE_ASSIGNMENT (83.611 art. 22,
Lei 9.719 art. 7). Through ``portgate production pay --ledger`` / ``import --db`` on a real SQLite
ledger holding signed gate events.

Hand figures (dl-2032-1940, SD = R$ 180.00, hourly 22.50): gang G1, ship 9123456, 2026-03-10 07-13,
general 40 t × 4.50 = 180.00, two stevedores, 1 quota each: share 90.00 each; rain 40 min: E4
22.50 × 0.5 × 40/60 = 7.50 each. E3: more than 240 min and more than 30 t → at least a day (180.00).
- E003 typed 300 min; gate 07:00 → 10:50 = 230 min − 40 rain = 190 min: half-day guarantee 90.00 is
  not above the share: no E3 line. Total 90.00 + 7.50 = 97.50 (typed: + E3 90.00 = 187.50).
- E004 typed 300 min; gate 06:58 → 13:02 = 364 − 40 = 324 min (+24): E3 top-up 90.00. Total 187.50.
"""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest

from app.cli import main
from central.db import make_engine
from central.ledger.shifts import reconstruct
from central.ledger.store import insert_events
from central.production.gate import from_gate, gate_minutes
from central.production.store import ensure_tables
from testkit.shift_events import ShiftEvents, dispatch
from tests.central.production.conftest import gang, member

Z = ZoneInfo("America/Sao_Paulo")
DAY = dt.date(2026, 3, 10)
SHIP = "9123456"


def _at(hour: int, minute: int = 0) -> dt.datetime:
    return dt.datetime(2026, 3, 10, hour, minute, tzinfo=Z).astimezone(dt.UTC)


def _taps(extra=()):
    g = ShiftEvents("g-berth")
    d = dispatch(DAY, "07-13", SHIP, function="estivador", post="porao1")
    return [g.admit("E003", _at(7), d), g.exit("E003", _at(10, 50), d),
            g.admit("E004", _at(6, 58), d), g.exit("E004", _at(13, 2), d), *extra]


def _files(tmp_path, *, second_gang: bool = False):
    gang_rows = "gang_id,registration,role,holds_worked,boarded,minutes_worked\n" \
                "G1,E003,stevedore,1,yes,300\nG1,E004,stevedore,1,yes,300\n"
    tally_rows = "gang_id,ship,date,period,cargo_class,quantity\nG1,9123456,2026-03-10,07-13,general,40\n"
    if second_gang:
        gang_rows += "G2,E004,stevedore,1,yes,120\nG2,E020,stevedore,1,yes,120\n"
        tally_rows += "G2,9300002,2026-03-10,09-15,general,10\n"
    (tmp_path / "gang.csv").write_text(gang_rows, encoding="utf-8")
    (tmp_path / "tally.csv").write_text(tally_rows, encoding="utf-8")
    (tmp_path / "interruptions.csv").write_text("gang_id,kind,minutes\nG1,rain,40\n", encoding="utf-8")
    (tmp_path / "tariffs.csv").write_text("cargo_class,unit,labour_tariff,effective_from\n"
                                          "general,t,4.50,2026-01-01\n", encoding="utf-8")
    return ["--rulebook", "dl-2032-1940", "--gang", str(tmp_path / "gang.csv"),
            "--tally", str(tmp_path / "tally.csv"), "--tariffs", str(tmp_path / "tariffs.csv"),
            "--interruptions", str(tmp_path / "interruptions.csv")]


@pytest.fixture
def ledger(tmp_path, sqlite_ledger):
    url = sqlite_ledger(tmp_path / "ledger.db")
    engine = make_engine(url)
    with engine.begin() as conn:
        insert_events(conn, _taps(), dt.datetime(2026, 3, 11, tzinfo=dt.UTC))
    ensure_tables(engine)
    engine.dispose()
    return url


def _pay(capsys, argv) -> dict:
    code = main(["production", "pay", *argv])
    out = capsys.readouterr()
    assert code == 0, out.err
    [g1, *rest] = json.loads(out.out)["gangs"]
    return g1, rest


def test_minutes_from_the_gate_replace_the_typed_figure_and_change_the_guarantee(tmp_path, ledger, capsys):
    argv = _files(tmp_path)
    typed, _ = _pay(capsys, argv)
    assert {m["registration"]: m["total"] for m in typed["members"]} == {"E003": "187.50", "E004": "187.50"}
    assert typed["members"][0]["minutes_typed"] is None
    g1, _ = _pay(capsys, [*argv, "--ledger", ledger])
    e003, e004 = g1["members"]
    assert (e003["minutes_worked"], e003["minutes_typed"], e003["minutes_difference"]) == ("190", "300", "-110")
    assert [x["amount"] for x in e003["lines"]] == ["90.00", "7.50"] and e003["total"] == "97.50"
    assert (e004["minutes_worked"], e004["minutes_difference"]) == ("324", "24")
    assert [x["amount"] for x in e004["lines"]] == ["90.00", "90.00", "7.50"] and e004["total"] == "187.50"
    assert g1["summary"]["flags"] == [
        "MINUTES_FROM_GATE: E003 typed 300 min, gate 190 min (difference -110 min)",
        "MINUTES_FROM_GATE: E004 typed 300 min, gate 324 min (difference +24 min)"]
    csv_out = main(["production", "pay", *argv, "--ledger", ledger, "--format", "csv"])
    rows = capsys.readouterr().out.splitlines()
    assert csv_out == 0 and any(",flag,," in r and "difference -110 min" in r for r in rows)


def test_import_reads_the_gate_minutes_from_its_own_ledger(tmp_path, ledger, capsys):
    import sqlite3
    from contextlib import closing

    assert main(["production", "import", *_files(tmp_path), "--db", ledger]) == 0
    capsys.readouterr()
    with closing(sqlite3.connect(tmp_path / "ledger.db")) as db:
        minutes = dict(db.execute("SELECT registration, minutes_worked FROM production_members"))
        notes = [r[0] for r in db.execute("SELECT note FROM production_inputs WHERE kind = 'flag'")]
    assert minutes == {"E003": "190", "E004": "324"}
    assert len(notes) == 2 and notes[0].startswith("MINUTES_FROM_GATE: E003")


def test_the_same_registration_in_two_gangs_on_two_ships_is_flagged_on_both(tmp_path, ledger, capsys):
    g1, [g2] = _pay(capsys, [*_files(tmp_path, second_gang=True), "--ledger", ledger])
    assert "DOUBLE_ASSIGNMENT: E004 also in gang G2 on ship 9300002 (2026-03-10 09-15)" in g1["summary"]["flags"]
    # G2 also sees his gate shift on G1's ship (06:58-13:02) overlapping its period 09-15
    assert g2["summary"]["flags"] == [
        "DOUBLE_ASSIGNMENT: E004 also aboard ship 9123456 (E004/9123456/2026-03-10/07-13) during "
        "gang G2's period 09-15",
        "DOUBLE_ASSIGNMENT: E004 also in gang G1 on ship 9123456 (2026-03-10 07-13)"]


def test_a_gangway_shift_on_another_ship_and_a_missing_exit():
    """Pure: E004 also has a watchman-like shift on another ship overlapping the gang's period;
    E003's gate shift has no exit, so his typed minutes stand."""
    other = ShiftEvents("g-other")
    d = dispatch(DAY, "07-13", "9300002", function="vigia")
    g = ShiftEvents("g-berth")
    d1 = dispatch(DAY, "07-13", SHIP, function="estivador")
    shifts = reconstruct([g.admit("E003", _at(7), d1), g.admit("E004", _at(7), d1),
                          g.exit("E004", _at(12), d1), other.admit("E004", _at(11), d)], Z)
    work = gang([member("E003"), member("E004")], [("general", 40)], stops=[("rain", 40)])
    work = type(work)(**{**{f: getattr(work, f) for f in work.__dataclass_fields__}, "ship": SHIP})
    [out], notes = from_gate([work], shifts, Z)
    assert [m.minutes_worked for m in out.members] == [Decimal(300), Decimal(260)]
    assert notes["T1"][0].startswith("MINUTES_TYPED: E003 typed 300 min kept")
    assert any(n.startswith("DOUBLE_ASSIGNMENT: E004 also aboard ship 9300002") for n in notes["T1"])
    assert any("flagged DOUBLE_ASSIGNMENT by the ledger" in n for n in notes["T1"])
    e004 = next(s for s in shifts if s.registration == "E004" and s.ship == SHIP)
    assert gate_minutes(e004, work) == Decimal(260)  # 300 min aboard − 40 rain


def test_an_unreadable_ledger_is_one_line_and_no_statement(tmp_path, capsys):
    bad = tmp_path / "not-a-db.db"
    bad.write_bytes(b"this is not SQLite\n" * 64)
    code = main(["production", "pay", *_files(tmp_path), "--ledger", f"sqlite:///{bad}"])
    out = capsys.readouterr()
    assert code != 0 and out.out == ""
    assert "reading the ledger's gate events failed" in out.err and "Traceback" not in out.err
    assert len(out.err.strip().splitlines()) == 1


def test_a_bus_report_takes_the_gate_minutes_from_the_ledger_it_is_stored_in(ledger, stevedoring, tariffs):
    from central.production.ingest import ingest_report
    from wire.production import ProductionReport, ReportInterruption, ReportMember, ReportTally, encode

    raw = encode(ProductionReport(
        message_id="m9", terminal_id="tecon", gang_id="G1", ship=SHIP, date=DAY, period="07-13",
        members=[ReportMember("E003", "stevedore", "300"), ReportMember("E004", "stevedore", "300")],
        tally=[ReportTally("general", "40")], interruptions=[ReportInterruption("rain", minutes="40")]))
    engine = make_engine(ledger)
    try:
        result = ingest_report(raw, engine, stevedoring, tariffs, received_at=dt.datetime(2026, 3, 11, tzinfo=dt.UTC))
    finally:
        engine.dispose()
    e003, e004 = result.members
    assert (e003.minutes_worked, e003.minutes_typed, e003.total) == (Decimal(190), Decimal(300), Decimal("97.50"))
    assert (e004.minutes_worked, e004.total) == (Decimal(324), Decimal("187.50"))
    assert result.summary.flags[0] == "MINUTES_FROM_GATE: E003 typed 300 min, gate 190 min (difference -110 min)"
