"""The rotation against SQLite through the commands: dispatch, publish, export (R5), refusals (R3),
late substitutions, fairness."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from central.registry.api import changes_since
from central.rotation.service import escala_snapshot
from central.registry.schema import penalties
from central.rotation.requisitions import load_requisitions
from central.rotation.schema import refusals
from app.cli import main
from portgate.errors import BadInput
from portgate.records import EscalaEntry, load_csv
from tests.central.registry.conftest import (
    DAY,
    REQ_COLUMNS,
    WORKER_COLUMNS,
    req_row,
    worker_rows,
    write_csv,
)

# the office's clock for the rotation commands (--at): the evening before 2026-03-10, when none of
# its periods has ended (the machine's date is later: a past escala is refused)
AT = "2026-03-09T21:00:00+00:00"


@pytest.fixture
def office(db_url, tmp_path):
    w = write_csv(tmp_path / "workers.csv", WORKER_COLUMNS, worker_rows(6))
    assert main(["registry", "import", "--db", db_url, "--actor", "ana", "--workers", str(w)]) == 0
    return db_url


def dispatch(db_url, tmp_path, rows, capsys, date="2026-03-10"):
    path = write_csv(tmp_path / "req.csv", REQ_COLUMNS, rows)
    capsys.readouterr()
    assert main(["rotation", "dispatch", "--at", AT, "--date", date, "--requisitions", str(path), "--db",
                 db_url, "--actor", "disp"]) == 0
    return json.loads(capsys.readouterr().out)


def entries(db_url, capsys, date="2026-03-10"):
    capsys.readouterr()
    assert main(["rotation", "list", "--date", date, "--db", db_url, "--actor", "x"]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_the_same_requisitions_file_dispatched_twice_is_refused_with_nobody_extra(
        office, tmp_path, capsys):
    rows = [req_row("A1", workers="2")]
    assert dispatch(office, tmp_path, rows, capsys)["dispatched"] == 2
    path = write_csv(tmp_path / "req.csv", REQ_COLUMNS, rows)
    args = ["rotation", "dispatch", "--at", AT, "--date", "2026-03-10", "--requisitions", str(path), "--db",
            office, "--actor", "disp"]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "already registered as requisition" in err
    write_csv(tmp_path / "req.csv", REQ_COLUMNS, [req_row("A1", workers="3")])
    assert main(args) == 2 and "changed head count (3)" in capsys.readouterr().err
    write_csv(tmp_path / "req.csv", REQ_COLUMNS, [req_row("B1", post="proa"), req_row("B2", post="proa")])
    assert main(args) == 2 and "repeats requisition" in capsys.readouterr().err
    assert len(entries(office, capsys)) == 2


def test_dispatch_stores_the_escala_and_publishes_each_entry(office, tmp_path, capsys, engine):
    out = dispatch(office, tmp_path, [
        req_row("A1", workers="2"),
        req_row("B1", ship="9000001", operator="Op B", gate_id="g2", post="proa", workers="1"),
        req_row("B2", ship="9000001", operator="Op B", gate_id="g2", period="13-19", workers="5")],
        capsys)
    assert out["dispatched"] == 6 and out["shortfalls"] == {"B2": 2}
    listed = entries(office, capsys)
    assert [(e["registration"], e["ship"]) for e in listed] == [
        ("V003", "9000001"), ("V001", "9123456"), ("V002", "9123456"), ("V004", "9000001"),
        ("V005", "9000001"), ("V006", "9000001")]
    with Session(engine) as s:
        version, snap = escala_snapshot(s, DAY)
        published = changes_since(s, "escala", 0)
    assert len(snap) == 6 and version == published[-1].version
    assert {(c.op, c.actor) for c in published} == {("upsert", "disp")}
    assert sorted(c.body["registration"] for c in published) == sorted(e["registration"] for e in listed)


def test_export_writes_escala_csv_per_operator_and_per_ship(office, tmp_path, capsys):
    dispatch(office, tmp_path, [req_row("A1", workers="2"),
                                req_row("B1", ship="9000001", operator="Op B", gate_id="g2")],
             capsys)
    out = tmp_path / "out"
    assert main(["rotation", "export", "--date", "2026-03-10", "--out", str(out), "--db", office,
                 "--actor", "x"]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == ["escala-2026-03-10-operator-Op_A.csv", "escala-2026-03-10-operator-Op_B.csv",
                     "escala-2026-03-10-ship-9000001.csv", "escala-2026-03-10-ship-9123456.csv"]
    op_a = load_csv(out / names[0], EscalaEntry)
    assert [e.registration for e in op_a] == ["V001", "V002"]


def test_refusal_without_health_proof_is_an_infraction_and_the_next_worker_is_dispatched(
        office, tmp_path, capsys, engine):
    dispatch(office, tmp_path, [req_row("A1")], capsys)
    [entry] = entries(office, capsys)
    assert main(["rotation", "refuse", "--at", AT, "--entry", str(entry["id"]), "--reason", "não quis",
                 "--db", office, "--actor", "disp"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["infraction"] is True
    [now_on] = entries(office, capsys)
    assert now_on["registration"] == "V002"
    with Session(engine) as s:
        [p] = s.execute(select(penalties)).all()
        assert (p.registration, p.rule, p.article) == ("V001", "R3", "83.611 art. 10 par. único")
        ops = [(c.op, c.body["registration"]) for c in changes_since(s, "escala", 0)]
    assert ops == [("upsert", "V001"), ("delete", "V001"), ("upsert", "V002")]
    # the refusal used V001's turn: the next day starts at V003
    dispatch(office, tmp_path, [req_row("A2", date="2026-03-11")], capsys, date="2026-03-11")
    assert [e["registration"] for e in entries(office, capsys, "2026-03-11")] == ["V003"]


def test_refusal_with_health_proof_is_no_infraction_and_keeps_the_place(office, tmp_path, capsys,
                                                                       engine):
    dispatch(office, tmp_path, [req_row("A1")], capsys)
    [entry] = entries(office, capsys)
    assert main(["rotation", "refuse", "--at", AT, "--entry", str(entry["id"]), "--reason", "gripe",
                 "--health-proof", "atestado 123", "--db", office, "--actor", "disp"]) == 0
    with Session(engine) as s:
        assert s.execute(select(penalties)).all() == []
        [r] = s.execute(select(refusals)).all()
        assert (r.infraction, r.health_proof) == (0, "atestado 123")
    dispatch(office, tmp_path, [req_row("A2", date="2026-03-11")], capsys, date="2026-03-11")
    assert [e["registration"] for e in entries(office, capsys, "2026-03-11")] == ["V001"]


def test_late_substitution_republishes_at_once_and_checks_a_named_substitute(office, tmp_path,
                                                                            capsys, engine):
    dispatch(office, tmp_path, [req_row("A1", workers="2")], capsys)
    first, second = entries(office, capsys)
    assert main(["rotation", "substitute", "--at", AT, "--entry", str(first["id"]), "--reason", "doente",
                 "--registration", "V002", "--db", office, "--actor", "disp"]) == 2
    assert "V002 is not eligible: R2 overlapping dispatch" in capsys.readouterr().err
    assert main(["rotation", "substitute", "--at", AT, "--entry", str(first["id"]), "--reason", "doente",
                 "--db", office, "--actor", "disp"]) == 0
    assert json.loads(capsys.readouterr().out)["new_entry"] is not None
    assert sorted(e["registration"] for e in entries(office, capsys)) == ["V002", "V003"]
    with Session(engine) as s:
        tail = [(c.op, c.body["registration"]) for c in changes_since(s, "escala", 0)][-2:]
    assert tail == [("delete", "V001"), ("upsert", "V003")]
    assert main(["rotation", "substitute", "--at", AT, "--entry", str(first["id"]), "--reason", "x",
                 "--db", office, "--actor", "disp"]) == 2
    assert "already removed" in capsys.readouterr().err


def test_requisitions_for_another_date_write_nothing(office, tmp_path, capsys):
    path = write_csv(tmp_path / "req.csv", REQ_COLUMNS, [req_row("A1", date="2026-03-11")])
    assert main(["rotation", "dispatch", "--at", AT, "--date", "2026-03-10", "--requisitions", str(path),
                 "--db", office, "--actor", "d"]) == 2
    assert "not for 2026-03-10: A1" in capsys.readouterr().err
    assert entries(office, capsys, "2026-03-11") == []


def test_bad_requisition_rows_are_named_by_line(tmp_path):
    rows = [req_row("A1"), req_row("A2", workers="0"), req_row("A3", voyage="ferry"),
            req_row("A4", period="7-25"), req_row("A5", workers="99999999999")]
    path = write_csv(tmp_path / "requisitions.csv", REQ_COLUMNS, rows)
    with pytest.raises(BadInput) as err:
        load_requisitions(path)
    text = str(err.value)
    assert "requisitions.csv:3: workers must be between 1 and 200, not 0" in text
    assert "requisitions.csv:6: workers must be between 1 and 200, not 99999999999" in text
    assert "requisitions.csv:4: voyage 'ferry'" in text and "requisitions.csv:5: period" in text
    short = write_csv(tmp_path / "short.csv", ("date", "period"), [{"date": "2026-03-10",
                                                                     "period": "07-13"}])
    with pytest.raises(BadInput, match="header lacks column"):
        load_requisitions(short)


def test_default_ref_and_category_come_from_line_and_function(tmp_path):
    row = req_row("", function="vigia_chefe")
    [req] = load_requisitions(write_csv(tmp_path / "r.csv", REQ_COLUMNS, [row]))
    assert (req.ref, req.category) == ("r.csv:2", "vigia")


def test_a_repeated_requisition_is_named_with_the_other_bad_rows_in_one_pass(tmp_path):
    rows = [req_row("A1"), req_row("A2", voyage="ferry"), req_row("A3")]  # A3 repeats A1's key
    with pytest.raises(BadInput) as caught:
        load_requisitions(write_csv(tmp_path / "r.csv", REQ_COLUMNS, rows))
    assert str(caught.value).splitlines() == [
        "r.csv:3: voyage 'ferry' is not one of long_haul|cabotage",
        "r.csv:4: repeats requisition A1 (07-13/9123456/g1/portalo/vigia)"], str(caught.value)


def test_a_function_or_category_typed_with_blanks_or_capitals_is_the_listed_one(tmp_path):
    cols = (*REQ_COLUMNS, "category")
    rows = [req_row("A", function=" Vigia_Chefe ") | {"category": ""}, req_row("B") | {"category": " VIGIA "}]
    reqs = load_requisitions(write_csv(tmp_path / "r.csv", cols, rows))
    assert [(r.function, r.category) for r in reqs] == [("vigia_chefe", "vigia"), ("vigia", "vigia")]


def test_fairness_reports_shifts_per_worker_and_distance_from_25(office, tmp_path, capsys):
    dispatch(office, tmp_path, [req_row("A1", workers="4")], capsys)
    capsys.readouterr()
    assert main(["rotation", "fairness", "--month", "2026-03", "--db", office, "--actor", "x"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines[0] == {"registration": "V001", "shifts": 1, "distance_from_target": -24}
    assert lines[-1] == {"average": round(4 / 6, 2), "spread": 1, "fairest_spread": 1,
                         "target": 25}


@pytest.mark.parametrize("gate_id", ["g/aurora", "g+#", "", "a" * 65, "-g"])
def test_dispatch_refuses_a_gate_id_the_gate_refuses_and_stores_nothing(office, tmp_path, capsys, gate_id):
    path = write_csv(tmp_path / "req.csv", REQ_COLUMNS, [req_row("A1", gate_id=gate_id)])
    assert main(["rotation", "dispatch", "--at", AT, "--date", "2026-03-10", "--requisitions", str(path),
                 "--db", office, "--actor", "d"]) == 2
    err = capsys.readouterr().err
    assert "req.csv:2: gate_id" in err and len(err.strip().splitlines()) == 1, err
    assert entries(office, capsys, "2026-03-10") == []


@pytest.mark.parametrize("period", ["7-13", "07-1", "+7-13", "٠٧-١٣", "07 - 13", "0713"])
def test_a_period_is_two_digits_each_side(period):
    from portgate.records import parse_period
    with pytest.raises(BadInput, match="is not HH-HH"):
        parse_period(period)
    assert parse_period("07-13") == (7, 13) and parse_period("19-01") == (19, 1)
    assert parse_period("18-24") == (18, 24)
