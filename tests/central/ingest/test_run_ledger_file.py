"""``portgate central run``'s ingest (``central.runner.ingest_for_run``) opens only the ledger file
there is (SQLite URI ``mode=rw``, as ``office serve``): a file gone after the start-up check is
refused (pt-BR first, exit 2 through the command line), never created again as a new empty
ledger; a file removed while the office runs fails the next connection instead of becoming one.
Real SQLite files, the real ingest (not started: no broker needed)."""

from __future__ import annotations

import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from app.cli import _refusal_words
from central.config import CentralConfig
from central.runner import ingest_for_run
from portgate.clitext import use_lang
from portgate.errors import BadInput
from testkit.cli import run_here


def _config(tmp_path) -> CentralConfig:
    (tmp_path / "keys").mkdir(exist_ok=True)
    return CentralConfig(port="santos", keys_dir=str(tmp_path / "keys"),
                         database_url=f"sqlite:///{tmp_path / 'ledger.db'}")


def test_a_ledger_file_gone_before_the_ingest_opens_it_is_refused_not_created(tmp_path):
    with pytest.raises(BadInput) as got:
        ingest_for_run(_config(tmp_path))
    assert not (tmp_path / "ledger.db").exists()
    said = f"portgate: {got.value}"
    assert said.startswith(f"portgate: database_url: SQLite file '{tmp_path / 'ledger.db'}' does not exist"), said
    use_lang("pt")
    assert _refusal_words(str(got.value)).startswith(f"database_url: o arquivo SQLite '{tmp_path / 'ledger.db'}' "
                                                     "não existe"), _refusal_words(str(got.value))


def test_a_ledger_file_removed_while_the_office_runs_is_not_created_again(tmp_path):
    cfg = _config(tmp_path)
    assert run_here(["ledger", "migrate", "--db", cfg.database_url]).returncode == 0
    ingest = ingest_for_run(cfg)
    try:
        with ingest.engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM events")).scalar() == 0
        for suffix in ("", "-wal", "-shm"):
            (tmp_path / f"ledger.db{suffix}").unlink(missing_ok=True)
        with pytest.raises(OperationalError, match="unable to open database file"):
            with ingest.engine.connect() as conn:
                conn.execute(text("SELECT count(*) FROM events"))
        assert not (tmp_path / "ledger.db").exists()
    finally:
        ingest.engine.dispose()
