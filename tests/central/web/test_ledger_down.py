"""The office web application while its PostgreSQL ledger is down (a failover of a replicated
ledger, issue 37 item 2): every page, the login and a signed-in user's form answer the app's 503
page "the ledger is unavailable right now", pt-BR first, never the login form again nor a session
message; when the server is back, the same session goes on. A private cluster of this module is
stopped for real (the session's ``pg_cluster`` is shared by other tests)."""

from __future__ import annotations

import threading

import pytest
import uvicorn
from sqlalchemy import text
from starlette.testclient import TestClient

from app.demo.mosquitto import free_port
from central.config import WebSettings
from central.db import make_engine
from central.web.app import create_app
from testkit.browser import launch_chromium
from testkit.postgres import require_sync_standby
from testkit.wait import wait_until

from .conftest import PASSWORD, SECRET, Clock, csrf_of, login
from .private_ledger import DOWN_PT, cluster, ledger, stop_server  # noqa: F401 (the module's fixtures)
from .sizes import SIZES, looked_at

SESSION_PT = "Sua sessão terminou"


@pytest.fixture(scope="module")
def web(ledger):
    return create_app(ledger, WebSettings(), SECRET, now=Clock(), background=False)


def _down(r) -> None:
    assert r.status_code == 503, (r.status_code, r.text[:500])
    assert DOWN_PT in r.text, r.text[:2000]
    assert SESSION_PT not in r.text and 'name="password"' not in r.text
    assert r.headers.get("Retry-After") == "5"


def test_pages_login_and_forms_say_the_ledger_is_down_then_go_on(cluster, web):
    signed = TestClient(web, base_url="http://testserver", follow_redirects=False)
    assert login(signed, "office").status_code == 303
    csrf = csrf_of(signed.get("/").text)
    stranger = TestClient(web, base_url="http://testserver", follow_redirects=False)
    token = csrf_of(stranger.get("/login").text)  # the form is open before the ledger goes down
    stop_server(cluster)
    try:
        _down(signed.get("/"))  # a page: not a redirect to the login page
        _down(signed.post("/port", data={"port": "*", "csrf_token": csrf, "next": "/"}))  # a form: no 401
        _down(signed.post("/port", headers={"HX-Request": "true", "X-CSRF-Token": csrf}, data={"port": "*"}))
        _down(stranger.post("/login", data={"login": "office", "password": PASSWORD, "csrf_token": token,
                                            "next": "/"}))
        assert stranger.get("/").status_code == 303  # no session at all: to the login page, no ledger asked
    finally:
        cluster.restart()
    assert signed.get("/").status_code == 200  # the same session goes on: the pool reconnected
    r = login(stranger, "office")
    assert r.status_code == 303, r.text


def test_english_page(cluster, web):
    c = TestClient(web, base_url="http://testserver", follow_redirects=False)
    token = csrf_of(c.get("/login").text)
    c.post("/lang", data={"lang": "en", "csrf_token": token, "next": "/login"})
    stop_server(cluster)
    try:
        r = c.post("/login", data={"login": "office", "password": PASSWORD, "csrf_token": token, "next": "/"})
    finally:
        cluster.restart()
    assert r.status_code == 503
    assert "The ledger (database) is unavailable right now" in r.text and "nothing was saved" in r.text, r.text[:2000]


def test_a_commit_whose_answer_is_lost_may_or_may_not_be_saved(cluster, web, monkeypatch):
    """The server goes down between the change and its commit (a primary killed mid-commit): the
    page says the operation may or may not have been saved and to check, not "nothing was written"."""
    from central.web.routes import auth

    signed = TestClient(web, base_url="http://testserver", follow_redirects=False)
    assert login(signed, "office").status_code == 303
    csrf = csrf_of(signed.get("/").text)
    real = auth.end_session

    def end_then_lose_the_server(session, sid, now):
        real(session, sid, now)
        session.flush()
        stop_server(cluster)

    monkeypatch.setattr(auth, "end_session", end_then_lose_the_server)
    try:
        r = signed.post("/logout", data={"csrf_token": csrf})
    finally:
        cluster.restart()
    assert r.status_code == 503, (r.status_code, r.text[:500])
    assert "a operação pode ter sido gravada ou não. Confira" in r.text, r.text[:2000]
    assert "nada foi gravado" not in r.text and SESSION_PT not in r.text
    monkeypatch.undo()
    assert signed.get("/").status_code == 200  # here the commit never reached the server: still signed in


