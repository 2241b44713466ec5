"""``office_public_key_file`` in gate.toml: the office key the gate checks receipts against, read
and checked when the typed config is built, so ``edge check-config`` and ``edge run`` refuse the
same files (docs/gate.md)."""

from __future__ import annotations

import base64
import os

import pytest

from edge.config import load_gate_config, office_key
from portgate.errors import ConfigError
from testkit.gate_process import write_gate_config
from tests.ops.conftest import run_here
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
    res = run_here(["edge", "check-config", str(cfg)])
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1 and "office_public_key_file" in lines[0], res.stderr


def _refused(cfg, why: str) -> None:
    with pytest.raises(ConfigError, match=f"office_public_key_file: .*{why}"):
        load_gate_config(cfg)
    res = run_here(["edge", "check-config", str(cfg)])
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1 and why in lines[0], res.stderr


@pytest.mark.parametrize("value", ['""', '"  "'])
def test_an_empty_value_is_said_to_be_empty(tmp_path, value):
    _refused(_config(tmp_path, f"office_public_key_file = {value}"), "the value is empty")


def test_dev_zero_is_refused_as_not_a_regular_file(tmp_path):
    _refused(_config(tmp_path, 'office_public_key_file = "/dev/zero"'), "not a regular file")


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    os.mkfifo(tmp_path / "office.pub")
    _refused(_config(tmp_path, 'office_public_key_file = "office.pub"'), "not a regular file")


def test_a_large_file_is_refused_after_reading_a_few_kb(tmp_path):
    (tmp_path / "office.pub").write_bytes(b"A" * 100_000)
    _refused(_config(tmp_path, 'office_public_key_file = "office.pub"'), "larger than 4096 bytes")


def _pem() -> str:
    return chain.public_pem(chain.new_private_key().public_key())


@pytest.mark.parametrize("content, why", [
    (base64.b64encode(bytes(32)).decode(), "a weak key"),
    (base64.b64encode(b"\x01" + bytes(31)).decode(), "a weak key"),
    ("junk\n" + "PEM", "one PEM PUBLIC KEY block"),
    ("PEM" + "junk after the block\n", "one PEM PUBLIC KEY block"),
    ("PEM" + "PEM", "one PEM PUBLIC KEY block"),
])
def test_a_weak_key_or_a_pem_with_something_else_is_refused(tmp_path, content, why):
    (tmp_path / "office.pub").write_text(content.replace("PEM", _pem()))
    _refused(_config(tmp_path, 'office_public_key_file = "office.pub"'), why)


def test_a_pem_with_surrounding_blank_lines_and_a_raw_base64_key_are_accepted(tmp_path):
    key = chain.new_private_key().public_key()
    for text in ("\n\n" + chain.public_pem(key) + "\n\n", chain.public_raw(key) + "\n"):
        (tmp_path / "office.pub").write_text(text)
        loaded = load_gate_config(_config(tmp_path, 'office_public_key_file = "office.pub"'))
        assert chain.public_raw(office_key(loaded)) == chain.public_raw(key)
