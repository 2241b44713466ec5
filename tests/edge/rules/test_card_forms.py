"""G1 with readers that give only part of a card's UID (DEZ10: low 32 bits, DEZ8/W26: low 24 bits):
one EM4100 card enrolled by its 5-byte ID is matched by each of its numbers; a 24-bit match is
flagged PARTIAL_UID; bits two cards share name neither (DENY G1, never the wrong person). Through
the pure engine (in-memory view) and through ``portgate replay``."""

from __future__ import annotations

import json
import shutil

from click.testing import CliRunner

from edge.rules.model import Flag, Outcome
from app.cli import cli
from portgate.records import CardKind
from portgate.uid import UidFormat, read_uid

from .conftest import local
from .test_replay import DATA

EM = "62E3086CD5"  # as a serial RDM6300 reads it
TWIN = "7700086CD5"  # another EM card with the same low 24 bits (086CD5), other low 32 bits
DEZ10 = "3808980181"  # 0xE3086CD5, printed on the card / typed by a DEZ10 wedge
W26 = "00827861"  # facility 008 (0x08), number 27861 (0x6CD5)


def test_G1_an_em_card_enrolled_by_its_id_is_admitted_by_its_dez10_number(port):
    port.worker("1001")
    port.card(EM, "1001")
    port.dispatch("1001")
    decision = port.read(read_uid(DEZ10, UidFormat.DECIMAL10).text, local(6, 50))
    assert (decision.outcome, decision.registration, decision.card_uid) == (Outcome.ADMIT, "1001", EM)
    assert Flag.PARTIAL_UID not in decision.flags  # 32 bits are not the collision-prone case


def test_G1_a_w26_match_is_admitted_and_flagged_collision_prone(port):
    port.worker("1001")
    port.card(EM, "1001")
    port.dispatch("1001")
    decision = port.read(read_uid(W26, UidFormat.WIEGAND26).text, local(6, 50))
    assert (decision.outcome, decision.registration, decision.card_uid) == (Outcome.ADMIT, "1001", EM)
    assert Flag.PARTIAL_UID in decision.flags


def test_G1_two_cards_sharing_the_w26_bits_are_refused_never_matched(port):
    port.worker("1001")
    port.worker("1002")
    port.card(EM, "1001")
    port.card(TWIN, "1002")
    port.dispatch("1001")
    port.dispatch("1002")
    decision = port.read(read_uid(W26, UidFormat.WIEGAND26).text, local(6, 50))
    assert (decision.outcome, decision.rules_failed, decision.registration) == (Outcome.DENY, ("G1",), None)
    assert decision.reasons == ("G1.ambiguous",)
    assert "2 cartões" in decision.message_pt and "2 cards" in decision.message_en
    # DEZ10 carries 32 bits: the twins differ there, so it names the right one
    assert port.read(read_uid(DEZ10, UidFormat.DECIMAL10).text, local(6, 51)).registration == "1001"


def test_G1_a_partial_read_no_card_carries_is_unknown(port):
    port.worker("1001")
    decision = port.read("decimal10:00000001", local(6, 50))
    assert (decision.outcome, decision.reasons) == (Outcome.DENY, ("G1.unknown",))


def test_G1_a_partial_read_is_not_a_malformed_one_but_garbage_after_a_form_is(port):
    port.worker("1001")
    assert port.read("wiegand26:nothex", local(6, 50)).reasons == ("G1.malformed",)


def test_G10_a_card_confiscated_by_its_w26_read_is_blocked_under_its_own_uid(port):
    port.worker("1001")
    port.card(EM, "1001")
    port.card("CC000001", "9001", kind=CardKind.INSPECTOR)
    port.dispatch("1001")
    assert port.read("CC000001", local(6, 40)).outcome is Outcome.INSPECTOR
    decision = port.read(read_uid(W26, UidFormat.WIEGAND26).text, local(6, 40, 10))
    assert decision.confiscate and decision.card_uid == EM
    assert EM in port.presence.blocked
    # the same card by its other number is now a blocked card (G2), not a stranger
    assert port.read(read_uid(DEZ10, UidFormat.DECIMAL10).text, local(6, 50)).rules_failed[0] == "G2"


def _replay(tmp_path, cards: str, taps: str):
    for name in ("workers.csv", "escala.csv"):
        shutil.copy(DATA / name, tmp_path / name)
    (tmp_path / "cards.csv").write_text(cards, encoding="utf-8")
    (tmp_path / "taps.csv").write_text(taps, encoding="utf-8")
    args = ["replay", "--workers", str(tmp_path / "workers.csv"), "--cards", str(tmp_path / "cards.csv"),
            "--escala", str(tmp_path / "escala.csv"), "--taps", str(tmp_path / "taps.csv")]
    result = CliRunner().invoke(cli, args)
    return result, [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def test_replay_G1_dez10_and_w26_taps_for_a_card_enrolled_by_em_hex(tmp_path):
    cards = f"uid,kind,registration,status\n{EM},control,1001,active\n{TWIN},control,1003,active\n"
    taps = ("at,gate_id,reader,uid,uid_form\n"
            f"2026-04-10T06:45:00-03:00,GA,control,{DEZ10},decimal10\n"
            f"2026-04-10T12:50:00-03:00,GA,control,{W26},wiegand26\n"
            f"2026-04-10T12:55:00-03:00,GA,control,{EM},\n")
    result, lines = _replay(tmp_path, cards, taps)
    assert result.exit_code == 0, result.output
    got = [(l["decision"], l["registration"], l["rules_failed"], l["flags"]) for l in lines]
    assert got == [
        ("admit", "1001", [], []),
        ("deny", None, ["G1"], []),  # W26 bits of 1001 and 1003: neither is named
        ("exit", "1001", [], []),  # the serial reader's whole ID
    ]
    assert lines[0]["uid"] == "decimal10:E3086CD5"  # what the reader gave


def test_replay_refuses_a_ten_digit_decimal_uid_without_its_form(tmp_path):
    result, lines = _replay(tmp_path, "uid,kind,registration,status\n0439041101,control,1001,active\n",
                            "at,gate_id,reader,uid\n")
    assert result.exit_code == 2 and lines == []
    assert "cards.csv:2: uid 0439041101 is 10 decimal digits" in result.output
    assert "uid_form" in result.output
