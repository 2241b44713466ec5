"""The throw-away PostgreSQL test kit starts a real server, serves SQL, and removes itself."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from portgate.errors import StoreError
from testkit.postgres import PostgresCluster
from testkit.wait import wait_until


@pytest.mark.postgres  # starts its own cluster, not through a fixture
def test_cluster_serves_sql_and_removes_its_directory():
    cluster = PostgresCluster()
    url = cluster.start()
    tmp = Path(cluster.tmp)
    assert url.startswith("postgresql+psycopg://")
    engine = create_engine(url)
    with engine.connect() as conn:
        assert conn.execute(text("select 1 + 1")).scalar() == 2
        version = conn.execute(text("show server_version")).scalar()
    engine.dispose()
    assert int(version.split(".")[0]) >= 15
    cluster.stop()
    assert not tmp.exists()
    cluster.stop()  # idempotent


def test_session_cluster_gives_separate_databases(pg_cluster):
    url_a = pg_cluster.create_database("kit_a")
    url_b = pg_cluster.create_database("kit_b")
    assert url_a != url_b
    for url in (url_a, url_b):
        engine = create_engine(url)
        with engine.connect() as conn:
            assert conn.execute(text("select current_database()")).scalar() in {"kit_a", "kit_b"}
        engine.dispose()


def test_a_database_made_from_a_template_holds_its_rows_and_a_taken_name_is_refused(pg_cluster):
    """``create_database(name, template=...)`` copies the template's tables and rows; a name the
    cluster already has is ``StoreError`` with the server's words (one ``CREATE DATABASE`` each)."""
    source = create_engine(pg_cluster.create_database("kit_template"))
    with source.begin() as conn:
        conn.execute(text("create table t (n int)"))
        conn.execute(text("insert into t values (7)"))
    source.dispose()  # nobody may be connected to a template
    copy = create_engine(pg_cluster.create_database("kit_copy", template="kit_template"))
    with copy.connect() as conn:
        assert conn.execute(text("select n from t")).scalar() == 7
    copy.dispose()
    with pytest.raises(StoreError, match='createdb kit_copy failed: database "kit_copy" already exists'):
        pg_cluster.create_database("kit_copy")


@pytest.mark.postgres  # starts its own cluster, not through a fixture
def test_a_cluster_removed_in_background_leaves_its_path_at_once_and_its_files_soon():
    cluster = PostgresCluster()
    cluster.start()
    tmp = Path(cluster.tmp)
    cluster.stop(remove_in_background=True)
    assert not tmp.exists() and cluster.tmp is None and cluster.url is None
    doomed = tmp.with_name(tmp.name + ".removing")
    wait_until(lambda: not doomed.exists(), timeout=120, what=f"{doomed} removed by the detached rm")
    cluster.stop(remove_in_background=True)  # idempotent
