"""Every statement the office web application sends answered within ``[web] read_wait_s``, or its
connection cut (issue 37: a frozen ledger server).

A PostgreSQL server that is stopped (SIGSTOP, a virtual machine paused, a node hung on its disk) keeps
its TCP connections up: the kernel acknowledges every byte and nobody answers. A page's query then
waits forever: ``statement_timeout`` runs in the server, TCP keepalives and libpq's
``tcp_user_timeout`` are answered by the kernel, and a cancel request needs the stopped postmaster
and the stopped backend to act. Only the client can end the wait, so a timer per statement shuts the
connection's socket down (``shutdown(SHUT_RDWR)`` on a duplicate of libpq's socket) when the
statement has had no answer after ``read_wait_s``: libpq, waiting in the request's thread, sees the
connection closed and psycopg raises ``OperationalError``. The ``handle_error`` event marks it a
disconnect, so SQLAlchemy invalidates that connection (and the pool: its other connections reach the
same server) instead of returning it to the pool as good; the request answers the 503
"reconnecting" page (``central.web.errors.ledger_unreachable``). A new connection to a frozen server
is bounded by libpq's ``connect_timeout`` (``central.db.make_engine``).

The rollback that ends a read is bounded the same way (``_bound_rollback``). Not bounded here: a commit (``COMMIT`` is not a cursor statement; ``central.web.commit_wait`` bounds
the request's wait for it and never cuts it: a cut commit's outcome would be unknown). The statements
of a write wait for another writer's lock at most ``write_lock_timeout_s`` (the server's own
``lock_timeout``), which ``read_wait_s`` must exceed (``WebSettings``). SQLite: nothing (a file, no
server to freeze).
"""

from __future__ import annotations

import os
import socket
import threading
import weakref

from sqlalchemy import event
from sqlalchemy.engine import Engine

_KEY = "portgate_answer_watch"
#: the engines watched and their current bound (seconds); ``watch_answers`` again changes the bound
_WAITS: weakref.WeakKeyDictionary[Engine, float] = weakref.WeakKeyDictionary()


class _Watch:
    """One statement's timer: ``fire`` cuts the socket unless ``stop`` came first (under one lock,
    so a statement answered in time never has its connection, back in the pool, cut)."""

    def __init__(self, dbapi_conn, wait_s: float) -> None:
        self.dbapi_conn = dbapi_conn
        self.wait_s = wait_s
        self.fired = False
        self._done = False
        self._lock = threading.Lock()
        self._timer = threading.Timer(wait_s, self.fire)
        self._timer.daemon = True
        self._timer.name = "web-answer-watch"

    def start(self) -> None:
        self._timer.start()

    def stop(self) -> None:
        with self._lock:
            self._done = True
        self._timer.cancel()

    def fire(self) -> None:
        with self._lock:
            if self._done:
                return
            self.fired = True
            cut(self.dbapi_conn)


def cut(dbapi_conn) -> None:
    """Shut down the socket of a psycopg connection (both directions) from any thread: a call waiting
    on it returns with the connection lost. A connection already closed is left alone."""
    try:
        fd = dbapi_conn.pgconn.socket
    except Exception:  # the connection is closed or broken already: nothing waits on it
        return
    sock = socket.socket(fileno=os.dup(fd))  # a duplicate: libpq keeps (and later closes) its own
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:  # not connected any more
        pass
    finally:
        sock.close()


def watch_answers(engine: Engine, wait_s: float) -> None:
    """Bound every statement ``engine`` sends by ``wait_s`` seconds (PostgreSQL only; SQLite is left
    as it is). Past it the statement raises SQLAlchemy's ``OperationalError`` (psycopg's "server
    closed the connection" or "consuming input failed"; ``central.db.unreachable`` is true) with
    ``no_answer_s = wait_s`` on it, and its connection and the pool are invalidated. Calling it again
    for the same engine only changes the bound."""
    if engine.dialect.name != "postgresql":
        return
    first = engine not in _WAITS
    _WAITS[engine] = wait_s
    if first:
        event.listen(engine, "before_cursor_execute", _arm)
        event.listen(engine, "after_cursor_execute", _disarm)
        event.listen(engine, "handle_error", _on_error)
        _bound_rollback(engine)


def _bound_rollback(engine: Engine) -> None:
    """The rollback that ends a read (``Connection.close``, the pool's reset on return) is sent to
    the server too, outside any cursor: bound it as well. SQLAlchemy has no event after a rollback,
    so this engine's own dialect object (``create_engine`` makes one per engine) gets a
    ``do_rollback`` that runs the original under a ``_Watch``."""
    dialect = engine.dialect
    original = dialect.do_rollback

    def do_rollback(dbapi_connection) -> None:
        watch = _Watch(dbapi_connection, _WAITS.get(engine, 0) or 3600.0)
        watch.start()
        try:
            original(dbapi_connection)
        finally:
            watch.stop()

    dialect.do_rollback = do_rollback  # type: ignore[method-assign]


def _arm(conn, _cursor, _statement, _parameters, _context, _executemany) -> None:
    wait_s = _WAITS.get(conn.engine)
    if wait_s is None:
        return
    old = conn.info.pop(_KEY, None)
    if old is not None:
        old.stop()
    watch = _Watch(conn.connection.dbapi_connection, wait_s)
    conn.info[_KEY] = watch
    watch.start()


def _disarm(conn, _cursor, _statement, _parameters, _context, _executemany) -> None:
    watch = conn.info.pop(_KEY, None)
    if watch is not None:
        watch.stop()


def _on_error(ctx) -> None:
    try:
        watch = ctx.connection.info.pop(_KEY, None)
    except Exception:  # no connection, or one already invalidated: no statement of ours to stop
        return
    if watch is None:
        return
    watch.stop()
    if watch.fired:
        ctx.is_disconnect = True  # invalidated: never back in the pool as good
        if ctx.sqlalchemy_exception is not None:
            ctx.sqlalchemy_exception.no_answer_s = watch.wait_s
