"""The ``portgate production`` commands and the ledger import on a real SQLite file: all or nothing."""

import csv
import datetime as dt
import io
import json
import shutil
import sqlite3

import pytest
from sqlalchemy import select

from central.db import make_engine
from central.production.csvio import read_gang_work, read_tariffs
from central.production.engine import pay_gangs
from central.production.rulebook import find_rulebook
from central.production.schema import production_lines, production_members
from central.production.store import count_rows, ensure_tables, import_results, stored_gangs
from app.cli import main
from portgate.errors import BadInput, PortgateError
from testkit.cli import run_here
from tests.central.production.conftest import EXAMPLES

NOW = dt.datetime(2026, 3, 10, 20, 0, tzinfo=dt.UTC)


@pytest.fixture
def files(tmp_path):
    for name in ("gang.csv", "tally.csv", "tariffs.csv", "interruptions.csv"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    return tmp_path


@pytest.fixture
def db(tmp_path):
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    engine = make_engine(url)
    ensure_tables(engine)
    yield url, engine
    engine.dispose()


def args(files, *extra):
    return ["--rulebook", "dl-2032-1940", "--gang", str(files / "gang.csv"), "--tally", str(files / "tally.csv"),
            "--tariffs", str(files / "tariffs.csv"), "--interruptions", str(files / "interruptions.csv"), *extra]


def compute(files, rulebook="dl-2032-1940"):
    works = read_gang_work(files / "gang.csv", files / "tally.csv", files / "interruptions.csv")
    return works, pay_gangs(works, find_rulebook(rulebook), read_tariffs(files / "tariffs.csv"))


def test_pay_prints_member_lines_summary_and_billing_as_json(files, capsys):
    assert main(["production", "pay", *args(files)]) == 0
    doc = json.loads(capsys.readouterr().out)
    t1 = doc["gangs"][0]
    # hand: 120.5 t × 3.20 = 385.60 ; 8 × 25.00 = 200.00 ; 6.5 quotas (GF on 4 holds capped at 3)
    assert t1["summary"]["labour_amount"] == "585.60"
    assert t1["summary"]["total_quotas"] == "6.5"
    assert t1["summary"]["absent"] == ["E005"]
    gf = t1["members"][0]
    assert (gf["registration"], gf["quotas"]) == ("E001", "3")
    # 270.28 share + rain 40 min 7.50 + tide 121 min 22.69 = 300.47
    assert [x["amount"] for x in gf["lines"]] == ["270.28", "7.50", "22.69"]
    assert gf["total"] == gf["payable"] == "300.47" and gf["due_at"] == "2026-03-11T16:00:00+00:00"
    assert t1["billing"] == [] and t1["billing_total"] == "0.00"


def test_pay_prints_csv_with_billing_lines_under_the_dock_rulebook(files, capsys):
    (files / "gang.csv").write_text("gang_id,registration,role,holds_worked,boarded,minutes_worked\n"
                                    "T1,D1,worker,,yes,300\nT1,D2,foreman,,yes,300\n", encoding="utf-8")
    (files / "tally.csv").write_text("gang_id,ship,date,period,cargo_class,quantity\n"
                                     "T1,9123456,2026-03-10,07-13,general,100\n", encoding="utf-8")
    (files / "interruptions.csv").write_text("gang_id,kind,minutes\nT1,rain,30\n", encoding="utf-8")
    argv = args(files, "--format", "csv")
    argv[1] = "dl-3844-1941"
    assert main(["production", "pay", *argv]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[0] == "gang_id,section,registration,rule,article,description,amount"
    billing = [r for r in rows if ",billing," in r]
    # rain 30 min: 22.50 × 0.5 × 0.5 = 5.625 → 5.63 each, 11.26 ; 10% → 1.126 → 1.13
    assert [r.rsplit(",", 1)[1] for r in billing] == ["11.26", "1.13"]


@pytest.mark.parametrize("lang,summary,totals", [
    ("pt-BR", "mão de obra; 6,5 cotas; valor da cota 90,092; toneladas 120,5",
     ["total", "em disputa (depositado)", "a pagar até 11/03/2026 13:00"]),  # 13:00 port time (16:00 UTC)
    ("en", "labour amount; 6.5 quotas; quota value 90.092; tonnes 120.5",
     ["total", "disputed (deposited)", "payable by 2026-03-11 13:00"]),
])
def test_the_csv_s_summary_and_total_rows_are_in_the_run_s_language(files, capsys, lang, summary, totals):
    assert main(["production", "pay", *args(files, "--format", "csv", "--lang", lang)]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert [r[5] for r in rows if r[1] == "summary"][0].startswith(summary)
    described = [r[5] for r in rows if r[1] == "total"][:3]
    assert described[:2] == totals[:2] and described[2].startswith(totals[2])


@pytest.mark.parametrize("top, env, own, summary", [
    ([], "pt", [], "mão de obra; 6,5 cotas"),  # no --lang anywhere: pt-BR
    ([], "en", [], "labour amount; 6.5 quotas"),  # PORTGATE_LANG=en, as every other command
    (["--lang", "en"], "pt", [], "labour amount; 6.5 quotas"),  # portgate --lang en production pay
    (["--lang", "pt"], "en", [], "mão de obra; 6,5 cotas"),
    (["--lang", "en"], "en", ["--lang", "pt-BR"], "mão de obra; 6,5 cotas"),  # its own --lang wins
], ids=["default", "PORTGATE_LANG", "top-level-en", "top-level-pt", "own-lang-wins"])
def test_production_s_lang_follows_the_command_line_s_language(files, top, env, own, summary):
    """``production``'s ``--lang`` defaulted to pt-BR whatever ``portgate --lang`` or ``PORTGATE_LANG``
    said (the other commands follow them): its default is now the command line's language."""
    done = run_here([*top, "production", "pay", *args(files, "--format", "csv", *own)], env={"PORTGATE_LANG": env})
    assert done.returncode == 0, done.stderr
    rows = list(csv.reader(io.StringIO(done.stdout)))
    assert [r[5] for r in rows if r[1] == "summary"][0].startswith(summary), done.stdout


def test_pay_with_bad_input_exits_2_and_names_the_row(files, capsys):
    (files / "tally.csv").write_text("gang_id,ship,date,period,cargo_class,quantity\n"
                                     "T1,9123456,2026-03-10,07-13,bagged,-3\n", encoding="utf-8")
    assert main(["production", "pay", *args(files)]) == 2
    assert "tally.csv:2: quantity '-3' must not be negative" in capsys.readouterr().err


def test_import_stores_every_gang_in_the_ledger(files, db, capsys):
    url, engine = db
    assert main(["production", "import", "--db", url, *args(files)]) == 0
    assert "imported 2 gang(s): T1, T2" in capsys.readouterr().out
    assert stored_gangs(engine) == [("T1", dt.date(2026, 3, 10)), ("T2", dt.date(2026, 3, 10))]
    with engine.connect() as conn:
        e001 = conn.execute(select(production_lines.c.rule, production_lines.c.amount_cents)
                            .where(production_lines.c.registration == "E001").order_by(production_lines.c.seq)).all()
        absent = conn.execute(select(production_members.c.boarded)
                              .where(production_members.c.registration == "E005")).scalar_one()
    assert e001 == [("E2", 27028), ("E4", 750), ("E4", 2269)]
    assert absent == "no"


def test_import_with_a_bad_row_writes_nothing(files, db, capsys):
    url, engine = db
    with open(files / "tally.csv", "a", encoding="utf-8") as fh:
        fh.write("T2,9123456,2026-03-10,13-19,bananas,1\n")
    assert main(["production", "import", "--db", url, *args(files)]) == 2
    assert "tally.csv:5: cargo class 'bananas'" in capsys.readouterr().err
    assert set(count_rows(engine).values()) == {0}


def test_import_of_a_gang_already_imported_writes_nothing_of_the_batch(files, db):
    _url, engine = db
    works, results = compute(files)
    import_results(engine, [(works[1], results[1])], imported_at=NOW)  # T2 alone
    before = count_rows(engine)
    with pytest.raises(BadInput, match="gang T2 of 2026-03-10 is already imported"):
        import_results(engine, list(zip(works, results)), imported_at=NOW)  # T1 then T2 again
    assert count_rows(engine) == before
    assert stored_gangs(engine) == [("T2", dt.date(2026, 3, 10))]


def test_a_database_failure_half_way_rolls_the_whole_batch_back(files, db, tmp_path):
    # a real SQLite trigger aborts the insert of the last gang's members, after T1 was written
    _url, engine = db
    con = sqlite3.connect(tmp_path / "ledger.db")
    con.execute("CREATE TRIGGER boom BEFORE INSERT ON production_members WHEN NEW.registration = 'E011' "
                "BEGIN SELECT RAISE(ABORT, 'disk on fire'); END")
    con.commit()
    con.close()
    works, results = compute(files)
    with pytest.raises(PortgateError, match="nothing written"):
        import_results(engine, list(zip(works, results)), imported_at=NOW)
    assert set(count_rows(engine).values()) == {0}


def test_topup_reads_the_month_from_the_ledger(files, db, capsys):
    url, engine = db
    (files / "gang.csv").write_text("gang_id,registration,role,holds_worked,boarded,minutes_worked\n"
                                    "T1,D1,worker,,yes,300\nT2,D1,worker,,yes,300\n", encoding="utf-8")
    (files / "tally.csv").write_text("gang_id,ship,date,period,cargo_class,quantity\n"
                                     "T1,9123456,2026-03-10,07-13,general,100\n"
                                     "T2,9123456,2026-03-11,07-13,general,100\n", encoding="utf-8")
    (files / "interruptions.csv").write_text("gang_id,kind,minutes\n", encoding="utf-8")
    argv = args(files)
    argv[1] = "dl-3844-1941"
    assert main(["production", "import", "--db", url, *argv]) == 0
    (files / "minimums.csv").write_text("registration,monthly_minimum\nD1,1000.00\nD2,50.00\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["production", "topup", "--db", url, "--rulebook", "dl-3844-1941", "--month", "2026-03",
                 "--minimums", str(files / "minimums.csv")]) == 0
    out = capsys.readouterr().out.splitlines()
    # D1 earned 2 × (100 t × 4.50 = 450.00) = 900.00 → top-up 100.00 ; D2 earned nothing → 50.00
    assert out[1].startswith("D1,C6,") and out[1].endswith(",100.00")
    assert out[2].startswith("D2,C6,") and out[2].endswith(",50.00")


@pytest.mark.parametrize("lang,line", [("pt-BR", "containers: 8 unid. × R$ 25.00"),
                                       ("en", "containers: 8 unit(s) × R$ 25.00")])
def test_a_labour_line_per_unit_names_the_unit_in_the_run_s_language(files, capsys, lang, line):
    assert main(["production", "pay", *args(files, "--format", "csv", "--lang", lang)]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert line in [r[5] for r in rows if r[1] == "labour"]
