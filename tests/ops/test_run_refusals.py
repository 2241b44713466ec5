"""The services' own start-up refusals that name the setting at fault (``--instance``, the metrics
ports): one line, exit 2, pt-BR first and English with ``--lang en``, as
tests/ops/test_check_config_refusals.py's refusals."""

from __future__ import annotations

import pytest

from central.config import load_central_config
from central.runner import INSTANCE_MAX, for_instance
from tests.ops.test_check_config_refusals import _refused, _toml

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
