"""The services' own start-up refusals that name the setting at fault (``--instance``, the metrics
ports): one line, exit 2, pt-BR first and English with ``--lang en``, as
tests/ops/test_check_config_refusals.py's refusals."""

from __future__ import annotations

import pytest

from central.config import load_central_config
from central.runner import INSTANCE_MAX, for_instance
from testkit.gate_process import write_gate_config
from tests.ops.conftest import run_cli
from tests.ops.test_check_config_refusals import _env, _refused, _toml

@pytest.mark.parametrize("name", ["a" * 300, "a" * (INSTANCE_MAX + 1), "a b"])
def test_an_instance_name_longer_than_its_column_or_not_one_word_is_refused_up_front(tmp_path, name):
    """``--instance`` of 300 characters was taken: SQLite stored it in ``office_processes.instance``
    (VARCHAR(64), migration 0037), PostgreSQL failed with "value too long". Refused now before
    anything is opened, naming ``--instance`` and the limit."""
    cfg = _toml(tmp_path)
    said = _refused(["central", "run", "--config", str(cfg), "--instance", name], "--instance",
                    f"deve ter de 1 a {INSTANCE_MAX} letras", f"must be 1 to {INSTANCE_MAX} letters", here=False)
    assert f"({len(name)} caracteres)" in said, said

def test_an_instance_name_of_the_column_length_is_taken(tmp_path):
    cfg = load_central_config(_toml(tmp_path))
    name = "a-" * (INSTANCE_MAX // 2)
    assert for_instance(cfg, name).mqtt.client_id == f"ledger-santos-{name}"


def _refused_after_logs(args: list[str], key: str, pt: str, en: str) -> str:
    """``_refused`` for a service that logs (JSON lines on stderr) before it meets the refusal: exit
    2, no traceback, one line that is not a log line, naming ``key`` and saying ``pt`` / ``en``."""
    said = []
    for lang, words in ((None, pt), ("en", en)):
        res = run_cli(["--lang", lang, *args] if lang else args, env=_env({"PORTGATE_LANG": None} if lang is None else {}))
        lines = [x for x in res.stderr.strip().splitlines() if not x.startswith("{")]
        assert res.returncode == 2 and "Traceback" not in res.stderr, res
        assert len(lines) == 1 and key in lines[0] and words in lines[0], res.stderr
        said.append(lines[0])
    return said[0]


@pytest.fixture
def busy_port():
    """A TCP port of 127.0.0.1 held listening by this test."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


@pytest.mark.parametrize("given", ["option", "config"])
def test_central_run_names_the_metrics_port_setting_that_is_taken(tmp_path, busy_port, given):
    """``central run --metrics-port N`` with N taken printed "OSError: [Errno 98] Address already in
    use": now the setting, the address and why, as ``office serve --port`` says it."""
    extra, key = ("", "--metrics-port") if given == "option" else (f"metrics_port = {busy_port}", "$.metrics_port")
    cfg = _toml(tmp_path, extra)
    args = ["central", "run", "--config", str(cfg), *(["--metrics-port", str(busy_port)] if given == "option" else [])]
    where = f"127.0.0.1:{busy_port}"
    said = _refused_after_logs(args, key, f"não é possível escutar em {where} (já em uso)",
                               f"cannot listen on {where} (already in use)")
    assert said.startswith(f"portgate: {key}: "), said


def test_edge_run_names_the_metrics_port_that_is_taken(tmp_path, busy_port):
    cfg = write_gate_config(tmp_path / "gate")
    cfg.write_text(f"metrics_port = {busy_port}\n" + cfg.read_text(encoding="utf-8"), encoding="utf-8")
    where = f"127.0.0.1:{busy_port}"
    _refused_after_logs(["edge", "run", "--config", str(cfg)], "$.metrics_port",
                        f"não é possível escutar em {where} (já em uso)", f"cannot listen on {where} (already in use)")
