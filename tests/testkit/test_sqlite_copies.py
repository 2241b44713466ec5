"""``testkit.sqlite_copies.copy_made_once``: a SQLite file made once per process and name, each
target a file of its own with the same rows; a ``make`` that fails keeps nothing."""

from __future__ import annotations

import sqlite3
from contextlib import closing

import pytest

from testkit import sqlite_copies
from testkit.sqlite_copies import copy_made_once


def _rows(path) -> list[tuple]:
    with closing(sqlite3.connect(path)) as c:
        return c.execute("SELECT x FROM t ORDER BY x").fetchall()


def test_made_once_and_each_copy_its_own(tmp_path):
    made = []

    def make(path):
        made.append(path)
        with closing(sqlite3.connect(path)) as c, c:
            c.execute("CREATE TABLE t (x int)")
            c.execute("INSERT INTO t VALUES (1)")

    name = f"test-copies-{tmp_path.name}"
    copy_made_once(name, make, tmp_path / "a.db")
    copy_made_once(name, make, tmp_path / "b.db")
    assert len(made) == 1 and made[0].parent != tmp_path
    assert _rows(tmp_path / "a.db") == _rows(tmp_path / "b.db") == [(1,)]
    with closing(sqlite3.connect(tmp_path / "a.db")) as c, c:
        c.execute("INSERT INTO t VALUES (2)")
    assert _rows(tmp_path / "a.db") == [(1,), (2,)]
    assert _rows(tmp_path / "b.db") == [(1,)] and _rows(made[0]) == [(1,)]  # neither the other copy nor the source
    sqlite_copies._MADE.pop(name)


def test_a_make_that_fails_keeps_nothing(tmp_path):
    name = f"test-fails-{tmp_path.name}"

    def broken(path):
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        copy_made_once(name, broken, tmp_path / "a.db")
    assert name not in sqlite_copies._MADE and not (tmp_path / "a.db").exists()
