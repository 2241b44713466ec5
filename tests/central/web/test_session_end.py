"""A session that ends while a page is open: the live stream closes with ``event: ended`` at its
next poll, an htmx request without a session is told where the login page is (``HX-Redirect``),
and in a real browser the open live page goes to the login page by itself."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from central.web.schema import office_users
from central.web.users import end_sessions_of
from testkit.browser import launch_chromium
from tests.central.web.conftest import logged_in
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
        page.wait_for_url(office.url + "/login?next=/")
        assert page.get_by_label("Senha").is_visible()
        context.close()
