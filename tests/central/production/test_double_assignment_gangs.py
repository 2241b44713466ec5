"""R10 (83.611 art. 22; Lei 9.719 art. 7; issue 31 item 2): no worker in two gangs on two ships in
overlapping periods. Checked whenever a gang's tally is imported or priced, against the gangs
already in the ledger and the other gangs of the same file; DOUBLE_ASSIGNMENT on both gangs. Pay is
unchanged (the flag is for the office's review). Through ``portgate production pay|import`` on a
real SQLite ledger and the bus ingest.

Gangs (port time, America/Sao_Paulo): G1 on ship 9123456, 2026-03-10 07-13 (07:00-13:00); G2 on
ship 9300002, the same day 09-15 (09:00-15:00): they overlap 09:00-13:00, and E004 is in both.
G3 on ship 9300002, 13-19 (13:00-19:00): touches G1 at 13:00 only, half-open, no overlap.
"""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select

from app.cli import main
from central.db import make_engine
from central.production.schema import production_gangs, production_inputs
from tests.central.production.cli_files import pay, write

HEAD_GANG = "gang_id,registration,role,minutes_worked\n"
HEAD_TALLY = "gang_id,ship,date,period,cargo_class,quantity\n"
G1 = ("G1,E003,stevedore,300\nG1,E004,stevedore,300\n", "G1,9123456,2026-03-10,07-13,general,40\n")
G2 = ("G2,E004,stevedore,240\nG2,E020,stevedore,240\n", "G2,9300002,2026-03-10,09-15,general,10\n")
G3 = ("G3,E004,stevedore,240\nG3,E021,stevedore,240\n", "G3,9300002,2026-03-10,13-19,general,10\n")
NOTE_G1 = "DOUBLE_ASSIGNMENT: E004 also in gang G2 on ship 9300002 (2026-03-10 09-15)"
NOTE_G2 = "DOUBLE_ASSIGNMENT: E004 also in gang G1 on ship 9123456 (2026-03-10 07-13)"


def _files(tmp_path, *gangs, sub="files"):
    where = tmp_path / sub
    where.mkdir(exist_ok=True)
    return write(where, gang=HEAD_GANG + "".join(g for g, _t in gangs),
                 tally=HEAD_TALLY + "".join(t for _g, t in gangs))


@pytest.fixture
def ledger(tmp_path, sqlite_ledger):
    url = sqlite_ledger(tmp_path / "ledger.db")
    return url


def _flags(doc, gang_id):
    return next(g["summary"]["flags"] for g in doc["gangs"] if g["summary"]["gang_id"] == gang_id)


def test_two_gangs_of_one_file_priced_without_a_ledger_are_both_flagged(tmp_path, capsys):
    doc = pay(capsys, _files(tmp_path, G1, G2, G3))
    assert _flags(doc, "G1") == [NOTE_G1]
    assert _flags(doc, "G2") == [NOTE_G2]
    assert _flags(doc, "G3") == []  # 13-19 after 07-13: no overlap
    # pay unchanged: G2 10 t × 4.50 = 45.00, 22.50 each; 240 min ≤ 240: half day 90.00, top-up 67.50
    g2 = next(g for g in doc["gangs"] if g["summary"]["gang_id"] == "G2")
    assert [m["total"] for m in g2["members"]] == ["90.00", "90.00"]


