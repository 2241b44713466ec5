"""``central.db.say_when_waiting``: a command line says on stderr why it waits for the ledger
(issue 37 item 2: ``portgate rotation dispatch`` hung silently with 2 of 3 nodes killed). Real
waits: a commit on a PostgreSQL that requires a synchronous standby it does not have (what strict
mode does with its replicas gone), released by clearing ``synchronous_standby_names``; a connection
to a real listener that never answers. ``central.registry.cli.transaction`` (the registry's and the
rotation's commands) prints the notice through ``say_waiting``."""

from __future__ import annotations

import socket
import threading

import pytest
from sqlalchemy import text

from central.db import ledger_hosts, make_engine, say_when_waiting
from central.registry.cli import say_waiting
from testkit.postgres import PostgresCluster
from testkit.wait import wait_until


@pytest.fixture(scope="module")
def sync_cluster():
    pg = PostgresCluster()
    pg.start()
    admin = make_engine(pg.url, isolation_level="AUTOCOMMIT")
    with admin.connect() as c:  # the test cluster runs synchronous_commit=off: on for this database
        c.execute(text(f"ALTER DATABASE {pg.dbname} SET synchronous_commit = on"))
    admin.dispose()
    yield pg
    pg.stop()


def _set_standby(pg, names: str) -> None:
    admin = make_engine(pg.url, isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f"ALTER SYSTEM SET synchronous_standby_names = '{names}'"))
        c.execute(text("SELECT pg_reload_conf()"))
    admin.dispose()


def test_a_commit_waiting_for_replicas_is_said_and_goes_on(sync_cluster):
    said: list[tuple[str, str]] = []
    engine = make_engine(sync_cluster.url)
    say_when_waiting(engine, lambda kind, hosts: said.append((kind, hosts)), after_s=0.5)
    with engine.begin() as c:  # answered at once: no notice
        c.execute(text("CREATE TABLE t (x int)"))
    _set_standby(sync_cluster, "nobody")
    done = threading.Event()

    def write():
        with engine.begin() as c:
            c.execute(text("INSERT INTO t VALUES (1)"))
        done.set()

    threading.Thread(target=write, daemon=True).start()
    try:
        wait_until(lambda: said, timeout=60, what=f"a notice for the waiting commit (said {said})")
    finally:
        _set_standby(sync_cluster, "")  # the waiting commit is released
    assert said[0] == ("commit", f"127.0.0.1:{sync_cluster.port}")
    wait_until(done.is_set, timeout=60, what="the commit released")
    with engine.connect() as c:
        assert c.execute(text("SELECT count(*) FROM t")).scalar() == 1
    assert len(said) == 1  # the first commit answered at once: nothing said for it
    engine.dispose()


def test_a_connection_nobody_answers_is_said():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)  # accepts, never answers
    port = srv.getsockname()[1]
    said: list[tuple[str, str]] = []
    engine = make_engine(f"postgresql+psycopg://postgres@/ledger?host=127.0.0.1:{port}&connect_timeout=3")
    say_when_waiting(engine, lambda kind, hosts: said.append((kind, hosts)), after_s=0.5)
    try:
        with pytest.raises(Exception, match="timeout"):
            engine.connect()
    finally:
        srv.close()
        engine.dispose()
    assert said == [("connect", f"127.0.0.1:{port}")]


def test_hosts_of_a_multi_host_url():
    engine = make_engine("postgresql+psycopg://postgres:secret@/ledger?host=127.0.0.1:5433&host=127.0.0.1:5434"
                         "&target_session_attrs=read-write")
    assert ledger_hosts(engine) == "127.0.0.1:5433, 127.0.0.1:5434"


def test_the_cli_notice_is_a_sentence_on_stderr(capsys):
    say_waiting("commit", "127.0.0.1:5433")
    say_waiting("connect", "127.0.0.1:5433")
    out = capsys.readouterr()
    assert out.out == ""
    lines = out.err.splitlines()
    assert "127.0.0.1:5433" in lines[0] and "replicas" in lines[0] and "check before repeating" in lines[0]
    assert "127.0.0.1:5433" in lines[1] and "no server has answered yet" in lines[1]
