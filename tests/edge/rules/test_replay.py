"""``portgate replay`` through the real CLI entry, shared and isolated gates, bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from app.cli import cli

DATA = Path(__file__).parent / "data"


def _run(taps: str | Path, *extra: str, data: Path = DATA):
    args = ["replay", "--workers", str(data / "workers.csv"), "--cards", str(data / "cards.csv"),
            "--escala", str(data / "escala.csv"), "--taps", str(taps), *extra]
    result = CliRunner().invoke(cli, args)
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    return result, lines


def test_shared_gates_deny_the_second_ship():
    result, lines = _run(DATA / "taps_two_gates.csv")
    assert result.exit_code == 0, result.output
    assert [(l["gate_id"], l["decision"], l["rules_failed"]) for l in lines] == [
        ("GA", "admit", []), ("GA", "debounced", []), ("GB", "deny", ["G5"]),
    ]
    assert lines[2]["flags"] == ["DOUBLE_ASSIGNMENT"] and lines[2]["registration"] == "1001"
    assert set(lines[0]) == {"at", "gate_id", "uid", "registration", "decision", "rules_failed",
                             "flags", "message"}


def test_isolated_gates_both_admit():
    result, lines = _run(DATA / "taps_two_gates.csv", "--isolated")
    assert result.exit_code == 0, result.output
    assert [l["decision"] for l in lines] == ["admit", "debounced", "admit"]


def test_a_day_at_one_gate_in_english():
    result, lines = _run(DATA / "taps_day.csv", "--lang", "en")
    assert result.exit_code == 0, result.output
    got = [(l["uid"], l["decision"], l["rules_failed"]) for l in lines]
    assert got == [
        ("AA000001", "admit", []),
        ("AA000001", "debounced", []),
        ("AA000003", "deny", ["G3", "G6"]),
        ("nonsense!", "deny", ["G1"]),
        ("AA000009", "deny", ["G2"]),  # the holder's old card: his shift stays open (G2)
        ("BB000001", "paired", []),
        ("AA000002", "deny", ["G4"]),
        ("AA000001", "exit", []),  # his own exit closes it
        ("CC000001", "inspector", []),
        ("AA000004", "deny", ["G3", "G6", "G10"]),
    ]
    assert lines[6]["message"] == ("DENIED — control card of registration 1002 with the badge of "
                                   "registration 1001. Call the inspector. [G4]")
    assert "ROTATION_JUMP" in lines[9]["flags"] and "CONFISCATE" in lines[9]["flags"]


def test_card_and_badge_rulebook_and_a_lone_badge(tmp_path):
    rulebook = tmp_path / "gate.toml"
    rulebook.write_text("[[version]]\neffective_from = 2026-01-01\n[version.g4]\ncard_and_badge_required = true\n")
    taps = tmp_path / "taps.csv"
    taps.write_text("at,gate_id,reader,uid\n"
                    "2026-04-10T06:50:00-03:00,GA,control,AA000001\n"
                    "2026-04-10T06:51:00-03:00,GA,badge,BB000001\n"
                    "2026-04-10T06:51:10-03:00,GA,control,AA000001\n"
                    "2026-04-10T12:59:00-03:00,GA,badge,BB000002\n")
    result, lines = _run(taps, "--rulebook", str(rulebook))
    assert result.exit_code == 0, result.output
    assert [(l["decision"], l["rules_failed"]) for l in lines] == [
        ("deny", ["G4"]), ("paired", []), ("admit", []), ("deny", ["G4"]),
    ]
    assert "Apresente a chapa." in lines[0]["message"]
    assert "Apresente o cartão de controle." in lines[3]["message"]


def test_G4_card_then_badge_in_either_order_and_a_borrowed_badge_after_the_card(tmp_path):
    rulebook = tmp_path / "gate.toml"
    rulebook.write_text("[[version]]\neffective_from = 2026-01-01\n[version.g4]\ncard_and_badge_required = true\n")
    taps = tmp_path / "taps.csv"
    taps.write_text("at,gate_id,reader,uid\n"
                    "2026-04-10T06:50:00-03:00,GA,control,AA000001\n"   # card, then own badge 5 s later
                    "2026-04-10T06:50:05-03:00,GA,badge,BB000001\n"
                    "2026-04-10T12:40:00-03:00,GA,control,AA000002\n"   # card, then 1001's badge
                    "2026-04-10T12:40:04-03:00,GA,badge,BB000001\n"
                    "2026-04-10T12:45:00-03:00,GA,control,AA000002\n")  # card alone: window passes
    result, lines = _run(taps, "--rulebook", str(rulebook))
    assert result.exit_code == 0, result.output
    assert [(l["uid"], l["decision"], l["rules_failed"], l["flags"]) for l in lines] == [
        ("BB000001", "paired", [], []), ("AA000001", "admit", [], []),
        ("BB000001", "paired", [], []), ("AA000002", "deny", ["G4"], ["BORROWED_CARD"]),
        ("AA000002", "deny", ["G4"], ["BADGE_MISSING"]),
    ]
    assert lines[1]["at"] == "2026-04-10T09:50:05+00:00"  # decided when the second read came
    assert "matrícula 1002 com chapa da matrícula 1001" in lines[3]["message"]
    assert "falta a chapa" in lines[4]["message"]


def test_bad_rows_are_named_and_exit_2_without_traceback(tmp_path):
    taps = tmp_path / "taps.csv"
    taps.write_text("at,gate_id,reader,uid\n"
                    "2026-04-10T06:50:00-03:00,GA,control,AA000001\n"
                    "2026-04-10T06:50:00,GA,control,AA000001\n"
                    "2026-04-10T06:51:00-03:00,GA,elbow,AA000001\n")
    result, lines = _run(taps)
    assert result.exit_code == 2 and lines == []
    assert "taps.csv:3: at '2026-04-10T06:50:00' has no UTC offset" in result.stderr
    assert "taps.csv:4: reader 'elbow'" in result.stderr
    assert "Traceback" not in result.output


def test_bad_roster_file_and_missing_file(tmp_path):
    workers = tmp_path / "workers.csv"
    workers.write_text((DATA / "workers.csv").read_text().replace("1002,Bruno Lima,vigia,active",
                                                                  "1002,Bruno Lima,vigia,sleeping"))
    for name in ("cards.csv", "escala.csv"):
        (tmp_path / name).write_text((DATA / name).read_text())
    result, _ = _run(DATA / "taps_day.csv", data=tmp_path)
    assert result.exit_code == 2 and "workers.csv:3: status 'sleeping'" in result.stderr
    result, _ = _run(tmp_path / "absent.csv")
    assert result.exit_code == 2 and "absent.csv: file not found" in result.stderr


def test_bad_rulebook_exits_2_naming_the_key(tmp_path):
    rulebook = tmp_path / "gate.toml"
    rulebook.write_text("[[version]]\neffective_from = 2026-01-01\n[version.g7]\nmode = 'maybe'\n")
    result, _ = _run(DATA / "taps_day.csv", "--rulebook", str(rulebook))
    assert result.exit_code == 2 and "$.version[0].g7.mode" in result.stderr


def test_console_script_streams_json_lines():
    exe = Path(sys.executable).with_name("portgate")
    out = subprocess.run(
        [str(exe), "replay", "--workers", str(DATA / "workers.csv"), "--cards", str(DATA / "cards.csv"),
         "--escala", str(DATA / "escala.csv"), "--taps", str(DATA / "taps_two_gates.csv")],
        capture_output=True, text=True, check=False,
    )
    assert out.returncode == 0, out.stderr
    assert [json.loads(l)["decision"] for l in out.stdout.splitlines()] == ["admit", "debounced", "deny"]


def test_replay_refuses_a_repeated_card_uid_or_registration_naming_file_and_line(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    for name in ("workers.csv", "cards.csv", "escala.csv"):
        (data / name).write_text((DATA / name).read_text())
    with (data / "cards.csv").open("a") as fh:
        fh.write("aa000001,control,1002,active\n")  # AA000001 in another case
    with (data / "workers.csv").open("a") as fh:
        fh.write("1001,Outra Ana,vigia,active,,,2025-06-01,,9\n")
    result, lines = _run(DATA / "taps_day.csv", data=data)
    assert result.exit_code == 2 and lines == []
    cards_line = len((data / "cards.csv").read_text().splitlines())
    workers_line = len((data / "workers.csv").read_text().splitlines())
    assert f"cards.csv:{cards_line}: uid AA000001 repeats line 2" in result.stderr
    assert f"workers.csv:{workers_line}: registration 1001 repeats line 2" in result.stderr


def test_replay_refuses_an_out_of_range_tap_time_naming_file_and_line(tmp_path):
    taps = tmp_path / "taps.csv"
    taps.write_text("at,gate_id,reader,uid\n"
                    "2026-04-10T06:50:00-03:00,GA,control,AA000001\n"
                    "0001-01-01T00:00:00+00:00,GA,control,AA000001\n"
                    "9999-12-31T23:59:59+00:00,GA,control,AA000001\n")
    result, lines = _run(taps)
    assert result.exit_code == 2 and lines == []
    assert "taps.csv:3: at 0001-01-01T00:00:00+00:00 is out of range" in result.stderr
    assert "taps.csv:4: at 9999-12-31T23:59:59+00:00 is out of range" in result.stderr
    assert "Traceback" not in result.output


def test_P6_meal_mode_in_a_replay(tmp_path):
    """The inspector's card twice (meal mode), then the worker aboard: ``aboard`` flagged
    MEAL_WORKED (83.611 art. 26 d); the session ends, the worker's next read is his exit."""
    taps = tmp_path / "taps.csv"
    taps.write_text("at,gate_id,reader,uid\n"
                    "2026-04-10T06:50:00-03:00,GA,control,AA000001\n"
                    "2026-04-10T10:00:00-03:00,GA,control,CC000001\n"
                    "2026-04-10T10:00:10-03:00,GA,control,CC000001\n"
                    "2026-04-10T10:00:20-03:00,GA,control,AA000001\n"
                    "2026-04-10T13:00:00-03:00,GA,control,AA000001\n")
    result, lines = _run(taps)
    assert result.exit_code == 0, result.output
    assert [(l["decision"], l["flags"]) for l in lines] == [
        ("admit", []), ("inspector", []), ("inspector", ["MEAL_MODE"]), ("aboard", ["MEAL_WORKED"]),
        ("exit", []),
    ]
    assert lines[3]["message"] == ("JÁ A BORDO — intervalo de refeição trabalhado registrado "
                                   "(período 07-13; 83.611 art. 26 d).")
