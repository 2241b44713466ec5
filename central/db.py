"""The office database: one SQLAlchemy ``MetaData`` every central module adds its tables to, and the
engine factory (SQLite by default, PostgreSQL in production; the same code and migrations).

Events are append-only and keep the gate's MAC; everything else is derived from them and can be
rebuilt. Table modules: ``central.ledger.schema`` (events, dead letters, gate sequences, shifts,
statements), ``central.registry.schema``, ``central.rotation.schema``... Alembic (``central/migrations``)
sees them all through ``central.db.load_all_tables()``.
"""

from __future__ import annotations

import importlib
import os
import re
import threading
import time
from collections.abc import Callable
from urllib.parse import quote

from sqlalchemy import MetaData, create_engine, event
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.exc import DBAPIError, IntegrityError, InvalidatePoolError, OperationalError, SQLAlchemyError

from portgate.errors import BadInput, StoreConflict, StoreError, StoreUnavailable
from portgate.interrupts import interrupt_in

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}
metadata = MetaData(naming_convention=NAMING)

TABLE_MODULES: list[str] = [
    "central.ledger.schema",
    "central.registry.schema",
    "central.rotation.schema",
    "central.production.schema",
    "central.ledger.tables",
    "central.web.schema",
    "central.calls.schema",
    "central.ledger.corrections",
    "central.pay.billing_store",
    "central.registry.admission_store",
    "central.ledger.changes",
    "central.web.workerschema",
    "central.pay.slip_codes",
    "central.registry.name_search",  # the workers' substring index (no table of its own in metadata)
    # add your table module here, one line each
]


def load_all_tables() -> MetaData:
    """Import every table module so ``metadata`` knows all tables; return it."""
    for name in TABLE_MODULES:
        importlib.import_module(name)
    return metadata


#: The databases the ledger and its migrations run on (docs/office.md, first paragraph).
BACKENDS = ("sqlite", "postgresql")
#: libpq's ``connect_timeout`` (seconds, per host) on a PostgreSQL URL that names none (make_engine)
CONNECT_TIMEOUT_S = 5
#: what a database URL the ledger takes looks like (a refusal of another one says it)
USE = "the ledger runs on SQLite (sqlite:///path.db) or PostgreSQL (postgresql+psycopg://user@host/db)"


def make_engine(url: str | URL, *, existing_file: bool = False, **kwargs) -> Engine:
    """Create an engine for ``url`` (``sqlite:///path`` or ``postgresql+psycopg://...``).

    ``existing_file`` (SQLite file only; a server such as ``portgate office serve``, which never
    starts a ledger): every connection opens the file that is there (``_existing_file_only``): a
    missing file fails the connection instead of SQLite creating an empty one, and a pooled
    connection to a file since replaced or removed is dropped at checkout.

    SQLite gets WAL, ``synchronous=FULL`` and foreign keys on every connection. A PostgreSQL URL
    without ``connect_timeout`` gets libpq's ``connect_timeout=CONNECT_TIMEOUT_S`` (seconds, for
    each host of a multi-host URL): a host that does not answer (a node of a replicated ledger
    killed or cut off, issue 37) fails the connection with "timeout expired" (``unreachable``)
    instead of a wait of minutes on the kernel's TCP retries; the URL's own value wins. Raises
    ``BadInput`` (exit 2, one line, password hidden) for a database other than ``BACKENDS``
    (``mysql://...``) or one whose driver is not installed (``postgresql://`` asks for psycopg2;
    this build has psycopg 3), and SQLAlchemy's ``ArgumentError`` for text that is not a URL.
    """
    parsed = make_url(url)
    shown = parsed.render_as_string(hide_password=True)
    if parsed.get_backend_name() not in BACKENDS:
        raise BadInput(f"{parsed.get_backend_name()} is not supported: {USE}", where=f"database URL {shown!r}")
    if parsed.get_backend_name() == "postgresql" and "connect_timeout" not in parsed.query:
        args = dict(kwargs.pop("connect_args", None) or {})
        args.setdefault("connect_timeout", CONNECT_TIMEOUT_S)
        kwargs["connect_args"] = args
    try:
        engine = create_engine(url, **kwargs)
    except ImportError as exc:  # the dialect's DB-API module (psycopg2, ...) is not installed
        raise BadInput(f"the driver {exc.name or exc} is not installed: {USE}",
                       where=f"database URL {shown!r}") from exc
    _notice_for_command(engine)
    if engine.dialect.name == "sqlite":

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn, _record):  # pragma: no cover - trivial
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=FULL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.close()

        if existing_file:
            _existing_file_only(engine)
    return engine


