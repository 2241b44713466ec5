"""A refusal read through the real ``portgate`` entry point is one language, the command line's
(docs/i18n.md "The command line"): Python's csv module's field limit (``csv.Error``: "field larger
than field limit") and a ship call's time that is not ISO 8601, in pt-BR by default, English with
``PORTGATE_LANG=en``."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.cli import main
from portgate.tables import FIELD_LIMIT

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "config" / "demo"


def _refusal(capsys, code: int) -> str:
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err, err
    return err.strip().splitlines()[-1]


@pytest.mark.parametrize("lang, want", [
    ("pt", f"portgate: workers.csv:2: não é um arquivo CSV válido: um campo tem mais de {FIELD_LIMIT} caracteres"),
    ("en", f"portgate: workers.csv:2: not a valid CSV file: a field is longer than {FIELD_LIMIT} characters"),
])
def test_a_csv_field_over_the_csv_modules_limit_is_refused_in_the_command_lines_language(
        tmp_path, monkeypatch, capsys, lang, want):
    lines = (DEMO / "workers.csv").read_text(encoding="utf-8").splitlines()
    header = lines[0].split(",")
    row = lines[1].split(",")
    row[header.index("name")] = "A" * (FIELD_LIMIT + 1)
    workers = tmp_path / "workers.csv"
    workers.write_text(lines[0] + "\n" + ",".join(row) + "\n", encoding="utf-8")
    monkeypatch.setenv("PORTGATE_LANG", lang)
    code = main(["registry", "import", "--db", f"sqlite:///{tmp_path / 'reg.db'}", "--workers", str(workers)])
    assert _refusal(capsys, code) == want


@pytest.fixture
def office(tmp_path, capsys) -> str:
    cfg = tmp_path / "central.toml"
    cfg.write_text(f'database_url = "sqlite:///{tmp_path / "ledger.db"}"\nport = "santos"\n'
                   f'keys_dir = "{tmp_path / "keys"}"\n')
    assert main(["ledger", "migrate", "--config", str(cfg)]) == 0
    capsys.readouterr()
    return str(cfg)


@pytest.mark.parametrize("lang, want", [
    ("pt", "portgate: ships.csv:2: chegada: '15/03/2026 06:00' não é uma data e hora ISO 8601 com fuso "
           "(AAAA-MM-DDThh:mm±hh:mm); saída: '2026-03-16T06:00' não tem fuso horário (±hh:mm no fim, como -03:00)"),
    ("en", "portgate: ships.csv:2: arrival: time '15/03/2026 06:00' is not an ISO 8601 timestamp; "
           "departure: time '2026-03-16T06:00' has no UTC offset"),
])
def test_a_ship_calls_time_not_iso_8601_is_refused_in_one_language(tmp_path, monkeypatch, capsys, office, lang, want):
    """The fresh tester's ``office import-ships``: "chegada: time '...' não é um instante ISO 8601"."""
    ships = tmp_path / "ships.csv"
    ships.write_text("ship,ship_name,voyage,berth,gate_id,arrival,departure\n"
                     "9300001,Aurora,long_haul,berthed,g1,15/03/2026 06:00,2026-03-16T06:00\n", encoding="utf-8")
    monkeypatch.setenv("PORTGATE_LANG", lang)
    assert _refusal(capsys, main(["office", "import-ships", "--config", office, "--ships", str(ships)])) == want
