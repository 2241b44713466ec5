"""CLI provisioning, the example config, and the benchmarks' --smoke runs."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from central.config import CentralConfig
from app.cli import main
from portgate.config import load_toml
from portgate.errors import ConfigError

ROOT = Path(__file__).resolve().parents[3]


def test_add_gate_writes_a_0600_key_and_refuses_to_overwrite(tmp_path, capsys):
    assert main(["central", "add-gate", "--gate-id", "g7", "--keys-dir", str(tmp_path)]) == 0
    path = tmp_path / "g7.key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and len(path.read_text().strip()) == 64
    assert str(path) in capsys.readouterr().out
    assert main(["central", "add-gate", "--gate-id", "g7", "--keys-dir", str(tmp_path)]) == 2


def test_the_example_central_config_parses_and_a_bad_key_is_named(tmp_path):
    assert load_toml(ROOT / "config/central.example.toml", CentralConfig).port == "santos"
    bad = tmp_path / "c.toml"
    bad.write_text('database_url = "sqlite://"\nport = "s"\nkeys_dir = "k"\n[ingest]\nbatch_sise = 3\n')
    with pytest.raises(ConfigError, match="batch_sise"):
        load_toml(bad, CentralConfig)


@pytest.mark.slow
@pytest.mark.parametrize("bench", ["outbox_drain.py", "ingest.py"])
def test_benchmark_smoke_prints_its_json_line(bench):
    args = [sys.executable, str(ROOT / "bench" / bench), "--smoke"] + (["--no-postgres"] if bench == "ingest.py" else [])
    out = subprocess.run(args, capture_output=True, text=True, timeout=600, cwd=ROOT).stdout
    last = json.loads(out.strip().splitlines()[-1])
    assert {"bench", "figures", "baseline", "ratio", "target"} <= set(last)
    if bench == "ingest.py":  # DESIGN.md: one worker >= 1x a bare paho subscriber, per database
        assert last["target"]["to_paho"] == 1 and last["ratio"]["sqlite_to_paho"] > 0
