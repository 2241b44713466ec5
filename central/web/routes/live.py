"""The live port view (home page): gates, ships in port, open coverage and reader alarms; live by SSE.

``/live/stream`` is a Server-Sent Events stream: every ``[web] poll_s`` it reads
``readmodel.version`` and sends ``event: changed`` when it moved; the page's htmx SSE extension then
fetches ``/live/panel`` (the same fragment the page was rendered with). The page opens the stream
with ``?since=<version>``, the version its panel was rendered from: a change made between the
render and the stream's start (a slow phone runs its deferred scripts seconds later; a stream
opened again after a drop) is sent at once as ``changed``, not lost until the next one. A comment
line every 15 s keeps proxies from closing an idle stream. The session is looked up again at every poll: once it
has ended (logout, a new password, the user disabled) the stream sends ``event: ended`` and closes;
the page then asks for the panel, is answered 401 with ``HX-Redirect`` and goes to the login page.
The page asks for the panel as well whenever its stream fails (``htmx:sseError``): a stream refused
401 because the session ended before it opened (or while it was down) sends no ``ended``.
The ledger lost while a stream is open (``central.db.unreachable``): the stream ends, with one log
line ``web.live_stream_ledger_lost``, and the page's SSE extension opens it again with its backoff.
One session holds at most ``MAX_STREAMS`` streams at once (a few tabs); one more answers 429 with
``Retry-After`` (a script opening streams without end cannot tie up the server's connections).
"""

from __future__ import annotations

import asyncio
import re
import time

import structlog
from markupsafe import Markup, escape
from sqlalchemy.exc import DBAPIError
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

from central.db import unreachable
from central.web import readmodel
from central.web.ports import keeper, per_port, port_of
from central.web.codewords import function_label, post_label
from central.web.render import local_time, once_per_code, lang_of, page
from central.web.security import ALL_ROLES, current_user, guarded
from central.web.event_texts import event_text

log = structlog.get_logger("central.web")

HEARTBEAT_S = 15.0
MAX_STREAMS = 6  # open /live/stream connections per session