def test_a_reading_page_whose_commit_is_lost_says_try_again(cluster, web, monkeypatch):
    """A GET whose transaction's commit meets the lost server (a primary killed mid-request; the
    alarms' CSV reads in a session of its own): the user asked nothing to be saved, so the page says
    to try again ("reconnecting"), not "the operation may or may not have been saved" (a fault run
    of test_ha_ledger.py met that on a page)."""
    from central.web.routes import exports

    signed = TestClient(web, base_url="http://testserver", follow_redirects=False)
    assert login(signed, "office").status_code == 303
    real = exports.acks.acks

    def read_then_lose_the_server(session, kind, ids):
        found = real(session, kind, ids)
        if kind == "reader":
            stop_server(cluster)
        return found

    monkeypatch.setattr(exports.acks, "acks", read_then_lose_the_server)
    try:
        r = signed.get("/alarms.csv")
    finally:
        cluster.restart()
    _down(r)
    assert "gravada ou não" not in r.text, r.text[:2000]
    monkeypatch.undo()
    assert signed.get("/alarms.csv").status_code == 200


def test_a_commit_held_for_the_replicas_answers_then_is_saved(cluster, ledger):
    """Strict synchronous mode with its standbys gone holds every commit (2 of 3 nodes down): the
    login answers the 503 "waiting for the replicas, may still be saved" after ``commit_wait_s``
    instead of hanging, and the commit goes on: once a standby is back, the login is saved."""
    with ledger.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
        # the test cluster runs synchronous_commit=off; the replicated ledger runs it on
        c.execute(text(f"ALTER DATABASE {cluster.dbname} SET synchronous_commit = on"))
    ledger.dispose()
    app = create_app(ledger, WebSettings(commit_wait_s=1), SECRET, now=Clock(), background=False)
    c = TestClient(app, base_url="http://testserver", follow_redirects=False)
    token = csrf_of(c.get("/login").text)
    before = _sessions(ledger)
    require_sync_standby(ledger, "nobody")
    try:
        r = c.post("/login", data={"login": "office", "password": PASSWORD, "csrf_token": token, "next": "/"})
        assert r.status_code == 503, (r.status_code, r.text[:500])
        assert "A gravação está aguardando as réplicas" in r.text and "pode ainda ser gravada" in r.text, r.text
        assert "nada foi gravado" not in r.text and SESSION_PT not in r.text
        assert _sessions(ledger) == before  # still held: nobody else sees it yet
    finally:
        require_sync_standby(ledger, "")  # a standby is back: the held commit completes
    wait_until(lambda: _sessions(ledger) > before, timeout=60, what="the held login saved")
    assert c.get("/login").status_code == 200
    with ledger.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text(f"ALTER DATABASE {cluster.dbname} RESET synchronous_commit"))


def _sessions(engine) -> int:
    with engine.connect() as conn:
        return conn.execute(text("SELECT count(*) FROM office_sessions")).scalar()


def test_every_connection_held_answers_busy_not_500(cluster, ledger):
    """Commits held for the replicas keep their pooled connections: once none is free within the
    pool's timeout, a request answers the 503 "busy" page instead of a 500."""
    small = make_engine(cluster.url, pool_size=1, max_overflow=0, pool_timeout=1)
    with small.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text(f"ALTER DATABASE {cluster.dbname} SET synchronous_commit = on"))
    small.dispose()
    app = create_app(small, WebSettings(commit_wait_s=1), SECRET, now=Clock(), background=False)
    c = TestClient(app, base_url="http://testserver", follow_redirects=False)
    token = csrf_of(c.get("/login").text)
    require_sync_standby(ledger, "nobody")
    try:
        held = c.post("/login", data={"login": "office", "password": PASSWORD, "csrf_token": token, "next": "/"})
        assert held.status_code == 503 and "aguardando as réplicas" in held.text
        r = c.post("/login", data={"login": "office", "password": PASSWORD, "csrf_token": token, "next": "/"})
        assert r.status_code == 503, (r.status_code, r.text[:500])
        assert "O banco de dados está ocupado: nada foi gravado" in r.text, r.text
    finally:
        require_sync_standby(ledger, "")
        with ledger.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(text(f"ALTER DATABASE {cluster.dbname} RESET synchronous_commit"))
    wait_until(lambda: c.get("/login").status_code == 200, timeout=60, what="the pool free again")
    small.dispose()



