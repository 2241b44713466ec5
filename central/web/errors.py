"""What the office web application answers when a request cannot be served, instead of a
traceback page (Starlette exception handlers and one ASGI middleware, installed by ``create_app``):

- ``BadInput`` raised by an endpoint: 400 with its one line;
- ``OverflowError`` (a number or date out of range reaching Python or the SQLite driver): 400;
- the database busy or locked (``OperationalError`` "database is locked" / "busy", or PostgreSQL
  lock timeouts): 503 "busy, try again" page, one log line ``web.ledger_busy``; nothing written;
- a request body larger than ``[web] max_body_mb`` (``BodyLimit``): 413 page, checked on
  ``Content-Length`` before anything is read, and counted while reading for a chunked body.
"""

from __future__ import annotations

import structlog
from sqlalchemy.exc import OperationalError
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from central.web.render import bad_input, page
from portgate.errors import BadInput

log = structlog.get_logger("central.web")

BUSY_WORDS = ("database is locked", "database is busy", "lock timeout", "could not obtain lock",
              "deadlock detected", "canceling statement due to lock timeout")


def is_busy(exc: BaseException) -> bool:
    """True for a database error that means "another writer holds the lock: try again"."""
    text = str(getattr(exc, "orig", exc) or exc).lower()
    return any(w in text for w in BUSY_WORDS)


async def on_bad_input(request: Request, exc: Exception):
    return bad_input(request, str(exc))


async def on_overflow(request: Request, exc: Exception):
    return bad_input(request, "a value is out of range")


async def on_operational(request: Request, exc: Exception):
    if not is_busy(exc):
        raise exc
    log.warning("web.ledger_busy", path=request.url.path, method=request.method,
                error=str(getattr(exc, "orig", exc)).splitlines()[0])
    resp = page(request, "error.html", status_code=503, message_key="busy", detail="")
    resp.headers["Retry-After"] = "2"
    return resp


HANDLERS = {BadInput: on_bad_input, OverflowError: on_overflow, OperationalError: on_operational}


class BodyTooLarge(Exception):
    pass


class BodyLimit:
    """Refuses request bodies over ``max_bytes`` with a 413 page (see module doc). Sits inside the
    session middleware so the page has the user's language."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope.get("headers") or []).get(b"content-length")
        try:
            declared = int(length) if length is not None else None
        except ValueError:
            declared = None
        if declared is not None and declared > self.max_bytes:
            await self._refuse(scope, send)
            return
        seen = 0
        started = False

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise BodyTooLarge
            return message

        async def tracking(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted, tracking)
        except BodyTooLarge:
            if started:
                raise
            await self._refuse(scope, send)

    async def _refuse(self, scope: Scope, send: Send) -> None:
        request = Request(scope)
        mb = self.max_bytes / (1024 * 1024)
        log.warning("web.body_too_large", path=scope.get("path"), max_bytes=self.max_bytes)
        resp = page(request, "error.html", status_code=413, message_key="too_large",
                    detail=f"{mb:.3g} MB")
        resp.headers["Connection"] = "close"
        await resp(scope, _drain_free, send)


async def _drain_free() -> Message:
    return {"type": "http.disconnect"}
