"""G4 "either order" (83.611 art. 20 j, l) through ``portgate replay``: a badge of another
registration read just after a card already decided (badge optional, or an exit) is a borrowed
card, and a borrowed card flags both registrations' control cards for the inspector (G10)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from app.cli import cli

WORKERS = """registration,name,category,status,suspended_from,suspended_until,health_exam_date,booklet_revalidated_year,rotation_number
W2,Bruno,vigia,active,,,2025-06-01,,2
W7,Gil,vigia,active,,,2025-06-01,,7
W8,Hugo,vigia,active,,,2025-06-01,,8
F1,Fiscal,vigia,active,,,2025-06-01,,9
"""
CARDS = """uid,kind,registration,status
C20001,control,W2,active
B20001,badge,W2,active
C70001,control,W7,active
B70001,badge,W7,active
C80001,control,W8,active
B80001,badge,W8,active
1A0001,inspector,F1,active
"""
ESCALA = """date,period,ship,ship_name,voyage,berth,gate_id,post,function,registration
2026-04-14,07-13,9074729,MSC ALFA,long_haul,berthed,GA,portalo2,vigia,W2
2026-04-14,07-13,9074729,MSC ALFA,long_haul,berthed,GA,portalo5,vigia,W7
2026-04-14,07-13,9074729,MSC ALFA,long_haul,berthed,GA,portalo6,vigia,W8
"""


def _replay(tmp_path: Path, taps: str, *extra: str) -> list[dict]:
    for name, text in (("workers.csv", WORKERS), ("cards.csv", CARDS), ("escala.csv", ESCALA)):
        (tmp_path / name).write_text(text)
    (tmp_path / "taps.csv").write_text("at,gate_id,reader,uid\n" + taps)
    result = CliRunner().invoke(cli, [
        "replay", "--workers", str(tmp_path / "workers.csv"), "--cards", str(tmp_path / "cards.csv"),
        "--escala", str(tmp_path / "escala.csv"), "--taps", str(tmp_path / "taps.csv"), "--lang", "en",
        *extra])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def _got(lines):
    return [(l["uid"], l["decision"], l["rules_failed"], l["flags"]) for l in lines]


def test_G4_optional_badge_of_another_registration_after_the_card_is_borrowed_at_entry_and_exit(tmp_path):
    lines = _replay(tmp_path,
                    "2026-04-14T07:00:00-03:00,GA,control,C20001\n"
                    "2026-04-14T07:00:05-03:00,GA,badge,B70001\n"     # W7's badge after W2's card
                    "2026-04-14T07:01:00-03:00,GA,control,C80001\n"
                    "2026-04-14T07:01:04-03:00,GA,badge,B80001\n"     # W8's own badge: confirms
                    "2026-04-14T12:56:00-03:00,GA,control,C80001\n"   # W8 exits ...
                    "2026-04-14T12:56:05-03:00,GA,badge,B70001\n"     # ... and W7's badge follows
                    "2026-04-14T12:58:00-03:00,GA,control,C20001\n"
                    "2026-04-14T12:58:16-03:00,GA,badge,B70001\n")    # past the 15 s window
    assert _got(lines) == [
        ("C20001", "admit", [], []),
        ("B70001", "deny", ["G4"], ["BORROWED_CARD"]),
        ("C80001", "admit", [], []),
        ("B80001", "paired", [], []),
        ("C80001", "exit", [], []),
        ("B70001", "deny", ["G4"], ["BORROWED_CARD"]),
        ("C20001", "exit", [], []),
        ("B70001", "deny", ["G4"], []),
    ]
    assert lines[1]["message"] == (
        "DENIED — badge of registration W7 read just after the control card of registration W2: "
        "borrowed card? The card's decision, already recorded, stands. Call the inspector. [G4]")
    assert "W8" in lines[5]["message"] and "W7" in lines[5]["message"]
    assert lines[7]["message"].startswith("DENIED — badge read without a control card")


def test_G4_borrowed_card_flags_both_registrations_so_confiscating_either_card_is_art_20_jl(tmp_path):
    rulebook = tmp_path / "gate.toml"
    rulebook.write_text("[[version]]\neffective_from = 2026-01-01\n[version.g4]\n"
                        "card_and_badge_required = true\n")
    lines = _replay(tmp_path,
                    "2026-04-14T07:00:00-03:00,GA,control,C70001\n"
                    "2026-04-14T07:00:05-03:00,GA,badge,B80001\n"     # W7 card + W8 badge
                    "2026-04-14T07:03:00-03:00,GA,control,1A0001\n"
                    "2026-04-14T07:03:10-03:00,GA,control,C80001\n"   # W8's own card confiscated
                    "2026-04-14T07:04:00-03:00,GA,control,1A0001\n"
                    "2026-04-14T07:04:10-03:00,GA,control,C70001\n",  # and W7's
                    "--rulebook", str(rulebook))
    confiscations = [l for l in lines if "CONFISCATE" in l["flags"]]
    assert [l["uid"] for l in confiscations] == ["C80001", "C70001"]
    assert all("art. 20 j/l" in l["message"] for l in confiscations), confiscations
