"""The registry import's registration rule (``portgate.registration``: letters and digits with
- . /, no formula lead, no second spelling in other letter case) on the gate's card seed
(``cards.csv`` through ``Store.load_csv_files``, a real SQLite store), on ``replay``'s cards.csv
and on the union inspectors' ``inspectors.csv`` (``central.broadcast.csv_source``): refused by
file and line, pt-BR first, nothing loaded."""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
from pathlib import Path

import pytest

from central.broadcast.csv_source import inspectors_csv, roster_snapshot
from edge.store import Store
from portgate.errors import BadInput
from testkit.cli import in_pt_and_en, run_here

DEMO = Path(__file__).resolve().parents[2] / "config" / "demo"
T0 = dt.datetime(2026, 3, 15, 12, 0, tzinfo=dt.UTC)


def _cards(tmp_path, *rows: str) -> Path:
    path = tmp_path / "cards.csv"
    path.write_text("uid,kind,registration,status\n" + "".join(r + "\n" for r in rows))
    return path


@pytest.mark.parametrize(("row", "reason"), [
    ("0A04A19999,control,=HYPERLINK(1),active",
     "cards.csv:3: registration '=HYPERLINK(1)' starts with '=': not a registration"),
    ("0A04A19999,control,V 001,active", "cards.csv:3: registration 'V 001' holds ' ': a registration is letters"),
    ("0A04A19999,control,v001,active", "cards.csv:3: registration v001 differs only in letter case from the "
                                        "registered V001"),
])
def test_the_gate_seed_refuses_a_card_registration_the_registry_would_refuse(tmp_path, row, reason):
    cards = _cards(tmp_path, "0A04A10001,control,V001,active", row)
    store = Store(tmp_path / "store.db", gate_id="g1", ship="9300001", boot_id="b1")
    try:
        with pytest.raises(BadInput) as got:
            store.load_csv_files(DEMO / "workers.csv", cards, at=T0)
        assert reason in str(got.value)
        assert store.worker("V001") is None  # nothing loaded
    finally:
        store.close()


def _replay(cards: Path) -> tuple[subprocess.CompletedProcess, subprocess.CompletedProcess]:
    args = ["replay", "--workers", str(DEMO / "workers.csv"), "--cards", str(cards), "--escala",
            str(DEMO / "escala.csv"), "--taps", str(DEMO / "taps.csv")]
    return in_pt_and_en(args)


def test_replay_names_the_cards_file_and_line_of_a_formula_registration_in_pt_br(tmp_path):
    pt, en = _replay(_cards(tmp_path, "0A04A10001,control,V001,active", "0A04A19999,control,@SUM(1),active"))
    assert pt.returncode == en.returncode == 2, (pt.stderr, en.stderr)
    assert "cards.csv:3: a matrícula '@SUM(1)' começa com '@': não é matrícula" in pt.stderr, pt.stderr
    assert "cards.csv:3: registration '@SUM(1)' starts with '@': not a registration" in en.stderr, en.stderr


@pytest.mark.parametrize(("rows", "reason"), [
    (("F001,Helena", "+F002,Rui"), "inspectors.csv:3: registration '+F002' starts with '+': not a registration"),
    (("F001,Helena", "F 2,Rui"), "inspectors.csv:3: registration 'F 2' holds ' '"),
    (("F001,Helena", "f001,Rui"), "inspectors.csv:3: registration f001 differs only in letter case from F001 at line 2"),
])
def test_inspectors_csv_refuses_a_registration_the_registry_would_refuse(tmp_path, rows, reason):
    shutil.copy(DEMO / "cards.csv", tmp_path / "cards.csv")
    (tmp_path / "inspectors.csv").write_text("registration,name\n" + "".join(r + "\n" for r in rows))
    with pytest.raises(BadInput) as got:
        inspectors_csv(tmp_path / "cards.csv")
    assert reason in str(got.value)
    with pytest.raises(BadInput):
        roster_snapshot(DEMO / "workers.csv", tmp_path / "cards.csv", at=T0)


def test_the_demo_files_pass(tmp_path):
    snap = roster_snapshot(DEMO / "workers.csv", DEMO / "cards.csv", at=T0)
    assert snap.cards and [i.registration for i in snap.inspectors] == ["F001"]


def test_check_config_refuses_the_seed_edge_run_would_refuse(tmp_path):
    """``edge check-config`` reads ``[seed]`` as ``edge run`` does (``edge.store_copies.read_seed``):
    a card ``v001`` beside worker ``V001`` was "ok" there while ``edge run`` exited 2."""
    cards = _cards(tmp_path, "0A04A10001,control,V001,active", "0A04A19999,control,v001,active")
    key = tmp_path / "gate.key"
    key.write_bytes(b"k" * 32)
    key.chmod(0o600)
    gate = tmp_path / "g.toml"
    gate.write_text(f'port = "santos"\ngate_id = "g-aurora"\nship = "9300001"\nkey_file = "{key}"\n'
                    f'state_dir = "{tmp_path}"\n[seed]\nworkers = "{DEMO / "workers.csv"}"\ncards = "{cards}"\n')
    pt = run_here(["edge", "check-config", str(gate)], env={"PORTGATE_LANG": None})
    assert pt.returncode == 2, pt.stdout + pt.stderr
    assert "cards.csv:3: a matrícula v001 difere" in pt.stderr, pt.stderr
    shutil.copy(DEMO / "cards.csv", cards)
    ok = run_here(["edge", "check-config", str(gate)], env={"PORTGATE_LANG": None})
    assert ok.returncode == 0 and ok.stdout.startswith("ok: "), ok.stdout + ok.stderr
