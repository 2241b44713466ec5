"""Gate and port ids are validated once, in the typed config (``edge.config.GateConfig``): what
``edge check-config`` accepts, ``edge run`` starts with, standalone (no ``[mqtt]``) or not."""

from __future__ import annotations

import json

import pytest

from edge.config import load_gate_config
from portgate.errors import ConfigError
from testkit.gate_process import write_gate_config
from tests.ops.conftest import run_cli_or_here

BAD_IDS = ["g1/#", "", "../g2", "$SYS", "g 1", "g1+", "g1\n", "x" * 65, "-g1", ".."]


def _config(tmp_path, *, gate_id: str = "g-aurora", port: str = "santos"):
    cfg = write_gate_config(tmp_path)  # json.dumps: a TOML basic string
    text = cfg.read_text().replace('gate_id = "g-aurora"', f"gate_id = {json.dumps(gate_id)}")
    cfg.write_text(text.replace('port = "santos"', f"port = {json.dumps(port)}"))
    return cfg


@pytest.mark.parametrize("bad", BAD_IDS)
def test_typed_config_refuses_a_gate_id_that_is_no_topic_level(tmp_path, bad):
    cfg = _config(tmp_path, gate_id=bad)
    with pytest.raises(ConfigError, match="gate_id .* is not a valid id"):
        load_gate_config(cfg)


def test_typed_config_accepts_ids_with_dots_dashes_underscores(tmp_path):
    cfg = _config(tmp_path, gate_id="g-aurora_2.b", port="santos-1")
    loaded = load_gate_config(cfg)
    assert (loaded.gate_id, loaded.port) == ("g-aurora_2.b", "santos-1")


@pytest.mark.parametrize("key,bad", [("gate_id", "g1/#"), ("gate_id", "../g2"), ("gate_id", "g 1"),
                                     ("gate_id", "$SYS"), ("gate_id", ""), ("port", "santos/cais")])
def test_check_config_and_standalone_run_refuse_the_same_ids(tmp_path, key, bad):
    cfg = _config(tmp_path, **{key: bad})
    assert "[mqtt]" not in cfg.read_text()  # standalone: no topic is ever built from the id
    for cmd in (["edge", "check-config", str(cfg)], ["edge", "run", "--config", str(cfg)]):
        res = run_cli_or_here(cmd)
        lines = res.stderr.strip().splitlines()
        assert res.returncode == 2, (cmd, res)
        assert len(lines) == 1 and f"{key} {bad!r} is not a valid id" in lines[0], res.stderr
        assert "Traceback" not in res.stderr


def test_duplicate_reader_ids_are_refused_by_run_as_by_check_config(tmp_path):
    cfg = write_gate_config(tmp_path)
    text = cfg.read_text()
    block = text[text.index("[[readers]]"):text.index("[seed]")]
    cfg.write_text(text.replace("[seed]", block + "[seed]"))
    for cmd in (["edge", "check-config", str(cfg)], ["edge", "run", "--config", str(cfg)]):
        res = run_cli_or_here(cmd)
        assert res.returncode == 2 and "reader ids must be unique" in res.stderr, res.stderr
