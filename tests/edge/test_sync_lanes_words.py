"""``[sync] lanes = 3`` without ``mqtt.protocol = '3.1.1'`` (mosquitto, MQTT 5) is refused by
``edge check-config`` and ``edge run`` alike, exit 2, in pt-BR by default and English with
``--lang en`` (``svc.sync_lanes_protocol``; it was English under pt-BR). With 3.1.1, a ``lanes``
that is not a whole number from 1 to 16 is refused naming ``$.sync.lanes``; ``3.0`` and ``"3"`` too,
with the words ``3.5`` and ``true`` get (msgspec's lenient conversion took them as 3; the conversion
is strict now: ``portgate.config.convert``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from testkit.cli import in_pt_and_en, refused_in_pt_and_en, run_here
from testkit.gate_process import write_gate_config

EXAMPLE = Path(__file__).resolve().parents[2] / "config" / "gate.example.toml"
PT = "sync.lanes = 3 exige mqtt.protocol = '3.1.1' (um cluster NATS): o mosquitto dá a todas as conexões"
EN = "sync.lanes = 3 needs mqtt.protocol = '3.1.1' (a NATS cluster): mosquitto gives every connection"


@pytest.fixture
def gate_toml(tmp_path) -> str:
    key = tmp_path / "gate.key"
    key.write_bytes(b"k" * 32)
    key.chmod(0o600)
    text = EXAMPLE.read_text(encoding="utf-8").replace("/etc/portgate/gate.key", str(key))
    path = tmp_path / "g.toml"
    path.write_text(text + "\n[sync]\nlanes = 3\n", encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("args", [["edge", "check-config"], ["edge", "run", "--config"]])
def test_lanes_on_mqtt_5_refused_in_pt_br_then_english(gate_toml, args):
    pt, en = in_pt_and_en([*args, gate_toml])
    assert pt.returncode == 2 and PT in pt.stderr, pt.stderr
    assert en.returncode == 2 and EN in en.stderr, en.stderr


def _nats_gate(tmp_path, lanes: str) -> str:
    cfg = write_gate_config(tmp_path / "g")
    cfg.write_text(cfg.read_text() + f'\n[mqtt]\nprotocol = "3.1.1"\nhosts = ["127.0.0.1:1883"]\n\n[sync]\nlanes = {lanes}\n')
    return str(cfg)


@pytest.mark.parametrize(("lanes", "pt", "en"), [
    ("3.0", "esperado `int`, veio `float`", "Expected `int`, got `float`"),  # integral: it was taken as 3
    ("3.5", "esperado `int`, veio `float`", "Expected `int`, got `float`"),
    ("0", "esperado `int` >= 1", "Expected `int` >= 1"),
    ("17", "esperado `int` <= 16", "Expected `int` <= 16"),
    ("true", "esperado `int`, veio `bool`", "Expected `int`, got `bool`"),
    ('"3"', "esperado `int`, veio `str`", "Expected `int`, got `str`"),  # it was taken as 3
])
def test_a_lanes_that_is_not_a_whole_number_from_1_to_16_is_refused_naming_it(tmp_path, lanes, pt, en):
    """``edge check-config`` loads the config as ``edge run`` does (``edge.config.load_gate_config``)."""
    cfg = _nats_gate(tmp_path, lanes)
    refused_in_pt_and_en(["edge", "check-config", cfg], f"portgate: {cfg}:$.sync.lanes: {pt}\n",
                         f"portgate: {cfg}:$.sync.lanes: {en}\n")


def test_a_whole_lanes_on_mqtt_311_is_taken(tmp_path):
    r = run_here(["edge", "check-config", _nats_gate(tmp_path, "3")])
    assert r.returncode == 0 and r.stdout.startswith("ok: "), (r.stdout, r.stderr)
