"""The office's own key files in ``keys_dir`` (``payslip.key``, ``web-session.key``: the defaults of
``[web] slip_key_file`` and ``secret_file``) are not gate keys: ``check-config``'s summary does not
count them, the ingest never checks a gate ``payslip`` against the payslip key, and ``add-gate``
refuses those gate ids (``--rotate`` replaced the payslip key)."""

from __future__ import annotations

import pytest

from central.ingest.keys import KeyRing
from portgate.config import write_secret
from testkit.cli import run_here
from tests.ops.test_check_config_refusals import _refused, _toml


def _keys(tmp_path):
    keys = tmp_path / "keys"
    keys.mkdir(exist_ok=True)
    for name in ("payslip", "web-session", "g-aurora"):
        write_secret(keys / f"{name}.key", name.encode() * 8)
    return keys


def test_the_summary_counts_only_gate_keys(tmp_path):
    _keys(tmp_path)
    res = run_here(["central", "check-config", str(_toml(tmp_path))])
    assert res.returncode == 0 and ", 1 gate key(s)," in res.stdout, res


def test_a_configured_office_key_file_in_keys_dir_is_not_counted_either(tmp_path):
    keys = _keys(tmp_path)
    write_secret(keys / "session.key", b"s" * 32)
    res = run_here(["central", "check-config", str(_toml(tmp_path, f'[web]\nsecret_file = "{keys / "session.key"}"'))])
    assert res.returncode == 0 and ", 1 gate key(s)," in res.stdout, res


def test_the_ingest_never_takes_an_office_key_for_a_gate_key(tmp_path):
    ring = KeyRing(_keys(tmp_path))
    assert ring.key("payslip") is None and ring.key("web-session") is None  # unknown gates: dead letters
    assert ring.key("g-aurora") == b"g-aurora" * 8


@pytest.mark.parametrize("gate", ["payslip", "web-session"])
@pytest.mark.parametrize("rotate", [False, True])
def test_add_gate_refuses_a_gate_id_naming_an_office_key_and_writes_nothing(tmp_path, gate, rotate):
    keys = _keys(tmp_path)
    before = sorted((p.name, p.read_bytes()) for p in keys.iterdir())
    args = ["central", "add-gate", "--gate-id", gate, "--keys-dir", str(keys), "--port", "santos",
            *(["--rotate"] if rotate else [])]
    said = _refused(args, gate, "é reservado", "is reserved")
    assert f"{gate}.key" in said, said
    assert sorted((p.name, p.read_bytes()) for p in keys.iterdir()) == before
