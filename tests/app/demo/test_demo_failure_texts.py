"""The demo's console speaks its ``--lang`` in its failures and its ledger line too (fresh tester,
2026-12-06: "a demonstração falhou: the office exited (-9); see .../central.log" and "(livro-razão
PostgreSQL/Patroni, 3 nodes, shared by the ports)" on a pt-BR console). A real office process that
has exited (``DemoRun._check_office``), the cluster run as ``ClusterDay.start`` builds it (not
started: no NATS or Patroni needed)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from app.demo.cluster import ClusterPortRun
from app.demo.gate import DemoFailed
from app.demo.run import DemoRun
from app.demo.scenario import DEFAULT_DIR, Scenario
from portgate.clitext import use_lang


@pytest.fixture
def lang():
    yield use_lang
    use_lang(None)


@pytest.mark.parametrize(("code", "want"), [
    ("pt", "o escritório terminou (3); veja {dir}/central.log"),
    ("en", "the office exited (3); see {dir}/central.log"),
])
def test_the_office_exited_in_the_consoles_language(tmp_path, lang, code, want):
    lang(code)
    run = DemoRun(tmp_path, Scenario(DEFAULT_DIR), lang=code, out=lambda _line: None)
    run.office = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    run.office.wait()
    with pytest.raises(DemoFailed) as failed:
        run._check_office()
    assert str(failed.value) == want.format(dir=tmp_path)


@pytest.mark.parametrize(("code", "want"), [
    ("pt", "PostgreSQL/Patroni, 3 nós, compartilhado pelos portos"),
    ("en", "PostgreSQL/Patroni, 3 nodes, shared by the ports"),
])
def test_the_cluster_ledger_line_in_the_consoles_language(tmp_path, lang, code, want):
    lang(code)
    run = ClusterPortRun(tmp_path, Scenario(DEFAULT_DIR), nats=None, ledger_url="sqlite://", lang=code,
                         out=lambda _line: None)
    assert run.ledger_label == want
