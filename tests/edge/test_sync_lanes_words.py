"""``[sync] lanes = 3`` without ``mqtt.protocol = '3.1.1'`` (mosquitto, MQTT 5) is refused by
``edge check-config`` and ``edge run`` alike, exit 2, in pt-BR by default and English with
``--lang en`` (``svc.sync_lanes_protocol``; it was English under pt-BR)."""

from __future__ import annotations

from pathlib import Path

import pytest

from testkit.cli import in_pt_and_en

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