def test_an_open_live_stream_ends_when_the_ledger_is_lost(cluster, web):
    """The live page's SSE stream, already answering when the ledger's server goes: it ends (the
    page's SSE extension opens it again, with its backoff) instead of raising after its answer
    began (uvicorn's "response already started" traceback, one per open live page)."""
    c = TestClient(web, base_url="http://testserver", follow_redirects=False)
    assert login(c, "office").status_code == 303
    out: list = []

    def run():
        try:
            out.append(c.get("/live/stream"))
        except BaseException as exc:  # handed to the test below
            out.append(exc)

    streams = web.state.web.streams
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    wait_until(lambda: sum(streams.values()) > 0, timeout=60, what="the live stream open")
    stop_server(cluster)
    try:
        thread.join(90)
    finally:
        cluster.restart()
    assert out, "the stream did not end within 90 s of the ledger's loss"
    assert not isinstance(out[0], BaseException), repr(out[0])
    assert out[0].status_code == 200 and out[0].text.startswith("retry: 1000"), out[0].text[:300]

@pytest.fixture(scope="module")
def served(web):
    """``web`` served by uvicorn on loopback in a thread, for a real browser: its address."""
    server = uvicorn.Server(uvicorn.Config(web, host="127.0.0.1", port=free_port(), log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_until(lambda: server.started, timeout=30, what="uvicorn started")
    yield f"http://127.0.0.1:{server.config.port}"
    server.should_exit = True
    thread.join(10)


def test_the_reconnecting_page_reads_at_every_size(cluster, served, tmp_path):
    """The 503 "reconnecting" page in chromium at the gate's 800x480 panel, a 390 px phone and a
    desktop, signed in (pt-BR) and on the login form (English): the whole message inside the screen,
    no text cut, its link back, no serious axe violation."""
    with launch_chromium() as browser:
        pages = {}
        for size, viewport in SIZES.items():
            pg = browser.new_context(viewport=viewport, bypass_csp=True, locale="pt-BR").new_page()
            pg.set_default_timeout(20_000)
            pg.goto(served + "/login")
            pg.get_by_label("Usuário").fill("office")
            pg.get_by_label("Senha").fill(PASSWORD)
            with pg.expect_navigation():
                pg.get_by_role("button", name="Entrar").click()
            pages[size] = pg
        english = browser.new_context(viewport=SIZES["phone"], bypass_csp=True).new_page()
        english.goto(served + "/login")
        english.locator("#lang-select").select_option("en")
        with english.expect_navigation():
            english.locator("form[action='/lang'] button").click()
        stop_server(cluster)
        try:
            for size, pg in pages.items():
                assert pg.goto(served + "/").status == 503
                assert DOWN_PT in pg.locator("h1").inner_text()
                assert pg.locator("main").get_by_role("link", name="Porto ao vivo").is_visible()
                looked_at(pg, f"reconnecting-{size}", tmp_path)
            english.get_by_label("User").fill("office")
            english.get_by_label("Password").fill(PASSWORD)
            with english.expect_navigation():
                english.get_by_role("button", name="Log in").click()
            said = english.locator("h1").inner_text()
            assert said == ("The ledger (database) is unavailable right now (switching servers): nothing was "
                            "saved. Try again in a few seconds."), said  # once, not two texts run together
            looked_at(english, "reconnecting-en-phone", tmp_path)
        finally:
            cluster.restart()
