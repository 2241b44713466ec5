"""Every configuration value is checked once, when the typed config is built (STYLE.md 12):
``load_gate_config`` / ``load_central_config`` refuse it naming the key, and ``check-config``, which
only loads the file and opens what it names, refuses the same file with the same message."""

from __future__ import annotations

import pytest

from app.checkconfig import check_central, check_gate
from central.config import load_central_config
from central.ledger.migrate import upgrade
from edge.config import load_gate_config
from portgate.errors import ConfigError
from testkit.gate_process import write_gate_config


def _refused_alike(loaders, path, key, text) -> None:
    """Each loader refuses ``path`` with one ``ConfigError`` naming ``key``; all say the same."""
    refusals = []
    for load in loaders:
        with pytest.raises(ConfigError) as caught:
            load(path)
        assert caught.value.key == key and text in caught.value.reason, caught.value
        refusals.append(str(caught.value))
    assert len(set(refusals)) == 1, refusals


def _central(tmp_path, body: str, database_url: str | None = None):
    (tmp_path / "keys").mkdir(exist_ok=True)
    path = tmp_path / "central.toml"
    url = database_url or f"sqlite:///{tmp_path / 'l.db'}"
    path.write_text(f'database_url = "{url}"\nport = "santos"\nkeys_dir = "keys"\n{body}\n')
    return path


@pytest.mark.parametrize("body,url,key,text", [
    ("", "sqlite://", "$.database_url", "in-memory SQLite ledger is private to one connection"),
    ("", "sqlite:///:memory:", "$.database_url", "in-memory SQLite ledger"),
    ("metrics_port = 70000", None, "$.metrics_port", "<= 65535"),
    ("metrics_port = -1", None, "$.metrics_port", ">= 0"),
    ("workers = 0", None, "$.workers", ">= 1"),
    ('[ingest]\nshare_group = "a/b"', None, "$.ingest", "share_group 'a/b' is not a valid id"),
    ('[mqtt]\nusername = "office"', None, "$.mqtt", "username given without password_file"),
])
def test_a_bad_office_value_is_refused_by_the_loader_and_check_config_alike(tmp_path, body, url, key, text):
    _refused_alike((load_central_config, check_central), _central(tmp_path, body, url), key, text)


def test_a_port_that_is_not_a_topic_id_is_refused_when_the_office_config_is_built(tmp_path):
    path = _central(tmp_path, "")
    path.write_text(path.read_text().replace('port = "santos"', 'port = "san tos"'))
    with pytest.raises(ConfigError, match="port 'san tos' is not a valid id"):
        load_central_config(path)


@pytest.mark.parametrize("old,new,key,text", [
    ("clock_trust = ", 'clock = "scripted"\nclock_trust = ', None, "clock = 'scripted' needs clock_file"),
    ('indicator_file = "shown.jsonl"\n', "", None, "indicator = 'file' needs indicator_file"),
    ("clock_trust = ", "metrics_port = 65536\nclock_trust = ", "$.metrics_port", "<= 65535"),
])
def test_a_bad_gate_value_is_refused_by_the_loader_and_check_config_alike(tmp_path, old, new, key, text):
    path = write_gate_config(tmp_path)
    path.write_text(path.read_text().replace(old, new, 1))
    _refused_alike((load_gate_config, check_gate), path, key, text)


def test_a_good_file_loads_and_check_config_summarises_it(tmp_path):
    upgrade(f"sqlite:///{tmp_path / 'l.db'}")  # check-config refuses a ledger file not made yet, as central run does
    assert check_central(_central(tmp_path, "metrics_port = 9102")).endswith(
        "port santos, database sqlite, 1 worker(s), 0 gate key(s), mqtt 127.0.0.1:1883, metrics 127.0.0.1:9102")
    assert ": ports santos, rio, database sqlite," in check_central(_central(tmp_path, 'ports = ["rio", "santos"]'))
    assert "gate g-aurora, port santos, 1 reader(s), standalone (no [mqtt]), metrics off" in check_gate(
        write_gate_config(tmp_path / "gate"))