class _CountedStream(StreamingResponse):
    """A stream that gives its session's place back however it ends (sent, cancelled, never started)."""

    def __init__(self, content, release, **kwargs) -> None:
        super().__init__(content, **kwargs)
        self._release = release

    async def __call__(self, scope, receive, send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._release()


def _take_stream(web, sid: str):
    """A release function when the session ``sid`` may open one more stream, else None."""
    counts = web.streams
    if counts.get(sid, 0) >= MAX_STREAMS:
        return None
    counts[sid] = counts.get(sid, 0) + 1
    done = False

    def release() -> None:
        nonlocal done
        if not done:
            done = True
            counts[sid] -= 1
            if counts[sid] <= 0:
                del counts[sid]

    return release


def _panel_data(conn, web, ports=None):
    """The panel's gates, ships, open alarms; with ``ports`` (the user's view, central.web.ports)
    only those of the ports' gates (a ship by its gangway gate; ``central.web.ports.keeper``: a gate
    without events by its registration; all of them for a view of every port); ``portless``: the
    gates of no port on an office of several ports (``port_of`` None), marked on the page."""
    now = web.now()
    data = {
        "version": ".".join(readmodel.version(conn)),  # read first: a change during the read is sent again
        "gates": readmodel.gate_rows(conn, now, web.settings.copies_max_age_h),
        "ships": readmodel.ship_rows(conn, now, web.tz),
        "alarms": readmodel.open_alarms(conn),
        "reader_alarms": readmodel.open_reader_alarms(conn),
        "now": now,
        "portless": set(),
        "several_ports": len(web.ports) > 1,  # each gate's port shown on its card
    }
    if len(web.ports) > 1:  # a gate of no port (no event, no add-gate --port): marked, all-ports users only
        port = port_of(conn, web.ports, web.gate_registry)
        data["portless"] = {g.gate_id for g in data["gates"] if not g.port and port(g.gate_id) is None}
    if (keep := keeper(conn, ports, web.ports, web.gate_registry)) is not None:
        data["gates"] = [g for g in data["gates"] if keep(g.gate_id, g.port)]
        data["ships"] = [s for s in data["ships"] if keep(s.gate_id)]
        data["alarms"] = [a for a in data["alarms"] if keep(a["gate_id"])]
        data["reader_alarms"] = [a for a in data["reader_alarms"] if keep(a["gate_id"])]
    return data


def _cells(request: Request) -> dict:
    """The panel's own helpers for its template: ``event_text``, ``posts_cell``, ``aboard_cell``."""
    lang = lang_of(request)
    return {"event_text": lambda parts: event_text(lang, parts), "posts_cell": _posts_cell(lang),
            "aboard_cell": _aboard_cell(request.app.state.web.tz, lang)}


_HTML_SPECIAL = re.compile("[&<>'\"]")


def _text(value) -> str:
    """``value`` as Jinja's autoescape writes it (``markupsafe.escape``), the escape skipped when
    there is nothing to escape (most names and codes)."""
    text = str(value)
    return str(escape(text)) if _HTML_SPECIAL.search(text) else text


def _aboard_cell(tz, lang: str):
    """``aboard -> Markup``: a ship's people aboard on the panel (``readmodel.ShipRow.aboard``,
    ``(registration, name, admitted at)``), each with the time of his admission in the port's
    zone, ``, `` between them; built here as ``_posts_cell`` (up to thousands per panel)."""
    when = local_time(tz, lang)

    def cell(aboard) -> Markup:
        return Markup(", ".join([
            f'<span class="person" data-registration="{reg}">{reg} {_text(name)} ({_text(when(at))})</span>'
            for reg, name, at in ((_text(r), n, a) for r, n, a in aboard)]))

    return cell


def _posts_cell(lang: str):
    """``posts -> Markup``: a period's posts cell on the panel (``readmodel.Post``): per dispatch
    its post and function named in ``lang``, who holds it and a ✔ when aboard, ``; `` between
    them, every value escaped. Written here rather than as a template loop: the panel has a span
    per dispatch (2,400 at 60 ships) and Jinja spent about five times as long on each
    (docs/performance.md, "Crew book and office lists margin")."""
    post_name = once_per_code(lambda code: _text(post_label(lang, code)))  # escaped, once per code
    function_name = once_per_code(lambda code: _text(function_label(lang, code)))
    post_code, function_code = once_per_code(_text), once_per_code(_text)

    def cell(posts) -> Markup:
        return Markup("; ".join([
            f'<span class="post{" on" if p.aboard else ""}" data-post="{post_code(p.post)}" '
            f'data-function="{function_code(p.function)}">{post_name(p.post)}/'
            f'{function_name(p.function)}: {_text(p.registration)} {_text(p.name)}'
            f'{" ✔" if p.aboard else ""}</span>'
            for p in posts]))

    return cell


@guarded(*ALL_ROLES)
@per_port
async def home(request: Request):
    web = request.app.state.web
    data = await run_in_threadpool(web.read, _panel_data, web, request.state.ports)
    return page(request, "live.html", **_cells(request), **data)


@guarded(*ALL_ROLES)
@per_port
async def panel(request: Request):
    web = request.app.state.web
    data = await run_in_threadpool(web.read, _panel_data, web, request.state.ports)
    return page(request, "live_panel.html", **_cells(request), **data)


@guarded(*ALL_ROLES)
@per_port  # sends only "changed": the panel it asks for is filtered
async def stream(request: Request):
    web = request.app.state.web
    release = _take_stream(web, str(request.session.get("sid")))
    if release is None:
        resp = page(request, "error.html", status_code=429, message_key="too_many_streams",
                    detail=str(MAX_STREAMS))
        resp.headers["Retry-After"] = "5"
        return resp

    async def changes():
        try:
            async for line in _changes():
                yield line
        except DBAPIError as exc:  # the answer has begun: no 503 page can replace it now
            if not unreachable(exc):
                raise
            log.warning("web.live_stream_ledger_lost", error=str(getattr(exc, "orig", exc)).strip()[:300])
            # the stream ends; the page's SSE extension opens it again (with its backoff)

    async def _changes():
        seen = await run_in_threadpool(web.read, readmodel.version)
        beat = time.monotonic()
        yield "retry: 1000\n\n"
        since = request.query_params.get("since")
        if since is not None and since != ".".join(seen):  # moved since the page was rendered
            yield f"event: changed\ndata: {'.'.join(seen)}\n\n"
        while True:
            if await request.is_disconnected():
                return
            await asyncio.sleep(web.settings.poll_s)
            if await current_user(request) is None:  # the session ended while the page was open
                yield "event: ended\ndata: login\n\n"
                return
            current = await run_in_threadpool(web.read, readmodel.version)
            if current != seen:
                seen = current
                yield f"event: changed\ndata: {'.'.join(current)}\n\n"
                beat = time.monotonic()
            elif time.monotonic() - beat > HEARTBEAT_S:
                yield ": keep-alive\n\n"
                beat = time.monotonic()

    return _CountedStream(changes(), release, media_type="text/event-stream",
                          headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


ROUTES = [
    Route("/", home, methods=["GET"]),
    Route("/live/panel", panel, methods=["GET"]),
    Route("/live/stream", stream, methods=["GET"]),
]
