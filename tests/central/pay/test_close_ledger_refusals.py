"""``portgate pay close`` and ``portgate pay --db`` write only to an existing portgate ledger (they
upgrade one, never make one: ``portgate ledger migrate`` does): an empty database or one holding
other tables is one line, exit 2, nothing written (was: 53 or 61 tables made, exit 0, "workers": 0).
And the other refusals of a close, each one line naming its cause: ``--db`` naming a directory, a
SQLite ledger in a directory that takes no new file, a close racing another close of the same days
(on the shifts: "another close", not "another pay run changed these statements"), an ``--at``
before the closed days' last tap. Through the real command, SQLite and PostgreSQL."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from sqlalchemy import func, inspect, select, text

from central.db import make_engine
from central.ledger.migrate import current, head, upgrade
from central.ledger.tables import shifts, statements
from tests.central.pay.test_pay_cli import _shifts_ledger

ROOT = Path(__file__).resolve().parents[3]
MARCH = ("--from", "2026-03-01", "--to", "2026-03-31")
AT = ("--at", "2026-04-05T12:00:00+00:00")
MIGRATE = "create the ledger with `portgate ledger migrate --db URL`"
CRIE = "crie o livro-razão com `portgate ledger migrate --db URL`"


def _portgate(*args: str, lang: str = "pt") -> tuple[int, str, str]:
    done = subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PORTGATE_LANG": lang}, timeout=300)
    return done.returncode, done.stdout, done.stderr


def _both(url: str, lang: str = "pt") -> list[tuple[int, str, str]]:
    """``pay close`` and ``pay --db`` of March on ``url``."""
    return [_portgate("pay", "close", "--db", url, *MARCH, *AT, lang=lang),
            _portgate("pay", "--db", url, *MARCH, lang=lang)]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _files(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir())


def test_a_sqlite_file_of_other_tables_is_refused_untouched(tmp_path):
    db = tmp_path / "other.db"
    with sqlite3.connect(db) as conn:
        conn.execute("create table foo(x)")
    before, files = _digest(db), _files(db)
    for lang, words in (("pt", f"(outras tabelas: foo): o pagamento não escreve nada nele, {CRIE}"),
                        ("en", f"(other tables: foo): pay writes nothing there, {MIGRATE}")):
        for code, out, err in _both(f"sqlite:///{db}", lang):
            assert (code, out) == (2, ""), err
            (line,) = err.strip().splitlines()
            assert line.startswith(f"portgate: sqlite:///{db} ") and words in line, line
    assert (_digest(db), _files(db)) == (before, files)  # not even the WAL journal mode written


def test_an_empty_sqlite_database_is_refused_untouched(tmp_path):
    db = tmp_path / "empty.db"
    with sqlite3.connect(db) as conn:  # a database of 8 KiB, no table (a 0-byte file has its own refusal)
        conn.execute("create table t(x)")
        conn.execute("drop table t")
    before = _digest(db)
    for code, out, err in _both(f"sqlite:///{db}", "en"):
        assert (code, out) == (2, ""), err
        assert err.strip() == f"portgate: sqlite:///{db} holds no portgate ledger (an empty database): pay " \
                              f"creates none, {MIGRATE}"
    code, _out, err = _portgate("pay", "close", "--db", f"sqlite:///{db}", *MARCH)
    assert code == 2 and f"(banco de dados vazio): o pagamento não cria um, {CRIE}" in err
    assert _digest(db) == before


def test_a_postgresql_database_without_a_ledger_is_refused_untouched(pg_cluster):
    empty = pg_cluster.create_database(f"noledger{uuid.uuid4().hex[:8]}")
    other = pg_cluster.create_database(f"other{uuid.uuid4().hex[:8]}")
    engine = make_engine(other)
    with engine.begin() as conn:
        conn.execute(text("create table foo (x int)"))
    engine.dispose()
    for url, words in ((empty, "(an empty database): pay creates none"),
                       (other, "(other tables: foo): pay writes nothing there")):
        for code, out, err in _both(url, "en"):
            assert (code, out) == (2, ""), err
            assert f"holds no portgate ledger {words}" in err and MIGRATE in err
            assert len(err.strip().splitlines()) == 1
        engine = make_engine(url)
        try:
            with engine.connect() as conn:
                assert set(inspect(conn).get_table_names()) == ({"foo"} if url == other else set())
        finally:
            engine.dispose()


def test_a_ledger_at_an_older_revision_is_still_upgraded_and_closed(tmp_path):
    """The documented flow stays: ``pay``/``pay close`` bring an existing ledger to the newest revision."""
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    upgrade(url, "0036")
    code, out, err = _portgate("pay", "close", "--db", url, *MARCH, *AT)
    assert code == 0, err
    assert json.loads(out)["workers"] == 0 and current(url) == head()


def test_a_directory_is_named_as_one(tmp_path):
    for code, out, err in _both(f"sqlite:///{tmp_path}", "en"):
        assert (code, out) == (2, ""), err
        assert err.strip() == f"portgate: --db: '{tmp_path}' is a directory, not a SQLite file: give the ledger " \
                              f"file in it (sqlite:///DIR/ledger.db)"
    code, _out, err = _portgate("pay", "close", "--db", f"sqlite:///{tmp_path}", *MARCH)
    assert code == 2 and f"'{tmp_path}' é um diretório, não um arquivo SQLite" in err


@pytest.fixture
def frozen_dir(tmp_path):
    """``tmp_path / "ro"`` holding a migrated ledger, then made immutable (``chattr +i``: root's
    writes refused too; mode 0555 otherwise); given back writable after the test."""
    d = tmp_path / "ro"
    d.mkdir()
    _shifts_ledger(f"sqlite:///{d / 'ledger.db'}")
    root = os.geteuid() == 0
    assert not root or shutil.which("chattr"), "chattr (e2fsprogs) is installed by scripts/setup.sh"
    if root:
        subprocess.run(["chattr", "+i", str(d)], check=True)
    else:
        d.chmod(0o555)
    yield d
    if root:
        subprocess.run(["chattr", "-i", str(d)], check=True)
    d.chmod(0o755)


def test_a_ledger_in_a_directory_that_takes_no_file_is_named_so(frozen_dir):
    """Was: ``migration of ... failed: unable to open database file``."""
    db = frozen_dir / "ledger.db"
    for code, out, err in _both(f"sqlite:///{db}", "en"):
        assert (code, out) == (2, ""), err
        (line,) = err.strip().splitlines()
        assert line.startswith(f"portgate: --db: the directory '{frozen_dir}' of SQLite file '{db}' is not "
                               f"writable"), line
        assert line.endswith("SQLite makes its journal files there") and "migration" not in line
    code, _out, err = _portgate("pay", "close", "--db", f"sqlite:///{db}", *MARCH, *AT)
    assert code == 2 and "não aceita escrita" in err


# The test seam of a race: the close runs another whole close of the same days in its own process
# once its shift half has computed the shifts, before it writes them.
RACE = """
import subprocess, sys
import central.pay.close as close
from app.cli import main

