"""A ledger already at the newest revision is recognised without Alembic (issue 32: ~0.15 s of CPU
a process start): ``central.ledger.migrate.head_revision`` reads the newest revision from the version
files and ``upgrade`` reads the ``alembic_version`` row under the same lock a migration takes; any
other state (another revision, no bookkeeping, a version file it cannot read, two heads) is
Alembic's to decide."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

import pytest
from sqlalchemy import text

from central.db import make_engine
from central.ledger import migrate
from central.ledger.migrate import head, head_revision, upgrade

CHECK = """import sys
from central.db import TABLE_MODULES
from central.ledger.migrate import upgrade
print(upgrade(sys.argv[1]), "alembic" in sys.modules, all(m in sys.modules for m in TABLE_MODULES))"""


def test_the_newest_revision_read_from_the_files_is_alembic_s_head():
    assert head_revision() == head()


def test_a_ledger_at_head_is_checked_without_importing_alembic_and_every_table_is_loaded(migrated_url):
    proc = subprocess.run([sys.executable, "-c", CHECK, migrated_url], capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [head(), "False", "True"], proc.stdout


def test_a_ledger_one_revision_behind_is_migrated_by_alembic(tmp_path):
    url = f"sqlite:///{tmp_path / 'behind.db'}"
    previous = upgrade(url, "0036")
    assert previous == "0036" != head()
    proc = subprocess.run([sys.executable, "-c", CHECK, url], capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [head(), "True", "True"], proc.stdout


def test_a_version_table_of_two_rows_is_left_to_alembic(tmp_path):
    """Two rows (branches Alembic would have to merge): not "at head" for the quick check, so
    Alembic's own upgrade runs (and answers with what it finds)."""
    url = f"sqlite:///{tmp_path / 'two.db'}"
    upgrade(url)
    engine = make_engine(url)
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO alembic_version (version_num) VALUES ('0036')"))
        assert migrate._at_head(conn) is None
        conn.execute(text("DELETE FROM alembic_version WHERE version_num = '0036'"))
        assert migrate._at_head(conn) == head()
    engine.dispose()


def test_a_locked_ledger_at_head_still_exits_1_for_a_restart(tmp_path):
    """The quick check takes the lock a migration takes (``BEGIN IMMEDIATE`` on SQLite): another
    writer holding the file is the same transient refusal as before, exit 1, one line."""
    path = tmp_path / "locked.db"
    upgrade(f"sqlite:///{path}")
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("BEGIN IMMEDIATE")
    try:
        proc = subprocess.run([sys.executable, "-m", "app.cli", "ledger", "migrate", "--db", f"sqlite:///{path}"],
                              capture_output=True, text=True, timeout=180)
    finally:
        con.execute("ROLLBACK")
        con.close()
    assert proc.returncode == 1, proc.stderr
    assert "database is locked" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr


@pytest.fixture
def versions(tmp_path, monkeypatch):
    """``write(name, revision_line, down_line)``: a version file in a migrations directory of the
    test's own, which ``head_revision`` reads (its cache emptied before and after)."""
    (tmp_path / "versions").mkdir()
    monkeypatch.setattr(migrate, "MIGRATIONS", tmp_path)
    head_revision.cache_clear()

    def write(name: str, revision: str, down: str) -> None:
        (tmp_path / "versions" / name).write_text(f'"""x"""\n{revision}\n{down}\n', encoding="utf-8")

    yield write
    head_revision.cache_clear()


def test_the_files_head_is_the_revision_no_other_names_merges_counted(versions):
    versions("__init__.py", "", "")
    versions("a.py", "revision = 'a'", "down_revision = None")
    versions("b.py", "revision = 'b'", "down_revision = 'a'")
    versions("c.py", 'revision: str = "c"', "down_revision: str | None = 'a'")
    versions("d.py", "revision = 'd'", "down_revision = ('b', 'c')")
    assert head_revision() == "d"


@pytest.mark.parametrize("second", [("c.py", "revision = 'c'", "down_revision = 'a'"),  # two heads
                                    ("c.py", "revision = make_id()", "down_revision = 'b'"),  # not read
                                    ("c.py", "revision = 'c'", "# down_revision = 'b'")])  # no down line
def test_two_heads_or_a_line_it_cannot_read_leave_the_head_to_alembic(versions, second):
    versions("a.py", "revision = 'a'", "down_revision = None")
    versions("b.py", "revision = 'b'", "down_revision = 'a'")
    versions(*second)
    assert head_revision() is None


READ_ONLY = """import sys
from central.ledger.migrate import existing_ledger, require_ledger
require_ledger(sys.argv[1])
existing_ledger(sys.argv[1])
print("alembic" in sys.modules)"""


def test_the_read_only_checks_of_a_ledger_at_head_need_no_alembic(migrated_url):
    """``pay --what-if``'s and ``pay``'s checks (``require_ledger``, ``existing_ledger``) read the
    one ``alembic_version`` row themselves."""
    proc = subprocess.run([sys.executable, "-c", READ_ONLY, migrated_url], capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False"], proc.stdout


def test_a_version_table_of_two_rows_is_read_by_alembic_in_the_read_only_checks(tmp_path):
    """Two rows: Alembic reads them, and refuses as it did (more than one head)."""
    from alembic.util import CommandError

    url = f"sqlite:///{tmp_path / 'two.db'}"
    upgrade(url)
    engine = make_engine(url)
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO alembic_version (version_num) VALUES ('0036')"))
    engine.dispose()
    with pytest.raises(CommandError, match="more than one head"):
        migrate.require_ledger(url)
