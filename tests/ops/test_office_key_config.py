"""``office_public_key_file`` in gate.toml: the office key the gate checks receipts against, read
and checked when the typed config is built, so ``edge check-config`` and ``edge run`` refuse the
same files (docs/gate.md)."""

from __future__ import annotations

import pytest

from edge.config import load_gate_config, office_key
from portgate.errors import ConfigError
from testkit.gate_process import write_gate_config
from tests.ops.conftest import run_cli
from wire import chain


def _config(tmp_path, line: str):
    cfg = write_gate_config(tmp_path)
    text = cfg.read_text().replace('key_file = "gate.key"\n', f'key_file = "gate.key"\n{line}\n')
    cfg.write_text(text)
    return cfg


def test_the_office_key_is_read_relative_to_gate_toml(tmp_path):
    key = chain.new_private_key().public_key()
    (tmp_path / "office.pub").write_text(chain.public_pem(key))
    loaded = load_gate_config(_config(tmp_path, 'office_public_key_file = "office.pub"'))
    assert loaded.office_public_key_file == str(tmp_path / "office.pub")
    assert chain.public_raw(office_key(loaded)) == chain.public_raw(key)


def test_without_the_key_receipts_have_nothing_to_verify_against(tmp_path):
    assert office_key(load_gate_config(write_gate_config(tmp_path))) is None


@pytest.mark.parametrize("content, why", [
    (None, "cannot read the office public key"),
    ("not a key", "not an Ed25519 public key"),
])
def test_a_missing_or_bad_office_key_stops_the_gate_naming_the_key(tmp_path, content, why):
    if content is not None:
        (tmp_path / "office.pub").write_text(content)
    cfg = _config(tmp_path, 'office_public_key_file = "office.pub"')
    with pytest.raises(ConfigError, match=f"office_public_key_file: {why}"):
        load_gate_config(cfg)
    res = run_cli(["edge", "check-config", str(cfg)])
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1 and "office_public_key_file" in lines[0], res.stderr
