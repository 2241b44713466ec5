"""The office web application on a frozen PostgreSQL ledger (issue 37): the server SIGSTOPped, its TCP
connections up (the kernel acknowledges, nobody answers). A page answers the 503 "reconnecting"
page within ``[web] read_wait_s`` (plus libpq's ``connect_timeout`` for a new connection) instead
of waiting forever, the connection that met the frozen server is invalidated (never back in the
pool), and once the server goes on the next request answers 200. A private cluster of this module is
frozen (the session's ``pg_cluster`` is shared by other tests)."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import event, text
from sqlalchemy.exc import OperationalError
from starlette.testclient import TestClient

from central.config import WebSettings
from central.db import make_engine, unreachable
from central.web.answer_wait import watch_answers
from central.web.app import create_app
from testkit.postgres import frozen

from .conftest import SECRET, Clock, login
from .private_ledger import DOWN_PT, cluster, ledger  # noqa: F401 (the module's fixtures)
#: how long the test waits for an answer before calling it unbounded (the bound is 2 s + connect)
GIVE_UP_S = 90


def _within(fn, what: str):
    """``fn()``'s result, run in a thread; fails (instead of hanging the test) after ``GIVE_UP_S``."""
    out: list = []

    def run():
        try:
            out.append(fn())
        except BaseException as exc:  # handed to the test below
            out.append(exc)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(GIVE_UP_S)
    assert out, f"{what}: no answer after {GIVE_UP_S} s (a frozen server holds it)"
    if isinstance(out[0], BaseException):
        raise out[0]
    return out[0]


def test_a_page_on_a_frozen_server_answers_503_then_200(cluster, ledger):
    app = create_app(ledger, WebSettings(read_wait_s=6, write_lock_timeout_s=1), SECRET, now=Clock(),
                     background=False)
    used: list = []
    invalidated: list = []

    def checkout(dbapi, _rec, _proxy):
        used.append(dbapi)

    def invalidate(dbapi, _rec, _exc):
        invalidated.append(dbapi)

    event.listen(ledger, "checkout", checkout)
    event.listen(ledger, "invalidate", invalidate)
    try:
        c = TestClient(app, base_url="http://testserver", follow_redirects=False)
        assert login(c, "office").status_code == 303
        assert c.get("/").status_code == 200  # a pooled connection to the server, idle
        before = len(used)
        with frozen(cluster):
            r = _within(lambda: c.get("/"), "a page on the frozen server")
            assert r.status_code == 503, (r.status_code, r.text[:500])
            assert DOWN_PT in r.text and r.headers.get("Retry-After") == "5", r.text[:2000]
            stuck = used[before:]  # the pooled connection the page's query met the frozen server on
            assert stuck and all(s in invalidated and s.closed for s in stuck), (stuck, invalidated)
        r = _within(lambda: c.get("/"), "a page after the server went on")
        assert r.status_code == 200, (r.status_code, r.text[:500])  # the same session: reconnected
    finally:
        event.remove(ledger, "checkout", checkout)
        event.remove(ledger, "invalidate", invalidate)
        ledger.dispose()


def test_a_statement_is_cut_and_its_connection_invalidated(cluster, ledger):
    """The mechanism alone: a statement sent to the frozen server raises ``OperationalError`` that
    ``central.db.unreachable`` knows, carrying the bound, and the connection is invalidated."""
    engine = make_engine(cluster.url)
    watch_answers(engine, 2)
    conn = engine.connect()
    conn.execute(text("SELECT 1"))
    try:
        with frozen(cluster):
            with pytest.raises(OperationalError) as caught:
                _within(lambda: conn.execute(text("SELECT 2")), "a statement on the frozen server")
            assert unreachable(caught.value), caught.value
            assert caught.value.no_answer_s == 2
            assert conn.invalidated
        conn.close()
        with engine.connect() as again:  # a new connection once the server goes on
            assert again.execute(text("SELECT 3")).scalar() == 3
    finally:
        engine.dispose()


def test_the_rollback_ending_a_read_is_cut_too(cluster):
    """The server frozen after a read's answer, before its rollback (``Connection.close``): the
    rollback is bounded as well, its connection invalidated."""
    engine = make_engine(cluster.url)
    watch_answers(engine, 2)
    invalidated: list = []
    event.listen(engine, "invalidate", lambda dbapi, _rec, _exc: invalidated.append(dbapi))
    conn = engine.connect()
    dbapi = conn.connection.dbapi_connection
    assert conn.execute(text("SELECT 4")).scalar() == 4
    try:
        with frozen(cluster):
            with pytest.raises(OperationalError) as caught:
                _within(conn.close, "a rollback on the frozen server")
            assert unreachable(caught.value), caught.value
            assert dbapi in invalidated and dbapi.closed
        with engine.connect() as again:
            assert again.execute(text("SELECT 5")).scalar() == 5
    finally:
        engine.dispose()


def test_a_statement_answered_in_time_is_not_cut(cluster):
    """A statement slower than nothing but within the bound completes; its connection stays pooled."""
    engine = make_engine(cluster.url, pool_size=1, max_overflow=0)
    watch_answers(engine, 3)
    try:
        with engine.connect() as conn:
            first = conn.connection.dbapi_connection
            assert conn.execute(text("SELECT pg_sleep(0.5), 7")).one()[1] == 7
        with engine.connect() as conn:
            assert conn.connection.dbapi_connection is first and not first.closed
            assert conn.execute(text("SELECT 8")).scalar() == 8
    finally:
        engine.dispose()


def test_read_wait_must_exceed_the_lock_wait():
    with pytest.raises(ValueError, match="read_wait_s"):
        WebSettings(read_wait_s=5, write_lock_timeout_s=5)
