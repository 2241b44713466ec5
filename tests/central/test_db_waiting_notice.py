"""``central.db.say_when_waiting``: a command line says on stderr why it waits for the ledger
(issue 37 item 2: ``portgate rotation dispatch`` hung silently with 2 of 3 nodes killed). Real
waits: a commit on a PostgreSQL that requires a synchronous standby it does not have (what strict
mode does with its replicas gone), released by clearing ``synchronous_standby_names``; a connection
to a real listener that never answers. ``central.registry.cli.transaction`` (the registry's and the
rotation's commands) printed the notice through ``say_waiting``; now every ``portgate`` command that
opens the ledger does (``central.db.make_engine`` under the root command's Click context), run here
as a real ``portgate`` process against the listener."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time

import pytest
from sqlalchemy import text

from central.db import ledger_hosts, make_engine, say_when_waiting
from central.registry.cli import say_waiting
from testkit.cli import run_here
from testkit.postgres import PostgresCluster, require_sync_standby
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


def silent_listener() -> tuple[socket.socket, int]:
    """(socket, port): a real listener on loopback that accepts and never answers (a node cut off)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    return srv, srv.getsockname()[1]


def test_a_commit_waiting_for_replicas_is_said_and_goes_on(sync_cluster):
    said: list[tuple[str, str]] = []
    engine = make_engine(sync_cluster.url)
    say_when_waiting(engine, lambda kind, hosts: said.append((kind, hosts)), after_s=0.5)
    with engine.begin() as c:  # answered at once: no notice
        c.execute(text("CREATE TABLE t (x int)"))
    admin = make_engine(sync_cluster.url)  # no notices of its own: only the waiting commit is said
    require_sync_standby(admin, "nobody")
    done = threading.Event()
    commits: list[int] = []

    def write():
        # A commit waits for the standby only once the checkpointer has published the reloaded
        # setting to shared memory (after the backend's own reload, which SHOW tells): a commit
        # answered at once before that (CI under load) is followed by another, until one waits.
        while not said:
            with engine.begin() as c:  # the backend reloads its settings at a command: wait until it has
                wait_until(lambda: c.execute(text("SHOW synchronous_standby_names")).scalar() == "nobody",
                           timeout=60, what="the standby setting reloaded")
                c.execute(text("INSERT INTO t VALUES (1)"))
            commits.append(1)
            time.sleep(0.05)
        done.set()

    threading.Thread(target=write, daemon=True).start()
    try:
        wait_until(lambda: said, timeout=120, what=f"a notice for the waiting commit (said {said})")
    finally:
        require_sync_standby(admin, "")  # the waiting commit is released
    assert said[0] == ("commit", f"127.0.0.1:{sync_cluster.port}")
    wait_until(done.is_set, timeout=60, what="the commit released")
    with engine.connect() as c:
        assert c.execute(text("SELECT count(*) FROM t")).scalar() == len(commits) >= 1
    assert len(said) == 1  # the first commit answered at once: nothing said for it
    engine.dispose()
    admin.dispose()


def said_on_a_silent_connect(connect_timeout: int) -> None:
    """A connect to a listener that never answers, with the notice after 0.5 s: the connect fails
    by its timeout and the notice was said once, naming the listener."""
    srv, port = silent_listener()
    said: list[tuple[str, str]] = []
    engine = make_engine(f"postgresql+psycopg://postgres@/ledger?host=127.0.0.1:{port}&connect_timeout={connect_timeout}")
    say_when_waiting(engine, lambda kind, hosts: said.append((kind, hosts)), after_s=0.5)
    try:
        with pytest.raises(Exception, match="timeout"):
            engine.connect()
    finally:
        srv.close()
        engine.dispose()
    assert said == [("connect", f"127.0.0.1:{port}")]


def test_a_connection_nobody_answers_is_said():
    said_on_a_silent_connect(connect_timeout=3)


def test_a_connect_failing_past_the_delay_is_said_even_when_the_timer_never_ran(mocker):
    """A process starved of CPU wakes with the connect's timeout and the notice's timer due at once;
    the failure must not exit unsaid (CI at load 10+: the English run below printed only the
    error). The timer's thread that never runs is played by a ``Timer.start`` that does nothing."""
    mocker.patch.object(threading.Timer, "start", lambda self: None)
    said_on_a_silent_connect(connect_timeout=2)


def test_a_connect_refused_before_the_delay_says_nothing():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    port = srv.getsockname()[1]
    srv.close()  # nobody listens: refused at once
    said: list[tuple[str, str]] = []
    engine = make_engine(f"postgresql+psycopg://postgres@/ledger?host=127.0.0.1:{port}&connect_timeout=2")
    say_when_waiting(engine, lambda kind, hosts: said.append((kind, hosts)), after_s=600)
    with pytest.raises(Exception, match="refused|could not connect|failed"):
        engine.connect()
    engine.dispose()
    assert said == []


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


@pytest.fixture()
def silent_url():
    """A PostgreSQL URL on a real listener that accepts and never answers (a node cut off), with a
    ``connect_timeout`` past the notice's 3 s."""
    srv, port = silent_listener()
    yield f"postgresql+psycopg://postgres@/ledger?host=127.0.0.1:{port}&connect_timeout=6", port
    srv.close()


@pytest.fixture(scope="module", autouse=True)
def english_run(tmp_path_factory):
    """(port, process): the English notice's real ``portgate`` process (``portgate --lang en evidence
    audit``, ``PORTGATE_LANG=pt``) on a listener of its own that accepts and never answers
    (``connect_timeout=6``), started when the module's first test starts so that its wait goes on
    while the other tests run; ``test_the_notice_in_english_under_the_top_level_lang`` reads it."""
    srv, port = silent_listener()
    keys = tmp_path_factory.mktemp("english") / "keys"
    keys.mkdir()
    url = f"postgresql+psycopg://postgres@/ledger?host=127.0.0.1:{port}&connect_timeout=6"
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "--lang", "en", "evidence", "audit", "--db", url,
                             "--keys-dir", str(keys)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PORTGATE_LANG": "pt"})
    yield port, proc
    if proc.poll() is None:
        proc.kill()
    proc.communicate()
    srv.close()


@pytest.mark.parametrize("command", [("pay", "overdue", "--db"), ("ledger", "migrate", "--db")],
                         ids=["pay overdue", "ledger migrate"])
def test_other_command_groups_say_why_they_wait(silent_url, command):
    """Every command that opens the ledger says it (``central.db.make_engine`` under a ``portgate``
    command), not only the registry's and the rotation's: two other groups, pt-BR by default. In this
    process (``testkit.cli.run_here``: the same ``app.cli.main`` without a Python start); the English
    notice below runs the installed command."""
    url, port = silent_url
    done = run_here([*command, url], env={"PORTGATE_LANG": "pt"})
    assert done.returncode != 0, done  # the listener never answers: the command ends failing
    assert f"Aguardando o livro-razão (banco de dados) em 127.0.0.1:{port}" in done.stderr, done.stderr
    assert done.stderr.count("Aguardando o livro-razão") == 1, done.stderr  # once per wait


def test_the_notice_in_english_under_the_top_level_lang(english_run):
    port, proc = english_run
    out, err = proc.communicate(timeout=120)
    done = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    assert done.returncode != 0, done
    assert f"Waiting for the ledger (database) at 127.0.0.1:{port}: no server has answered yet" in done.stderr, \
        done.stderr
