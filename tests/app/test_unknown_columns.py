"""A misspelt or unknown CSV header column is refused (FILE:1, naming it and the columns the file
takes) by every import built on the shared reader, through the real commands: nothing is read as
an absent optional column, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine, inspect, select

from app.cli import cli, main

# the office's clock for the rotation commands (--at): the evening before 2026-03-10, when none of
# its periods has ended (the machine's date is later: a past escala is refused)
AT = "2026-03-09T21:00:00+00:00"

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "config" / "demo"
PRODUCTION = ROOT / "config" / "examples" / "production"
RULES_DATA = ROOT / "tests" / "edge" / "rules" / "data"


def _renamed(src: Path, dst: Path, old: str, new: str) -> Path:
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
    header = lines[0].rstrip("\n").split(",")
    assert old in header, header
    lines[0] = ",".join(new if h == old else h for h in header) + "\n"
    dst.write_text("".join(lines), encoding="utf-8")
    return dst


def _refused(capsys, code, needle):
    err = capsys.readouterr().err
    assert code == 2, err
    assert needle in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err


def test_registry_import_refuses_a_misspelt_rotation_number_and_writes_nothing(tmp_path, capsys):
    bad = _renamed(DEMO / "workers.csv", tmp_path / "workers.csv", "rotation_number", "rotation_numbr")
    db = tmp_path / "reg.db"
    code = main(["registry", "import", "--db", f"sqlite:///{db}", "--workers", str(bad)])
    _refused(capsys, code, "workers.csv:1: unknown column(s) rotation_numbr (the file takes "
                           "registration, name, category, status, suspended_from, suspended_until, "
                           "health_exam_date, booklet_revalidated_year, rotation_number, cpf, pis, port)")
    engine = create_engine(f"sqlite:///{db}")
    if "workers" in inspect(engine).get_table_names():
        from central.registry.schema import workers
        with engine.connect() as conn:
            assert conn.execute(select(workers)).all() == []
    engine.dispose()


def test_production_pay_refuses_holds_for_holds_worked(tmp_path, capsys):
    gang = _renamed(PRODUCTION / "gang.csv", tmp_path / "gang.csv", "holds_worked", "holds")
    code = main(["production", "pay", "--rulebook", "dl-2032-1940", "--gang", str(gang),
                 "--tally", str(PRODUCTION / "tally.csv"), "--tariffs", str(PRODUCTION / "tariffs.csv")])
    _refused(capsys, code, "gang.csv:1: unknown column(s) holds (the file takes gang_id, registration, "
                           "role, holds_worked, boarded, minutes_worked, extra)")


def test_production_pay_reads_the_example_files_with_their_optional_columns(capsys):
    code = main(["production", "pay", "--rulebook", "dl-2032-1940", "--gang", str(PRODUCTION / "gang.csv"),
                 "--tally", str(PRODUCTION / "tally.csv"), "--tariffs", str(PRODUCTION / "tariffs.csv"),
                 "--interruptions", str(PRODUCTION / "interruptions.csv")])
    assert code == 0, capsys.readouterr().err


def test_replay_refuses_a_misspelt_direction_column(tmp_path):
    taps = tmp_path / "taps.csv"
    taps.write_text("at,gate_id,reader,uid,directon\n2026-03-10T07:00:00-03:00,GA,control,0A04A10001,in\n",
                    encoding="utf-8")
    result = CliRunner().invoke(cli, ["replay", "--workers", str(RULES_DATA / "workers.csv"),
                                      "--cards", str(RULES_DATA / "cards.csv"),
                                      "--escala", str(RULES_DATA / "escala.csv"), "--taps", str(taps)])
    assert result.exit_code == 2, result.output
    assert ("taps.csv:1: unknown column(s) directon (the file takes at, gate_id, reader, uid, "
            "uid_form, direction)") in result.output


def test_rotation_dispatch_refuses_a_misspelt_optional_column(tmp_path, capsys):
    req = tmp_path / "requisitions.csv"
    req.write_text("date,period,operator,ship,shipname,voyage,berth,gate_id,post,function,workers\n"
                   "2026-03-10,07-13,Op A,9123456,Aurora,long_haul,berthed,g1,portalo,vigia,1\n",
                   encoding="utf-8")
    db = tmp_path / "office.db"
    assert main(["registry", "import", "--db", f"sqlite:///{db}", "--workers", str(DEMO / "workers.csv")]) == 0
    capsys.readouterr()
    code = main(["rotation", "dispatch", "--at", AT, "--date", "2026-03-10", "--requisitions", str(req),
                 "--db", f"sqlite:///{db}"])
    _refused(capsys, code, "requisitions.csv:1: unknown column(s) shipname (the file takes ref, date")


def test_pay_refuses_an_unknown_column_in_shifts_csv(tmp_path, capsys):
    shifts = _renamed(DEMO / "shifts.csv", tmp_path / "shifts.csv", "meal_worked", "meal")
    code = main(["pay", "--shifts", str(shifts)])
    err = capsys.readouterr().err
    assert code == 2 and "shifts.csv:1: header lacks column(s) meal_worked" in err, err
    text = (DEMO / "shifts.csv").read_text(encoding="utf-8").splitlines()
    shifts.write_text("\n".join([text[0] + ",note"] + [line + ",x" for line in text[1:]]) + "\n",
                      encoding="utf-8")
    code = main(["pay", "--shifts", str(shifts)])
    _refused(capsys, code, "shifts.csv:1: unknown column(s) note (the file takes registration")