#: ``ConnectionRecord.info`` key: (device, inode) of the SQLite file when the connection opened it
_FILE_ID = "portgate_sqlite_file"


def _file_id(path: str) -> tuple[int, int] | None:
    """(device, inode) of ``path``; None when it is not there."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _existing_file_only(engine: Engine) -> None:
    """SQLite connections of ``engine`` open its file with the URI ``mode=rw``: a missing file
    fails with ``unable to open database file`` (an ``OperationalError``, ``unreachable``)
    instead of becoming a new empty ledger (mode 0644, no tables). At checkout, a pooled
    connection whose file was replaced (another inode: a copy moved in, junk) or removed since it
    connected raises ``InvalidatePoolError`` (a ``DisconnectionError``: every older pooled
    connection dropped): the pool connects again to the file now there (or fails as above), so
    no request reads stale data from, or writes lost records to, an unlinked file. Nothing for
    ``:memory:`` or a URL that is already a SQLite URI (``uri=true``)."""
    path = engine.url.database
    if not path or path == ":memory:" or engine.url.query.get("uri") == "true":
        return
    full = os.path.abspath(path)
    uri = f"file:{quote(full)}?mode=rw"

    @event.listens_for(engine, "do_connect")
    def _open_rw(dialect, record, _cargs, cparams):
        record.info[_FILE_ID] = _file_id(full)  # before opening: a file replaced meanwhile is caught
        return dialect.dbapi.connect(uri, **{**cparams, "uri": True})

    @event.listens_for(engine, "checkout")
    def _same_file(_dbapi_conn, record, _proxy):
        if _file_id(full) != record.info.get(_FILE_ID):
            raise InvalidatePoolError(f"the ledger file {full} was replaced or removed")


#: seconds a command waits on the ledger before ``say_when_waiting`` says so
WAIT_NOTICE_S = 3.0


def ledger_hosts(engine: Engine) -> str:
    """The ledger's host(s) as a person reads them: ``127.0.0.1:5432`` or, for a multi-host URL,
    ``127.0.0.1:5433, 127.0.0.1:5434`` (no user, no password)."""
    hosts = engine.url.query.get("host")
    if hosts:
        return ", ".join([hosts] if isinstance(hosts, str) else list(hosts))
    return f"{engine.url.host or 'localhost'}:{engine.url.port or 5432}"


#: the Click context's ``meta`` key under which ``portgate`` (app/cli.py) puts ``say(kind, hosts)``
WAIT_NOTICE_META = "portgate.db.say_waiting"


def _notice_for_command(engine: Engine) -> None:
    """An engine made while a ``portgate`` command runs (any group: pay, production, evidence,
    central, office, registry...) says why it waits (``say_when_waiting``) through the ``say`` the
    root command put in its Click context (``WAIT_NOTICE_META``), for the waits of the command's
    own thread (a server's request or ingest threads log theirs instead). Nothing outside a command
    (a test, a library caller) or for SQLite."""
    import click  # lazy: only the command line has a context

    ctx = click.get_current_context(silent=True)
    say = ctx.meta.get(WAIT_NOTICE_META) if ctx is not None else None
    if say is not None:
        say_when_waiting(engine, say, thread=threading.get_ident())


class _Notice:
    """One wait's notice: ``say(*said)`` from a daemon timer after ``after_s`` seconds, or from
    ``overdue()`` when the wait failed past ``after_s`` before the timer's thread ran (a process
    starved of CPU: both wake at once and the failure's exit could win); said once either way."""

    def __init__(self, after_s: float, say: Callable[[str, str], None], said: tuple[str, str]) -> None:
        self._say, self._said = say, said
        self._due = time.monotonic() + after_s
        self._lock = threading.Lock()
        self._done = False
        self._timer = threading.Timer(after_s, self._fire)
        self._timer.daemon = True
        self._timer.start()

    def _fire(self) -> None:
        with self._lock:
            if self._done:
                return
            self._done = True
        self._say(*self._said)

    def cancel(self) -> None:
        """The wait ended: no notice from now on (one already said stays said)."""
        self._timer.cancel()
        with self._lock:
            self._done = True

    def overdue(self) -> None:
        """The wait failed: say the notice now if ``after_s`` has passed and it was not said yet."""
        self._timer.cancel()
        if time.monotonic() >= self._due:
            self._fire()


def _notice_timer(after_s: float, say: Callable[[str, str], None], said: tuple[str, str],
                  thread: int | None) -> _Notice | None:
    """A started ``_Notice`` calling ``say(*said)`` after ``after_s``; None in another thread than
    ``thread`` (when given)."""
    if thread is not None and threading.get_ident() != thread:
        return None
    return _Notice(after_s, say, said)


def _notice_connects(engine: Engine, timer: Callable[[str], _Notice | None]) -> None:
    """``say_when_waiting``'s connect half: each new connection's wait has its notice."""

    @event.listens_for(engine, "do_connect")
    def _connect(dialect, _record, cargs, cparams):
        waiting = timer("connect")
        try:
            return dialect.connect(*cargs, **cparams)
        except Exception:
            if waiting is not None:  # a connect timed out past the notice's delay: said before the error
                waiting.overdue()
            raise
        finally:
            if waiting is not None:
                waiting.cancel()


def say_when_waiting(engine: Engine, say: Callable[[str, str], None], after_s: float = WAIT_NOTICE_S,
                     thread: int | None = None) -> None:
    """Call ``say(kind, hosts)`` (from a timer thread) when a connection to the ledger or a commit
    has waited ``after_s`` seconds: ``kind`` ``"connect"`` (no host answers yet: a failover, a node
    cut off; ``connect_timeout`` ends it) or ``"commit"`` (the primary waits for its synchronous
    replicas: strict mode never acknowledges a commit no standby has, so it may still be saved);
    ``hosts`` is ``ledger_hosts``. For a command line (issue 37 item 2): a person sees why it waits
    instead of a silent hang. Said once per wait; nothing for SQLite. ``thread``: only the waits of
    that thread (``threading.get_ident()``), None: every thread's."""
    if engine.dialect.name != "postgresql":
        return
    hosts = ledger_hosts(engine)

    def timer(kind: str) -> _Notice | None:
        return _notice_timer(after_s, say, (kind, hosts), thread)

    _notice_connects(engine, timer)

    @event.listens_for(engine, "commit")
    def _commit(conn):
        waiting = timer("commit")
        if waiting is not None:
            conn.info["portgate_commit_wait"] = waiting

    def _done(record) -> None:
        waiting = record.info.pop("portgate_commit_wait", None) if record is not None else None
        if waiting is not None:
            waiting.cancel()

    @event.listens_for(engine, "checkin")
    def _checkin(_dbapi_conn, record):
        _done(record)

    @event.listens_for(engine, "reset")
    def _reset(_dbapi_conn, record, _reset_state):
        _done(record)

    @event.listens_for(engine, "begin")
    def _next(conn):  # the commit answered and the connection goes on (not checked in)
        waiting = conn.info.pop("portgate_commit_wait", None)
        if waiting is not None:
            waiting.cancel()


_BUSY = re.compile(r"database is locked|database table is locked|busy|deadlock|could not serialize"
                   r"|lock timeout|could not obtain lock", re.IGNORECASE)
#: a PostgreSQL server that answered and refused the connection for good (read_failure: exit 2)
_REFUSED = re.compile(r'(database|role) "[^"]*" does not exist|password authentication failed', re.IGNORECASE)


_UNREACHABLE = re.compile(
    r"connection is lost|connection failed|could not connect|server closed the connection|connection refused"
    r"|terminating connection|no connection to the server|consuming input failed|connection is closed"
    r"|session is read-only|read-only transaction|the database system is (starting up|shutting down|in recovery)"
    r"|the database system is not (yet )?accepting connections|server is in hot standby mode|timeout expired"
    r"|SSL connection has been closed"
    r"|unable to open database file|file is not a database|database disk image is malformed", re.IGNORECASE)


def unreachable(exc: BaseException) -> bool:
    """True for a database error that means "this server cannot take the work now, another may":
    the connection lost or refused, or a server that is (no longer) the primary (``session is
    read-only``, ``cannot execute ... in a read-only transaction``, a server starting up or shutting
    down) -- what a failover of a replicated ledger looks like from the office (issue 37; a
    multi-host URL with ``target_session_attrs=read-write`` reaches the new primary on the next
    connection). The caller retries, after ``engine.dispose()`` for a read-only session (a pooled
    connection to a demoted primary is alive and would be reused). For SQLite: the ledger file
    missing (opened ``existing_file``), replaced by junk or damaged, which a file put back ends."""
    if not isinstance(exc, DBAPIError):
        return False
    text = str(getattr(exc, "orig", None) or exc)
    return bool(_UNREACHABLE.search(text))


def read_only(exc: BaseException) -> bool:
    """True for a write refused by a standby (the pool holds a connection to a demoted primary)."""
    return bool(re.search(r"read-only", str(getattr(exc, "orig", None) or exc), re.IGNORECASE))


def read_failure(where: str, dialect: str, exc: SQLAlchemyError) -> StoreError:
    """One line, without SQL, for a ledger that cannot be read: ``StoreUnavailable`` (exit 1:
    retry) for a database server not reachable or a locked SQLite file (``database W not
    reachable: ...``); ``StoreError`` (exit 2) for a file that is not a database (``W is not a
    database``), a database without the ledger tables (``W is not a portgate ledger``) or another
    failure, including a server that answered but refused the connection for good (no such
    database or role, a wrong password: ``_REFUSED``, a configuration to fix, not worth a retry).
    ``where``: the URL with its password hidden; ``dialect``: ``engine.dialect.name``."""
    orig = getattr(exc, "orig", None) or exc
    first = (str(orig).strip().splitlines() or [type(orig).__name__])[0][:300]
    if re.search(r"file is not a database|not a database", first, re.IGNORECASE):
        return StoreError(f"{where} is not a database (not a portgate ledger): {first}")
    if re.search(r"no such table|does not exist", first, re.IGNORECASE) and "connection" not in first:
        return StoreError(f"{where} is not a portgate ledger (no ledger tables: run `portgate "
                          f"ledger migrate --db URL` on a new one): {first}")
    if isinstance(exc, OperationalError) and _REFUSED.search(first):  # the server answered: no
        return StoreError(f"reading {where} failed: {first}")  # such database or role, a wrong password
    if isinstance(exc, OperationalError) and (dialect != "sqlite" or _BUSY.search(first)):
        return StoreUnavailable(f"database {where} not reachable: {first}")
    return StoreError(f"reading {where} failed: {first}")


def store_failure(action: str, exc: SQLAlchemyError, conflict: str) -> StoreError:
    """One line for a failed database write, without SQL or parameters: ``StoreConflict`` (exit 1:
    run again) with ``action: conflict`` for a unique key another run took meanwhile or a lock it
    held; ``StoreError`` (exit 2) with ``action: <the driver's first line>`` otherwise (e.g.
    ``attempt to write a readonly database``). A failure whose chain holds an interrupt
    (``portgate.interrupts.interrupt_in``: a rollback refused on a connection the interrupt left
    mid-command) raises that interrupt instead: the command ends as interrupted (exit 130/143,
    "interrompido"), not as a database failure."""
    stop = interrupt_in(exc)
    if stop is not None:
        raise stop
    orig = getattr(exc, "orig", None) or exc
    first = (str(orig).strip().splitlines() or [type(orig).__name__])[0]
    if isinstance(exc, IntegrityError) or (isinstance(exc, OperationalError) and _BUSY.search(first)):
        return StoreConflict(f"{action}: {conflict} ({first[:200]})")
    return StoreError(f"{action}: {first[:300]}")