def test_a_gang_imported_earlier_and_a_new_gang_on_another_ship_are_both_flagged(tmp_path, ledger, capsys):
    assert main(["production", "import", *_files(tmp_path, G1, sub="day1"), "--db", ledger]) == 0
    capsys.readouterr()
    new = _files(tmp_path, G2, G3, sub="day2")
    # pay --ledger: read only, the new gang is flagged naming the one in the ledger
    doc = pay(capsys, new, "--ledger", ledger)
    assert _flags(doc, "G2") == [NOTE_G2.replace(")", ", in the ledger)")]
    assert _flags(doc, "G3") == []
    engine = make_engine(ledger)
    try:
        with engine.connect() as conn:
            assert conn.execute(select(production_inputs.c.note).where(production_inputs.c.kind == "flag")).all() == []
        # import: the new gang's flag and the earlier gang's, in the same transaction
        assert main(["production", "import", *new, "--db", ledger]) == 0
        g, i = production_gangs, production_inputs
        with engine.connect() as conn:
            stored = dict(conn.execute(select(g.c.gang_id, i.c.note).join(i, i.c.gang_row == g.c.id)
                                       .where(i.c.kind == "flag")).all())
    finally:
        engine.dispose()
    assert stored == {"G1": NOTE_G1, "G2": NOTE_G2.replace(")", ", in the ledger)")}


def test_a_bus_report_is_checked_against_the_gangs_in_the_ledger(tmp_path, ledger, capsys, stevedoring):
    from central.production.csvio import read_tariffs
    from central.production.ingest import ingest_report
    from wire.production import ProductionReport, ReportMember, ReportTally, encode

    assert main(["production", "import", *_files(tmp_path, G1), "--db", ledger]) == 0
    raw = encode(ProductionReport(
        message_id="m2", terminal_id="tecon", gang_id="G2", ship="9300002", date=dt.date(2026, 3, 10),
        period="09-15", members=[ReportMember("E004", "stevedore", "240"), ReportMember("E020", "stevedore", "240")],
        tally=[ReportTally("general", "10")]))
    engine = make_engine(ledger)
    try:
        result = ingest_report(raw, engine, stevedoring, read_tariffs(tmp_path / "files" / "tariffs.csv"),
                               received_at=dt.datetime(2026, 3, 11, tzinfo=dt.UTC))
        g, i = production_gangs, production_inputs
        with engine.connect() as conn:
            stored = conn.execute(select(g.c.gang_id, i.c.note).join(i, i.c.gang_row == g.c.id)
                                  .where(i.c.kind == "flag").order_by(i.c.id)).all()
    finally:
        engine.dispose()
    assert result.summary.flags == (NOTE_G2.replace(")", ", in the ledger)"),)
    assert [tuple(r) for r in stored] == [("G2", NOTE_G2.replace(")", ", in the ledger)")), ("G1", NOTE_G1)]


def test_a_watchmans_gangway_shift_overlapping_an_imported_gang_is_held_and_the_gang_noted(tmp_path, ledger, capsys):
    """E004 keeps the gangway of ship 9300002 as vigia 07-13 (admit 06:55, exit 13:05) and is in gang
    G1 on ship 9123456 07-13 the same day: both sides are flagged. The gang at its import names the
    gangway shift; the watchmen's pay run (``portgate pay --db``) holds the shift DOUBLE_ASSIGNMENT
    (a hold flag: not paid until reviewed) naming the gang. Another watchman's shift, not in a gang,
    is paid as before (P1 180.00)."""
    from zoneinfo import ZoneInfo

    from central.ledger.store import insert_events
    from tests.central.production.conftest import ROOT
    from testkit.shift_events import ShiftEvents, dispatch

    z = ZoneInfo("America/Sao_Paulo")
    g = ShiftEvents("g-9300002")
    d_e004 = dispatch(dt.date(2026, 3, 10), "07-13", "9300002", berth="berthed", function="vigia")
    d_w100 = dispatch(dt.date(2026, 3, 10), "07-13", "9300002", berth="berthed", function="vigia", post="popa")
    at = lambda h, m: dt.datetime(2026, 3, 10, h, m, tzinfo=z).astimezone(dt.UTC)  # noqa: E731
    engine = make_engine(ledger)
    with engine.begin() as conn:
        insert_events(conn, [g.admit("E004", at(6, 55), d_e004), g.admit("W100", at(6, 56), d_w100),
                             g.exit("E004", at(13, 5), d_e004), g.exit("W100", at(13, 6), d_w100)],
                      dt.datetime(2026, 3, 11, tzinfo=dt.UTC))
    engine.dispose()
    assert main(["production", "import", *_files(tmp_path, G1), "--db", ledger]) == 0
    capsys.readouterr()
    engine = make_engine(ledger)
    try:
        with engine.connect() as conn:
            notes = [n for (n,) in conn.execute(select(production_inputs.c.note)
                                                .where(production_inputs.c.kind == "flag"))]
    finally:
        engine.dispose()
    assert any(n.startswith("DOUBLE_ASSIGNMENT: E004 also aboard ship 9300002") for n in notes)
    code = main(["pay", "--db", ledger, "--from", "2026-03-10", "--to", "2026-03-10",
                 "--port-config", str(ROOT / "config" / "port.example.toml")])
    out = capsys.readouterr()
    assert code == 0, out.err
    rows = [__import__("json").loads(x) for x in out.out.splitlines()]
    held = [r for r in rows if r["registration"] == "E004"]
    assert [r["rule"] for r in held] == ["HELD"]
    assert held[0]["flags"] == ["DOUBLE_ASSIGNMENT: also in gang G1 on ship 9123456 (2026-03-10 07-13, R10)"]
    assert {r["rule"]: r["amount"] for r in rows if r["registration"] == "W100"}["P1"] == "180.00"


