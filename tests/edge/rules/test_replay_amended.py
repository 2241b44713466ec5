"""The amended G rules (G2, G3, G4, G6, G9, G12) through ``portgate replay`` (the real CLI entry)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from app.cli import cli

WORKERS = """registration,name,category,status,suspended_from,suspended_until,health_exam_date,booklet_revalidated_year,rotation_number
1001,Ana Souza,vigia,active,,,2025-06-01,,1
1002,Bruno Lima,vigia,active,,,2025-06-01,,2
1004,Davi Rocha,estivador,active,,,2025-06-01,2026,4
1005,Eva Reis,estivador,active,,,2025-03-01,2026,5
"""
CARDS = """uid,kind,registration,status
AA000001,control,1001,active
AA00FFD1,control,1001,lost
AA000002,control,1002,active
AA000004,control,1004,active
BB000004,badge,1004,active
AA000005,control,1005,active
BB000005,badge,1005,active
"""
ESCALA = """date,period,ship,ship_name,voyage,berth,gate_id,post,function,registration
2026-04-10,07-13,9074729,MSC ALFA,long_haul,berthed,GA,portalo,vigia,1001
2026-04-10,07-13,9074729,MSC ALFA,long_haul,berthed,GA,porao,vigia,1002
2026-04-10,07-13,9074729,MSC ALFA,long_haul,berthed,GA,vigia2,vigia,1004
2026-04-10,07-13,9074729,MSC ALFA,long_haul,berthed,GA,terno1,estivador,1005
"""


def _replay(tmp_path: Path, taps: str, *extra: str) -> list[dict]:
    for name, text in (("workers.csv", WORKERS), ("cards.csv", CARDS), ("escala.csv", ESCALA)):
        (tmp_path / name).write_text(text)
    (tmp_path / "taps.csv").write_text(taps)
    result = CliRunner().invoke(cli, [
        "replay", "--workers", str(tmp_path / "workers.csv"), "--cards", str(tmp_path / "cards.csv"),
        "--escala", str(tmp_path / "escala.csv"), "--taps", str(tmp_path / "taps.csv"), *extra])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def _got(lines: list[dict]) -> list[tuple]:
    return [(l["uid"], l["decision"], l["rules_failed"], l["flags"]) for l in lines]


def test_replay_g2_blocked_card_changes_nothing_about_who_is_aboard(tmp_path):
    lines = _replay(tmp_path, "at,gate_id,reader,uid\n"
                    "2026-04-10T06:50:00-03:00,GA,control,AA00FFD1\n"
                    "2026-04-10T06:55:00-03:00,GA,control,AA000001\n"
                    "2026-04-10T09:00:00-03:00,GA,control,AA00FFD1\n"
                    "2026-04-10T13:02:00-03:00,GA,control,AA000001\n"
                    "2026-04-10T13:30:00-03:00,GA,control,AA00FFD1\n")
    assert _got(lines) == [
        ("AA00FFD1", "deny", ["G2"], ["RETAIN_CARD"]),
        ("AA000001", "admit", [], []),
        ("AA00FFD1", "deny", ["G2"], ["RETAIN_CARD"]),   # the holder is aboard: no exit
        ("AA000001", "exit", [], []),                   # his real exit, with its entry
        # not aboard, past the late tolerance: still no exit recorded (G2 with G6 and G7 listed)
        ("AA00FFD1", "deny", ["G2", "G6", "G7"], ["RETAIN_CARD", "LATE_ARRIVAL"]),
    ]


def test_replay_g6_late_arrival_is_denied_and_only_an_exit_reader_records_no_entry(tmp_path):
    lines = _replay(tmp_path, "at,gate_id,reader,uid,direction\n"
                    "2026-04-10T08:30:00-03:00,GA,control,AA000001,\n"
                    "2026-04-10T08:31:00-03:00,GA,control,AA000001,in\n"
                    "2026-04-10T13:01:00-03:00,GA,control,AA000002,out\n")
    assert _got(lines) == [
        ("AA000001", "deny", ["G6"], ["LATE_ARRIVAL"]),
        ("AA000001", "deny", ["G6"], ["LATE_ARRIVAL"]),
        ("AA000002", "exit", ["G9"], ["NO_ENTRY"]),
    ]


def test_replay_a_bad_direction_is_named_with_its_line(tmp_path):
    for name, text in (("workers.csv", WORKERS), ("cards.csv", CARDS), ("escala.csv", ESCALA)):
        (tmp_path / name).write_text(text)
    (tmp_path / "taps.csv").write_text("at,gate_id,reader,uid,direction\n"
                                       "2026-04-10T08:30:00-03:00,GA,control,AA000001,up\n")
    result = CliRunner().invoke(cli, [
        "replay", "--workers", str(tmp_path / "workers.csv"), "--cards", str(tmp_path / "cards.csv"),
        "--escala", str(tmp_path / "escala.csv"), "--taps", str(tmp_path / "taps.csv")])
    assert result.exit_code == 2
    assert "taps.csv:2: direction 'up' is not one of in|out|both" in result.stderr


def test_replay_g9_a_card_left_on_the_reader_is_already_aboard_then_early_exit(tmp_path):
    lines = _replay(tmp_path, "at,gate_id,reader,uid\n"
                    "2026-04-10T06:55:00-03:00,GA,control,AA000001\n"
                    "2026-04-10T06:55:02-03:00,GA,control,AA000001\n"   # debounce
                    "2026-04-10T06:55:06-03:00,GA,control,AA000001\n"   # already aboard
                    "2026-04-10T06:57:00-03:00,GA,control,AA000001\n"   # already aboard
                    "2026-04-10T11:00:00-03:00,GA,control,AA000001\n")  # 2 h early
    assert _got(lines) == [
        ("AA000001", "admit", [], []),
        ("AA000001", "debounced", [], []),
        ("AA000001", "aboard", [], []),
        ("AA000001", "aboard", [], []),
        ("AA000001", "exit", ["G9"], ["EARLY_EXIT"]),
    ]
    assert lines[2]["message"].startswith("JÁ A BORDO — entrada registrada às 06:55")


def test_replay_g12_g3_g4_per_category(tmp_path):
    lines = _replay(tmp_path, "at,gate_id,reader,uid\n"
                    "2026-04-10T06:50:00-03:00,GA,badge,BB000004\n"
                    "2026-04-10T06:50:03-03:00,GA,control,AA000004\n"   # stevedore on a watch post
                    "2026-04-10T06:52:00-03:00,GA,control,AA000005\n"   # stevedore without badge
                    "2026-04-10T06:53:00-03:00,GA,badge,BB000005\n"
                    "2026-04-10T06:53:03-03:00,GA,control,AA000005\n")  # exam 13 months old
    assert _got(lines) == [
        ("BB000004", "paired", [], []),
        ("AA000004", "deny", ["G12"], ["WRONG_CATEGORY"]),
        ("AA000005", "deny", ["G3", "G4"], ["BADGE_MISSING"]),
        ("BB000005", "paired", [], []),
        ("AA000005", "deny", ["G3"], []),
    ]
    assert "limite 12 meses" in lines[4]["message"]


def test_replay_g9_a_card_left_on_the_reader_for_minutes_is_one_read(tmp_path):
    import datetime as dt
    start = dt.datetime.fromisoformat("2026-04-10T06:55:00-03:00")
    rows = "".join(f"{(start + dt.timedelta(seconds=s)).isoformat()},GA,control,AA000001\n"
                   for s in range(0, 396, 2))  # every 2 s for 6.6 min
    lines = _replay(tmp_path, "at,gate_id,reader,uid\n" + rows)
    assert lines[0]["decision"] == "admit"
    assert {l["decision"] for l in lines[1:]} == {"debounced"} and len(lines) == 198


def test_replay_g7_no_negative_rest_and_a_no_entry_exit_without_period_starts_no_rest(tmp_path):
    lines = _replay(tmp_path, "at,gate_id,reader,uid,direction\n"
                    "2026-04-10T07:00:00-03:00,GA,control,AA000001,\n"
                    "2026-04-10T07:05:00-03:00,GA,control,AA000001,\n"      # early exit
                    "2026-04-10T07:10:00-03:00,GA,control,AA000001,\n"      # back in the same period
                    "2026-04-10T15:01:00-03:00,GA,control,AA000002,out\n"   # no entry, no period
                    "2026-04-10T20:00:00-03:00,GA,control,AA000002,\n")     # not dispatched: G6 only
    assert _got(lines) == [
        ("AA000001", "admit", [], []),
        ("AA000001", "exit", ["G9"], ["EARLY_EXIT"]),
        ("AA000001", "deny", ["G7"], []),
        ("AA000002", "exit", ["G9"], ["NO_ENTRY"]),
        ("AA000002", "deny", ["G6"], ["NOT_DISPATCHED"]),
    ]
    assert "descanso de 0h00" in lines[2]["message"], lines[2]["message"]
