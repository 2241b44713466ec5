"""A throw-away PostgreSQL cluster for tests, benchmarks and the demo.

``PostgresCluster`` runs ``initdb`` + ``pg_ctl`` from ``/usr/lib/postgresql/<ver>/bin`` (highest
version found, or ``PG_BIN``-style ``bindir`` argument) on a free loopback port, with its unix
socket in the same temporary directory. Run as root, the server runs as an unprivileged user
(``postgres`` if it exists, else ``nobody``) through ``runuser -u USER --``, and the data directory is
owned by that user. ``url`` is a SQLAlchemy URL (``postgresql+psycopg://...``) over TCP loopback with
trust authentication. ``stop()`` stops the server (fast mode) and removes the directory.

Usage::

    with PostgresCluster() as pg:
        engine = make_engine(pg.url)

Errors: ``StoreError`` if no PostgreSQL binaries are found or the server does not start (the
message carries the tail of the server log).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from app.cluster.pg import DEFAULT_DB, _run_as_user, find_bindir, free_port  # noqa: F401 (moved: portgate demo --cluster)
from portgate.errors import StoreError


class PostgresCluster:
    """One throw-away cluster. ``start()`` returns the SQLAlchemy URL; ``stop()`` removes everything."""

    def __init__(self, *, bindir: str | Path | None = None, dbname: str = DEFAULT_DB, options: str = "") -> None:
        self.bindir = Path(bindir) if bindir else find_bindir()
        self.options = options  # more server settings (``-c name=value ...``), after the defaults
        self.dbname = dbname
        self.user = _run_as_user()
        self.port: int | None = None
        self.tmp: Path | None = None
        self.url: str | None = None

    # -- helpers -------------------------------------------------------------------------------
    def _cmd(self, *args: str) -> list[str]:
        cmd = [str(self.bindir / args[0]), *args[1:]]
        return ["runuser", "-u", self.user, "--", *cmd] if self.user else cmd

    def _run(self, *args: str) -> subprocess.CompletedProcess:
        """Run a PostgreSQL program to its end. Interrupted (SIGTERM/SIGINT in a benchmark,
        ``bench/_cli.py``), it gets SIGTERM and is waited for: ``runuser`` passes SIGTERM on to the
        program (``initdb`` then removes its data directory), where SIGKILL would leave it running."""
        proc = subprocess.Popen(self._cmd(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            out, err = proc.communicate()
        except BaseException:
            proc.terminate()
            proc.communicate()
            raise
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    @property
    def datadir(self) -> Path:
        assert self.tmp is not None
        return self.tmp / "data"

    @property
    def logfile(self) -> Path:
        assert self.tmp is not None
        return self.tmp / "server.log"

    def _log_tail(self) -> str:
        try:
            return self.logfile.read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    def _pg_ctl_start(self) -> subprocess.CompletedProcess:
        opts = (f"-p {self.port} -k {self.tmp} -c listen_addresses=127.0.0.1 -c fsync=off "
                "-c synchronous_commit=off -c full_page_writes=off -c max_connections=50 " + self.options)
        return self._run("pg_ctl", "-D", str(self.datadir), "-l", str(self.logfile), "-o", opts, "-w", "-t", "60", "start")

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> str:
        """initdb, start on a free port, create the database; return the SQLAlchemy URL."""
        self.tmp = Path(tempfile.mkdtemp(prefix="portgate-pg-"))
        os.chmod(self.tmp, 0o755)
        if self.user:
            entry = pwd.getpwnam(self.user)
            os.chown(self.tmp, entry.pw_uid, entry.pw_gid)
        init = self._run("initdb", "-D", str(self.datadir), "-U", "postgres", "-A", "trust",
                         "-E", "UTF8", "--locale=C", "--no-sync")
        if init.returncode != 0:
            self._cleanup()
            raise StoreError(f"initdb failed: {init.stderr.strip()[-1000:]}")
        for _attempt in range(3):
            self.port = free_port()
            started = self._pg_ctl_start()
            if started.returncode == 0:
                break
        else:
            tail = self._log_tail()
            self._cleanup()
            raise StoreError(f"PostgreSQL did not start: {started.stderr.strip()} {tail}")
        created = self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres",
                            self.dbname)
        if created.returncode != 0:
            self.stop()
            raise StoreError(f"createdb failed: {created.stderr.strip()}")
        self.url = f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{self.dbname}"
        return self.url

    def create_database(self, name: str, template: str | None = None) -> str:
        """Create another database in the same cluster; return its URL (one per test module).
        ``template``: a copy of that database of the cluster (``CREATE DATABASE ... TEMPLATE``: a
        migrated ledger in a few milliseconds instead of the migrations); nobody may be connected to
        it. ``STRATEGY FILE_COPY`` (PostgreSQL 15 and later): the server copies the template's files
        (~0.03-0.06 s of its CPU a migrated ledger) instead of logging each page to the WAL
        (~0.07-0.09 s; issue 32 item 1). One ``CREATE DATABASE`` over a psycopg connection, not a
        ``runuser`` + ``createdb`` process pair (issue 32: ~10 ms of CPU each, for hundreds of databases a run).
        ``StoreError`` (the server's words) if the server refuses."""
        import psycopg  # lazy: the benchmarks and the demo import this module without needing it
        from psycopg import sql

        statement = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
        if template:
            statement += sql.SQL(" TEMPLATE {}").format(sql.Identifier(template))
        for attempt in range(50):
            try:
                with psycopg.connect(host="127.0.0.1", port=self.port, user="postgres", dbname="postgres",
                                     autocommit=True) as conn:
                    # copied file by file: PostgreSQL 15's default (WAL_LOG) writes every page to the
                    # WAL; a server before 15 has no STRATEGY and copies files anyway
                    copy = sql.SQL(" STRATEGY FILE_COPY") if template and conn.info.server_version >= 150000 else sql.SQL("")
                    conn.execute(statement + copy)
                break
            except psycopg.errors.ObjectInUse as busy:  # "source database ... is being accessed by other users"
                if attempt == 49:
                    raise StoreError(f"createdb {name} failed: {busy}") from busy
                time.sleep(0.1)  # the template's last session is still ending on the server
            except psycopg.Error as refused:
                raise StoreError(f"createdb {name} failed: {refused}") from refused
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{name}"

    def restart(self) -> None:
        """Start the server again on its port after ``pg_ctl stop`` (a restore in between)."""
        started = self._pg_ctl_start()
        if started.returncode != 0:
            raise StoreError(f"PostgreSQL did not start again: {started.stderr.strip()} {self._log_tail()}")

    def stop(self, *, remove_in_background: bool = False) -> None:
        """Stop the server (fast shutdown) and remove its directory. Safe to call twice.
        ``remove_in_background``: the directory is renamed (``<dir>.removing``, gone from its path at
        once) and deleted by a detached ``rm -rf`` that outlives this process; the session's cluster of
        the suite (``tests/central/conftest.py``) holds hundreds of databases, whose removal took 60 s
        of a worker's last teardown on a busy disk (issue 32)."""
        if self.tmp is not None and self.datadir.exists():
            self._run("pg_ctl", "-D", str(self.datadir), "-m", "fast", "-w", "stop")
        self._cleanup(remove_in_background)

    def _cleanup(self, remove_in_background: bool = False) -> None:
        if self.tmp is not None:
            if not (remove_in_background and _remove_in_background(self.tmp)):
                shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None
        self.url = None

    def __enter__(self) -> PostgresCluster:
        try:
            self.start()
        except BaseException:  # SIGTERM/SIGINT mid start-up (bench/_cli.py): no server or directory left
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _remove_in_background(path: Path) -> bool:
    """Rename ``path`` to ``<path>.removing`` and start a detached ``rm -rf`` of it (its own session:
    it goes on after the caller exits). False when it could not (the caller removes it itself)."""
    doomed = path.with_name(path.name + ".removing")
    try:
        path.rename(doomed)
        subprocess.Popen(["rm", "-rf", "--", str(doomed)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:
        if doomed.exists() and not path.exists():
            doomed.rename(path)
        return False
    return True


@contextlib.contextmanager
def postgres_url(**kwargs):
    """Context manager yielding the URL of a fresh throw-away cluster; stops it on exit."""
    cluster = PostgresCluster(**kwargs)
    try:
        yield cluster.start()
    finally:
        cluster.stop()


@contextlib.contextmanager
def frozen(cluster: PostgresCluster):
    """The server of ``cluster`` stopped (SIGSTOP to the postmaster, then to every process it
    started) while the block runs, then continued (SIGCONT, children first): a hung node whose TCP
    connections stay up (the kernel still acknowledges), what a paused machine or a node stuck on
    its disk looks like. Root or the server's user only."""
    import signal

    assert cluster.tmp is not None
    pid = int((cluster.datadir / "postmaster.pid").read_text().split()[0])
    os.kill(pid, signal.SIGSTOP)  # first: it starts no new process meanwhile
    children = [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    for child in children:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGSTOP)
    try:
        yield pid
    finally:
        for child in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGCONT)
        os.kill(pid, signal.SIGCONT)


def require_sync_standby(engine, names: str) -> None:
    """Make the cluster of ``engine`` (a SQLAlchemy engine, superuser) hold every commit for a
    synchronous standby named ``names`` ('' = none), and return once commits are held (or no
    longer). ``ALTER SYSTEM`` + ``pg_reload_conf()``; then a new backend must read the value (the
    postmaster reloaded it and signalled every process before forking that backend); then a
    ``CHECKPOINT``, which the checkpointer runs only after handling that signal: it is the
    checkpointer that publishes the setting to the committing backends (``sync_standbys_defined``),
    and a commit sent before it did was not held (seen in CI under load)."""
    from sqlalchemy import text

    from testkit.wait import wait_until

    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
        c.execute(text(f"ALTER SYSTEM SET synchronous_standby_names = '{names}'"))
        c.execute(text("SELECT pg_reload_conf()"))

    def reloaded() -> bool:
        with engine.connect() as c:
            return c.execute(text("SHOW synchronous_standby_names")).scalar() == names

    wait_until(reloaded, timeout=60, what=f"synchronous_standby_names = {names!r} reloaded")
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
        for _ in range(2):  # the second starts after the first: past any iteration already under way
            c.execute(text("CHECKPOINT"))
