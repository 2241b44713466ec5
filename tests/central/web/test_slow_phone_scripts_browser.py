"""The office's pages on a slow phone: their deferred scripts (htmx and its SSE extension) run
seconds after the page was drawn. What happens in between is not lost: on the live page a change in
the ledger is sent at once when the stream opens (``/live/stream?since=<the page's version>``), and
a session that ended before the stream opened (the stream answers 401, no ``event: ended``) still
takes the page to the login page (``htmx:sseError`` asks for the panel); the menu button answers
from the moment it shows, and the menu is never drawn open first. The browser tests hold the htmx
script's request until the test has acted, then let it run."""

from __future__ import annotations

import datetime as dt
import re
from urllib.parse import quote, unquote

import pytest
from sqlalchemy.orm import Session

from central.calls.service import ShipCall, save_call
from central.web.routes.live import _panel_data
from testkit.wait import wait_until
from tests.central.web.conftest import logged_in
from tests.central.web.live import LiveOffice, log_in
from tests.central.web.test_session_end import _end_all

HTMX = "**/static/vendor/htmx-2.*.js"


def _berth(engine, ship: str) -> None:
    """A long-haul ship berthed at g-a since a minute ago: a change of the live panel."""
    arrival = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=1)
    with Session(engine) as s, s.begin():
        save_call(s, ShipCall(ship, "Nordic Star", "long_haul", "berthed", "g-a", arrival, None), actor="test")


def _stream_events(c, url: str, n: int) -> list[str]:
    """The first ``n`` event lines (``event: ...``) of the stream at ``url``."""
    got = []
    with c.stream("GET", url, headers={"Accept": "text/event-stream"}) as r:
        assert r.status_code == 200
        for line in r.iter_lines():
            if line.startswith(("event:", "data:")):
                got.append(line)
            if len(got) == 2 * n:
                return got
    return got


def test_a_stream_opened_since_an_older_version_says_changed_at_once_and_since_the_current_one_waits(app, engine):
    c, _ = logged_in(app, "office")
    page = c.get("/").text
    since = re.search(r'sse-connect="/live/stream\?since=([^"]+)"', page).group(1)
    current = app.state.web.read(_panel_data, app.state.web)["version"]
    assert unquote(since) == current  # the version the panel was rendered from
    _berth(engine, "9300002")  # after the page was rendered, before its stream opened
    moved = app.state.web.read(_panel_data, app.state.web)["version"]
    assert moved != current
    assert _stream_events(c, f"/live/stream?since={since}", 1) == ["event: changed", f"data: {moved}"]
    # opened since the current version: the first event is the next change, not a stale one
    with c.stream("GET", f"/live/stream?since={quote(moved)}", headers={"Accept": "text/event-stream"}) as r:
        lines = r.iter_lines()
        assert next(lines) == "retry: 1000"
        _berth(engine, "9300003")
        event = next(line for line in lines if line.startswith("event:"))
        data = next(lines)
    assert event == "event: changed" and data != f"data: {moved}"


@pytest.fixture(scope="module")
def office(tmp_path_factory):
    o = LiveOffice(tmp_path_factory.mktemp("live-late")).start()
    try:
        yield o
    finally:
        o.stop()


def _live_page_with_htmx_held(browser, office):
    """A logged-in phone on the live page whose htmx script request is held (not answered) until
    the caller continues it: the page is rendered, its scripts have not run."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, locale="pt-BR")
    page = context.new_page()
    page.set_default_timeout(30_000)
    log_in(page, office)
    held = []
    page.route(HTMX, lambda route: route.continue_() if held else held.append(route))  # the first only
    page.goto(office.url + "/", wait_until="commit")
    page.locator("#summary").wait_for(state="attached")
    wait_until(lambda: page.evaluate("1") and held, 60, what="the htmx script's request held")
    return context, page, held[0]


def test_a_change_made_before_the_live_pages_scripts_ran_is_shown_when_they_run(office, browser):
    context, page, htmx = _live_page_with_htmx_held(browser, office)
    try:
        assert page.locator('[data-ship="9300004"]').count() == 0
        _berth(office.engine, "9300004")
        htmx.continue_()
        page.locator('article.ship[data-ship="9300004"]').wait_for()
        assert page.evaluate("() => document.readyState") == "complete"
    finally:
        context.close()


def test_a_session_that_ended_before_the_live_pages_stream_opened_goes_to_the_login_page(office, browser):
    context, page, htmx = _live_page_with_htmx_held(browser, office)
    try:
        _end_all(office.engine, "escritorio")
        htmx.continue_()
        page.wait_for_url(office.url + "/login?next=/")
        assert page.get_by_label("Senha").is_visible()
    finally:
        context.close()


NAV_SEEN = """new MutationObserver((_, seen) => {
    if (document.getElementById('app-menu')) {
        window.__jsWhenNavDrawn = document.documentElement.classList.contains('js');
        seen.disconnect();
    }
}).observe(document, {childList: true, subtree: true})"""


def test_the_phone_menu_is_drawn_closed_and_its_button_opens_it_before_the_other_scripts_ran(office, browser):
    context = browser.new_context(viewport={"width": 390, "height": 844}, locale="pt-BR")
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        log_in(page, office)
        page.add_init_script(NAV_SEEN)
        held = []
        page.route(HTMX, lambda route: route.continue_() if held else held.append(route))
        page.goto(office.url + "/flags", wait_until="commit")
        wait_until(lambda: page.evaluate("1") and held, 60, what="the htmx script's request held")
        menu = page.get_by_role("button", name="Menu")
        link = page.locator("#app-menu").get_by_role("link", name="Ocorrências")
        menu.wait_for()
        assert page.evaluate("() => window.__jsWhenNavDrawn") is True  # never drawn open, then closed
        assert link.is_hidden()
        menu.click()  # htmx still loading: DOMContentLoaded has not come
        link.wait_for()
        assert menu.get_attribute("aria-expanded") == "true"
        assert page.evaluate("() => document.readyState") != "complete"
        held[0].continue_()
        menu.click()
        link.wait_for(state="hidden")
        assert menu.get_attribute("aria-expanded") == "false"
    finally:
        context.close()
