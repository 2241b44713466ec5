"""A wrong ledger path never becomes a stray new ledger, and a file that is not a ledger is one line.

``production import``/``topup`` read the ledger (a new, empty one would pay every worker the whole
monthly minimum), so a missing or 0-byte SQLite file is refused as by ``pay``; the commands that may
start a ledger in a missing file (``registry import``, ``office`` user and ship commands) still
refuse an existing 0-byte one (a failed copy, a wrong path); ``pay overdue``/``mark-paid``/``release``
on a file that is not a database say so in one line (exit 2), never a traceback. Real SQLite files
through the real ``portgate`` entry point (``app.cli.main``)."""

from __future__ import annotations

import shutil

import pytest

from app.cli import main
from tests.central.production.conftest import EXAMPLES
from tests.central.web.test_users_cli import _config

EMPTY = "is empty (0 bytes): a failed copy or a wrong path?"


def _production_args(tmp_path) -> list[str]:
    for name in ("gang.csv", "tally.csv", "tariffs.csv", "interruptions.csv"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    return ["--rulebook", "dl-2032-1940", "--gang", str(tmp_path / "gang.csv"), "--tally", str(tmp_path / "tally.csv"),
            "--tariffs", str(tmp_path / "tariffs.csv"), "--interruptions", str(tmp_path / "interruptions.csv")]


def _one_line(capsys) -> str:
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("state", ["missing", "empty"])
def test_production_import_and_topup_refuse_a_missing_or_empty_ledger_and_leave_it(tmp_path, capsys, state):
    path = tmp_path / "ledger.db"
    if state == "empty":
        path.write_bytes(b"")
    url = f"sqlite:///{path}"
    minimums = tmp_path / "minimums.csv"
    minimums.write_text("registration,monthly_minimum\nE001,1000\n", encoding="utf-8")
    assert main(["production", "import", "--db", url, *_production_args(tmp_path)]) == 2
    first = _one_line(capsys)
    assert main(["production", "topup", "--db", url, "--rulebook", "dl-3844-1941", "--month", "2026-03",
                 "--minimums", str(minimums)]) == 2
    second = _one_line(capsys)
    for line in (first, second):
        assert line.startswith("portgate: --db: SQLite file")
        assert (EMPTY if state == "empty" else "does not exist") in line
    assert (path.stat().st_size == 0) if state == "empty" else not path.exists()


def test_production_pay_with_a_missing_ledger_for_gate_minutes_is_refused(tmp_path, capsys):
    missing = tmp_path / "nope.db"
    assert main(["production", "pay", *_production_args(tmp_path), "--ledger", f"sqlite:///{missing}"]) == 2
    assert _one_line(capsys).startswith("portgate: --ledger: SQLite file") and not missing.exists()


def test_registry_import_refuses_an_empty_file_but_may_start_a_ledger_in_a_missing_one(tmp_path, capsys):
    workers = tmp_path / "workers.csv"
    shutil.copy(EXAMPLES.parents[1] / "demo" / "workers.csv", workers)
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    assert main(["registry", "import", "--db", f"sqlite:///{empty}", "--workers", str(workers)]) == 2
    assert EMPTY in _one_line(capsys) and empty.stat().st_size == 0
    fresh = tmp_path / "fresh.db"  # documented: import and register may start a registry
    assert main(["registry", "import", "--db", f"sqlite:///{fresh}", "--workers", str(workers)]) == 0
    assert fresh.stat().st_size > 0


def test_office_commands_refuse_an_empty_ledger_file(tmp_path, capsys):
    cfg = _config(tmp_path)
    ledger = tmp_path / "ledger.db"
    ledger.write_bytes(b"")
    ships = tmp_path / "ships.csv"
    ships.write_text("ship,ship_name,voyage,berth,gate_id,arrival,departure\n"
                     "9300001,Aurora,long_haul,berthed,g1,2026-03-15T06:00:00-03:00,\n", encoding="utf-8")
    assert main(["office", "import-ships", "--config", cfg, "--ships", str(ships)]) == 2
    line = _one_line(capsys)
    assert line.startswith("portgate: database_url: SQLite file") and EMPTY in line
    assert ledger.stat().st_size == 0


@pytest.mark.parametrize("command", [["pay", "overdue"], ["pay", "mark-paid", "S1"],
                                     ["pay", "release", "--note", "checked", "S1"]],
                         ids=["overdue", "mark-paid", "release"])
def test_pay_statement_commands_on_a_file_that_is_not_a_database_say_so_in_one_line(tmp_path, capsys, command):
    text = tmp_path / "text.db"
    text.write_text("hello world\n", encoding="utf-8")
    assert main([*command, "--db", f"sqlite:///{text}"]) == 2
    assert "is not a database (not a portgate ledger)" in _one_line(capsys)
    assert text.read_text(encoding="utf-8") == "hello world\n"