def test_a_statement_stored_before_the_gang_was_imported_is_put_on_hold_and_cannot_be_paid(tmp_path, ledger, capsys):
    """R10 after the fact (fresh tester): E004's gangway shift 07-13 is paid and stored (P1 180.00)
    before gang G1 with E004 on another ship the same period is imported. The next pay run holds
    the shift DOUBLE_ASSIGNMENT and stores a new version of its statement on hold (reason naming the
    gang), superseding the payable one; ``pay mark-paid`` then refuses it as on hold."""
    import json
    from zoneinfo import ZoneInfo

    from central.ledger.store import insert_events
    from central.ledger.tables import statements
    from tests.central.production.conftest import ROOT
    from testkit.shift_events import ShiftEvents, dispatch

    z = ZoneInfo("America/Sao_Paulo")
    g = ShiftEvents("g-9300002")
    d_e004 = dispatch(dt.date(2026, 3, 10), "07-13", "9300002", berth="berthed", function="vigia")
    at = lambda h, m: dt.datetime(2026, 3, 10, h, m, tzinfo=z).astimezone(dt.UTC)  # noqa: E731
    engine = make_engine(ledger)
    with engine.begin() as conn:
        insert_events(conn, [g.admit("E004", at(6, 55), d_e004), g.exit("E004", at(13, 5), d_e004)],
                      dt.datetime(2026, 3, 11, tzinfo=dt.UTC))
    engine.dispose()
    pay = ["pay", "--db", ledger, "--from", "2026-03-10", "--to", "2026-03-10",
           "--port-config", str(ROOT / "config" / "port.example.toml")]
    assert main(pay) == 0
    first = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert {r["rule"]: r["amount"] for r in first if r["registration"] == "E004"}["P1"] == "180.00"
    assert main(["production", "import", *_files(tmp_path, G1), "--db", ledger]) == 0
    capsys.readouterr()
    assert main(pay) == 0
    capsys.readouterr()
    engine = make_engine(ledger)
    try:
        with engine.connect() as conn:
            rows = conn.execute(select(statements.c.statement_id, statements.c.hold_reason, statements.c.superseded_at)
                                .where(statements.c.registration == "E004")).all()
    finally:
        engine.dispose()
    current = [r for r in rows if r.superseded_at is None]
    assert len(rows) == 2 and len(current) == 1
    assert current[0].hold_reason.startswith("DOUBLE_ASSIGNMENT: also in gang G1 on ship 9123456")
    code = main(["pay", "mark-paid", "--db", ledger, "--at", "2026-03-12T12:00:00-03:00", "--ref", "T",
                 current[0].statement_id])
    assert code != 0 and "on hold" in capsys.readouterr().err
