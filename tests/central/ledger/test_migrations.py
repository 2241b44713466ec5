

def test_a_database_made_by_create_all_is_adopted_not_recreated(tmp_path):
    """The ingest of an early build created tables without Alembic: migrating stamps it, then the
    pay command's migration does not fail with 'table already exists'."""
    from central.db import load_all_tables, make_engine
    from central.ledger.migrate import current, head, upgrade

    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = make_engine(url)
    load_all_tables().create_all(engine)
    engine.dispose()
    assert current(url) is None
    assert upgrade(url) == head()
    assert upgrade(url) == head()


def test_tables_left_by_a_killed_first_migration_are_made_again(tmp_path):
    """A build whose first revision committed DDL without its version row left empty tables and no
    revision: the next migration drops them and runs from the start."""
    import sqlite3

    from central.ledger.migrate import head, upgrade

    path = tmp_path / "half.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE dead_letters (id INTEGER PRIMARY KEY, topic TEXT)")
    con.commit()
    con.close()
    assert upgrade(f"sqlite:///{path}") == head()


def test_a_revisionless_table_with_rows_is_refused_not_dropped(tmp_path):
    import sqlite3

    import pytest

    from central.ledger.migrate import upgrade
    from portgate.errors import StoreError

    path = tmp_path / "rows.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE dead_letters (id INTEGER PRIMARY KEY, topic TEXT)")
    con.execute("INSERT INTO dead_letters (topic) VALUES ('x')")
    con.commit()
    con.close()
    with pytest.raises(StoreError, match="dead_letters holds rows"):
        upgrade(f"sqlite:///{path}")
    con = sqlite3.connect(path)
    assert con.execute("SELECT count(*) FROM dead_letters").fetchone() == (1,)
    con.close()


def test_a_locked_ledger_exits_1_for_a_restart_not_2(tmp_path):
    """Another writer holding the SQLite file is a state a restart recovers from: exit 1."""
    import sqlite3
    import subprocess
    import sys

    path = tmp_path / "locked.db"
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("BEGIN IMMEDIATE")
    try:
        proc = subprocess.run([sys.executable, "-m", "app.cli", "ledger", "migrate", "--db", f"sqlite:///{path}"],
                              capture_output=True, text=True)
    finally:
        con.execute("ROLLBACK")
        con.close()
    assert proc.returncode == 1, proc.stderr
    assert "database is locked" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
