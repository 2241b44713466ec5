"""Through the real commands and the ledger: P6 meal worked recorded by the office (``portgate
ledger correct-meal``, audit log) and paid after a rebuild; P8 transport of a watchman to an
anchored ship and E7 stevedores' travel wages + transport on the shipowner's billing statement
(``portgate pay billing``). Figures by hand (RULES.md example 2, SD = R$ 180.00)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select

from app.cli import main
from central.db import make_engine
from central.ledger.migrate import upgrade
from central.ledger.store import insert_events
from central.registry.schema import audit_log
from testkit.shift_events import ShiftEvents, dispatch

Z = ZoneInfo("America/Sao_Paulo")
ROOT = Path(__file__).resolve().parents[3]
CHIEF = "101/9300002/2026-03-15/19-01"


@pytest.fixture
def db_url(migrated_url):
    """This module's ledgers start migrated: each test gets a copy of the session's migrated ledger
    (``migrated_url``, tests/central/conftest.py) on SQLite and on PostgreSQL instead of running the
    migrations itself (they have their own tests: tests/central/ledger/test_migrations.py)."""
    return migrated_url


def _port(tmp_path: Path, fare: str) -> Path:
    book = (ROOT / "config/rulebooks/decreto-83611-1979.toml").read_text(encoding="utf-8")
    book = book.replace('# anchorage_transport_fare = "45.00"', f'anchorage_transport_fare = "{fare}"')
    (tmp_path / "rulebook.toml").write_text(book, encoding="utf-8")
    port = (ROOT / "config/port.example.toml").read_text(encoding="utf-8")
    port = port.replace('rulebook = "rulebooks/decreto-83611-1979.toml"', 'rulebook = "rulebook.toml"')
    (tmp_path / "port.toml").write_text(port, encoding="utf-8")
    return tmp_path / "port.toml"


def _events(db_url: str) -> None:
    upgrade(db_url)
    a, b = ShiftEvents("g1"), ShiftEvents("g2")
    d1 = dispatch(dt.date(2026, 3, 10), "07-13", "9300001", berth="berthed", function="vigia")
    d2 = dispatch(dt.date(2026, 3, 15), "19-01", "9300002", berth="anchored", function="vigia_chefe")
    built = [
        a.tap("admit", "100", dt.datetime(2026, 3, 10, 6, 55, tzinfo=Z).astimezone(dt.UTC), d1),
        a.tap("exit", "100", dt.datetime(2026, 3, 10, 13, 5, tzinfo=Z).astimezone(dt.UTC), d1),
        b.tap("admit", "101", dt.datetime(2026, 3, 15, 18, 58, tzinfo=Z).astimezone(dt.UTC), d2),
        b.tap("exit", "101", dt.datetime(2026, 3, 16, 2, 30, tzinfo=Z).astimezone(dt.UTC), d2),
    ]
    engine = make_engine(db_url)
    with engine.begin() as conn:
        insert_events(conn, built, dt.datetime(2026, 4, 1, tzinfo=dt.UTC))
    engine.dispose()


def _pay(capsys, db_url, port) -> dict[str, dict[str, str]]:
    code = main(["pay", "--db", db_url, "--from", "2026-03-01", "--to", "2026-03-31", "--port-config", str(port)])
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert code == 0
    out: dict[str, dict[str, str]] = {}
    for r in rows:
        out.setdefault(r["shift_id"], {})[r["rule"]] = r["amount"]
    return out


def test_office_meal_correction_is_paid_after_rebuild_with_audit(db_url, tmp_path, capsys):
    _events(db_url)
    port = _port(tmp_path, "0.00")
    before = _pay(capsys, db_url, port)
    assert before[CHIEF]["TOTAL"] == "696.60" and "P6" not in before[CHIEF]
    code = main(["ledger", "correct-meal", "--db", db_url, "--shift", CHIEF, "--actor", "chefe.silva",
                 "--reason", "ficou no posto durante a refeição a pedido do comandante"])
    assert code == 0 and "recorded" in capsys.readouterr().out
    after = _pay(capsys, db_url, port)
    # P6 = SDe 270.00; P7 = 0.20 × (270.00 + 108.00 + 67.50 + 135.00 + 270.00 = 850.50) = 170.10
    assert after[CHIEF]["P6"] == "270.00" and after[CHIEF]["P7"] == "170.10"
    assert after[CHIEF]["TOTAL"] == "1020.60"
    assert after["100/9300001/2026-03-10/07-13"]["TOTAL"] == "180.00"  # untouched
    code = main(["ledger", "shifts", "--db", db_url, "--from", "2026-03-15", "--to", "2026-03-15"])
    listed = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [f["flag"] for f in listed[0]["flags"]] == ["MEAL_CORRECTED"]
    assert "chefe.silva" in listed[0]["flags"][0]["detail"]
    engine = make_engine(db_url)
    with engine.connect() as conn:
        rows = conn.execute(select(audit_log.c.actor, audit_log.c.action, audit_log.c.subject)).all()
    engine.dispose()
    assert ("chefe.silva", "ledger.correct-meal", CHIEF) in [tuple(r) for r in rows]
    # withdrawing it takes P6 away again
    assert main(["ledger", "correct-meal", "--db", db_url, "--shift", CHIEF, "--actor", "escritorio",
                 "--reason", "lançado por engano", "--not-worked"]) == 0
    capsys.readouterr()
    assert _pay(capsys, db_url, port)[CHIEF]["TOTAL"] == "696.60"


def test_meal_correction_refusals_exit_2(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'l.db'}"
    _events(url)
    code = main(["ledger", "correct-meal", "--db", url, "--shift", "9/9/2026-01-01/07-13",
                 "--actor", "x", "--reason", "y"])
    assert code == 2 and "no shift '9/9/2026-01-01/07-13' in the ledger" in capsys.readouterr().err
    code = main(["ledger", "correct-meal", "--db", url, "--shift", CHIEF, "--actor", "x", "--reason", " "])
    assert code == 2 and "reason is required" in capsys.readouterr().err


def _production_files(tmp_path: Path) -> list[str]:
    (tmp_path / "gang.csv").write_text("gang_id,registration,role,minutes_worked\nT9,S1,stevedore,300\n"
                                       "T9,S2,stevedore,300\n", encoding="utf-8")
    (tmp_path / "tally.csv").write_text("gang_id,ship,date,period,cargo_class,quantity\n"
                                        "T9,9300002,2026-03-15,07-13,general,100\n", encoding="utf-8")
    (tmp_path / "tariffs.csv").write_text("cargo_class,unit,labour_tariff,effective_from\n"
                                          "general,t,4.50,2026-01-01\n", encoding="utf-8")
    (tmp_path / "interruptions.csv").write_text("gang_id,kind,minutes,transport\n"
                                                "T9,anchorage_travel,50,120.00\n", encoding="utf-8")
    return ["--rulebook", "dl-2032-1940", "--gang", str(tmp_path / "gang.csv"), "--tally",
            str(tmp_path / "tally.csv"), "--tariffs", str(tmp_path / "tariffs.csv"),
            "--interruptions", str(tmp_path / "interruptions.csv")]


def test_billing_statement_per_shipowner_p8_and_e7(db_url, tmp_path, capsys):
    _events(db_url)
    port = _port(tmp_path, "45.00")
    _pay(capsys, db_url, port)
    assert main(["production", "import", "--db", db_url, *_production_files(tmp_path)]) == 0
    capsys.readouterr()
    (tmp_path / "owners.csv").write_text("ship,shipowner\n9300002,Armadora Atlântica S.A.\n", encoding="utf-8")
    code = main(["pay", "billing", "--db", db_url, "--from", "2026-03-01", "--to", "2026-03-31",
                 "--shipowners", str(tmp_path / "owners.csv"), "--port-config", str(port)])
    found = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert code == 0 and [s["shipowner"] for s in found] == ["Armadora Atlântica S.A."]
    lines = [(x["rule"], x["article"], x["ref"], x["amount"]) for x in found[0]["lines"]]
    # E7: travel 50 min, 180 × 50 ÷ 480 = 18.75 per stevedore, 2 → 37.50, transport 120.00;
    # P8: the chief watchman's round trip at the fare, 45.00. Total 202.50.
    assert lines == [("P8", "83.611 art. 27 parágrafo único", CHIEF, "45.00"),
                     ("E7", "DL 2.032 art. 16", "T9 07-13", "37.50"),
                     ("E7", "DL 2.032 art. 16", "T9 07-13", "120.00")]
    assert found[0]["total"] == "202.50"
    # the berthed shift of 9300001 bills nothing; a period without lines prints nothing
    code = main(["pay", "billing", "--db", db_url, "--from", "2026-03-10", "--to", "2026-03-10",
                 "--format", "csv", "--port-config", str(port)])
    assert code == 0 and capsys.readouterr().out.splitlines() == [
        "shipowner,work_day,ship,ref,rule,article,description,amount"]


def test_billing_bad_shipowners_file_names_the_row(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'l.db'}"
    _events(url)
    (tmp_path / "owners.csv").write_text("ship,shipowner\n9300002,A\n9300002,B\n,C\n", encoding="utf-8")
    code = main(["pay", "billing", "--db", url, "--from", "2026-03-01", "--to", "2026-03-31",
                 "--shipowners", str(tmp_path / "owners.csv")])
    err = capsys.readouterr().err
    assert code == 2 and "owners.csv:3: ship 9300002 is listed twice" in err and "owners.csv:4:" in err