args = sys.argv[1:]
rebuild = close.rebuild_changed

def rebuilding(conn, *a, ready, **k):
    def other_first(computed):
        done = subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        ready(computed)
    return rebuild(conn, *a, ready=other_first, **k)

close.rebuild_changed = rebuilding
sys.exit(main(args))
"""


def test_a_close_raced_by_another_close_says_so(tmp_path):
    """Was: "another pay run changed these statements meanwhile" for ``shifts.shift_id``."""
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    _shifts_ledger(url)
    done = subprocess.run([sys.executable, "-c", RACE, "pay", "close", "--db", url, *MARCH, *AT],
                          capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PORTGATE_LANG": "en"},
                          timeout=300)
    assert (done.returncode, done.stdout) == (1, ""), done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("portgate: closing the month failed: another close of these days is running or ran "
                           "meanwhile, run it again ("), line
    assert "statements" not in line


def _count(url: str, table) -> int:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return conn.execute(select(func.count()).select_from(table)).scalar_one()
    finally:
        engine.dispose()


def test_an_at_before_the_last_tap_of_the_closed_days_is_refused(migrated_url):
    """Was: statements stored as computed on 10/03 for work done until the end of March."""
    _shifts_ledger(migrated_url)
    early = "2026-03-10T00:00:00+00:00"
    code, out, err = _portgate("pay", "close", "--db", migrated_url, *MARCH, "--at", early, lang="en")
    assert (code, out) == (2, ""), err
    (line,) = err.strip().splitlines()
    assert line.startswith(f"portgate: --at: {early} is before the last tap of the closed days (2026-03-"), line
    assert line.endswith("a statement is computed after the work it pays; give a later --at or leave it out (now)")
    code, _out, err = _portgate("pay", "close", "--db", migrated_url, *MARCH, "--at", early)
    assert code == 2 and "é anterior à última marcação dos dias fechados" in err
    assert _count(migrated_url, statements) == 0 and _count(migrated_url, shifts) == 0
    code, out, err = _portgate("pay", "close", "--db", migrated_url, *MARCH, *AT)
    assert code == 0 and json.loads(out)["written"] > 0, err
