"""A session that ends while a page is open: the live stream closes with ``event: ended`` at its
next poll, an htmx request without a session is told where the login page is (``HX-Redirect``),
and in a real browser the open live page goes to the login page by itself."""

from __future__ import annotations

import datetime as dt

import pytest
from playwright.sync_api import expect
from sqlalchemy import select
from sqlalchemy.orm import Session

from central.web.schema import office_users
from central.web.users import end_sessions_of
from testkit.browser import launch_chromium
from tests.central.web.conftest import csrf_of, logged_in
from tests.central.web.live import LiveOffice, log_in


def _end_all(engine, login: str) -> None:
    with Session(engine) as s, s.begin():
        uid = s.execute(select(office_users.c.id).where(office_users.c.login == login)).scalar_one()
        assert end_sessions_of(s, uid, dt.datetime.now(dt.UTC)) >= 1


def test_an_htmx_request_without_a_session_is_sent_to_the_login_page_of_its_page(client):
    r = client.get("/live/panel", headers={"HX-Request": "true",
                                           "HX-Current-URL": "http://testserver/workers/V001?q=x"})
    assert r.status_code == 401 and r.headers["HX-Redirect"] == "/login?next=/workers/V001"
    r = client.get("/live/panel", headers={"HX-Request": "true", "HX-Current-URL": "javascript:alert(1)"})
    assert r.headers["HX-Redirect"] == "/login?next=/"
    assert "HX-Redirect" not in client.get("/live/stream", headers={"Accept": "text/event-stream"}).headers


def test_the_live_stream_closes_with_ended_once_the_session_ends(app, engine):
    c, _csrf = logged_in(app, "office")
    with c.stream("GET", "/live/stream", headers={"Accept": "text/event-stream"}) as r:
        assert r.status_code == 200
        lines = r.iter_lines()
        assert next(lines) == "retry: 1000"
        _end_all(engine, "office")
        rest = list(lines)  # the stream ends by itself: list() returns
    assert "event: ended" in rest and "data: login" in rest, rest


@pytest.fixture
def office(tmp_path):
    o = LiveOffice(tmp_path).start()
    try:
        yield o
    finally:
        o.stop()


def test_an_open_live_page_goes_to_the_login_page_when_its_session_ends(office):
    with launch_chromium() as browser:
        context = browser.new_context(viewport={"width": 390, "height": 844})
        page = context.new_page()
        page.set_default_timeout(20_000)
        log_in(page, office)
        page.locator("#live").wait_for()
        _end_all(office.engine, "escritorio")
        # the stream's "ended" and the error of its closed connection both ask for the panel, and
        # each answer sends the page to the login page: the first navigation is aborted by the
        # second (CI at load 10), so the test watches the address, not one navigation
        expect(page).to_have_url(office.url + "/login?next=/", timeout=60_000)
        expect(page.get_by_label("Senha")).to_be_visible(timeout=60_000)
        context.close()


@pytest.mark.parametrize("path", ["/workers/upload", "/pay/mark-paid", "/workers/V001/photo", "/whatif/gate"])
def test_a_post_without_a_session_answers_the_error_page_in_the_users_language(client, path):
    """A form sent after the session ended (curl, a tab left open): 401 kept, the application's
    error page in pt-BR by default with a link to the login page, back to the form's page."""
    r = client.post(path, data={"x": "1"}, headers={"Referer": "http://testserver/pay?from=2026-03-01"})
    assert r.status_code == 401 and r.headers["content-type"].startswith("text/html")
    assert '<html lang="pt-BR">' in r.text and "Sua sessão terminou ou você não entrou" in r.text
    assert '<a href="/login?next=/pay">Entrar</a>' in r.text
    assert "login required" not in r.text
    r = client.post(path)  # no Referer (curl -X POST): the login page, then the home page
    assert r.status_code == 401 and '<a href="/login?next=/">Entrar</a>' in r.text
    token = csrf_of(client.get("/login").text)
    assert client.post("/lang", data={"csrf_token": token, "lang": "en"}).status_code == 303
    r = client.post(path)
    assert r.status_code == 401 and "Your session has ended or you are not logged in" in r.text
    assert '<a href="/login?next=/">Log in</a>' in r.text
    r = client.get("/pay")  # a page's GET still goes to the login page
    assert r.status_code == 303 and r.headers["location"] == "/login?next=/pay"
