"""What the office web application answers when a request cannot be served, instead of a
traceback page (Starlette exception handlers and two ASGI middlewares, installed by ``create_app``):

- ``BadInput`` raised by an endpoint: 400 with its one line;
- ``OverflowError`` (a number or date out of range reaching Python or the SQLite driver): 400
  "a value is out of range" (pt-BR on a pt-BR page); the entry checks (``central.bounds``, the
  pages' date ranges) refuse such values first, naming the field; a ``DataError`` (a value
  PostgreSQL refuses that escaped them) answers the same, the transaction rolled back;
- a path or query string holding a NUL character (``%00``, ``NoNul``): 400 page, before any
  endpoint runs (no id, name or date holds one, and PostgreSQL refuses it in text);
- the ledger's server lost or no longer the primary (``central.db.unreachable``: a failover of a
  replicated ledger, issue 37), or its SQLite file missing, replaced by junk or damaged: 503
  "reconnecting, try again" page, the pool emptied so the next
  request reaches the new primary; one log line ``web.ledger_unreachable``; a frozen server's
  statement cut after ``[web] read_wait_s`` (``central.web.answer_wait``) answers the same;
- a commit the ledger has not answered after ``[web] commit_wait_s`` (``CommitPending``: a
  primary waiting for its synchronous replicas): 503 "waiting for the replicas, may still be
  saved, check before repeating", one log line ``web.ledger_commit_waiting``; no pooled connection
  free in the pool's timeout (held commits keep theirs): 503 "busy", ``web.ledger_pool_full``;
- the database busy or locked (``OperationalError`` "database is locked" / "busy", or PostgreSQL
  lock timeouts): 503 "busy, try again" page, one log line ``web.ledger_busy``; nothing written;
- an address no route serves (404) or a method the route does not take (405, ``Allow`` naming the
  methods of every route at that address):
  Starlette's ``HTTPException``, answered with the error page in the user's language instead of
  Starlette's plain English "Not Found" / "Method Not Allowed";
- a request body larger than ``[web] max_body_mb`` (``BodyLimit``): 413 page, checked on
  ``Content-Length`` before anything is read, and counted while reading for a chunked body; a
  form field (not a file) over 1 MB, which Starlette's form parser refuses first ("Field ..." or
  "Part exceeded maximum size"): 413 as well, on a worker's page saying his text is longer than
  ``MAX_TEXT`` characters; on a worker's path (``/w/...``) every such page is in the worker's
  layout (``render.page``).
"""

from __future__ import annotations

import structlog
from sqlalchemy.exc import DatabaseError, DataError, InternalError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from central.db import unreachable
from central.web.commit_wait import CommitPending
from central.registry.cases import MAX_TEXT
from central.web.i18n import t
from central.web.render import bad_input, lang_of, page
from central.web.security import current_user
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


OUT_OF_RANGE = "a value is out of range"
NUL_IN_ADDRESS = "the address contains a NUL character"


async def on_overflow(request: Request, exc: Exception):
    return bad_input(request, OUT_OF_RANGE)


class NoNul:
    """Refuses a request whose path or query string holds a NUL character (``/workers/%00``) with
    the 400 error page in the user's language. Sits inside the session middleware."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and ("\x00" in scope.get("path", "")
                                        or b"%00" in scope.get("query_string", b"")):
            log.warning("web.nul_in_address", path=scope.get("path", "").replace("\x00", "\\x00"))
            await bad_input(Request(scope), NUL_IN_ADDRESS)(scope, receive, send)
            return
        await self.app(scope, receive, send)


async def on_operational(request: Request, exc: Exception):
    if unreachable(exc) and not is_busy(exc):
        return ledger_unreachable(request, exc)
    if not is_busy(exc):
        raise exc
    log.warning("web.ledger_busy", path=request.url.path, method=request.method,
                error=str(getattr(exc, "orig", exc)).splitlines()[0])
    resp = page(request, "error.html", status_code=503, message_key="busy", detail="")
    resp.headers["Retry-After"] = "2"
    return resp


def ledger_unreachable(request: Request, exc: Exception):
    """The ledger's server was lost or is no longer the primary (a failover of a replicated ledger,
    ``central.db.unreachable``): the pool is emptied so the next request connects again through
    the multi-host URL to the new primary, and this one answers 503 "reconnecting, try again"
    (``Retry-After: 5``) with one log line ``web.ledger_unreachable``, instead of a 500. Raised by
    the commit itself (``at_commit``, ``WebApp.with_session``) of a request that changes something
    (not GET or HEAD: their commit holds nothing the user asked for): the page says the change may or
    may not have been saved and to check before repeating it ("ledger_down_unsure"); else nothing was
    written ("reconnecting"). Never the login form nor "your session ended": the ledger, not the
    session, is what failed."""
    request.app.state.web.engine.dispose()
    # a GET's or HEAD's commit writes nothing the user asked for: "try again", not "check it was saved"
    unsure = bool(getattr(exc, "at_commit", False)) and request.method not in ("GET", "HEAD")
    log.warning("web.ledger_unreachable", path=request.url.path, method=request.method, at_commit=unsure,
                no_answer_s=getattr(exc, "no_answer_s", None),  # cut by central.web.answer_wait
                error=str(getattr(exc, "orig", exc)).strip().splitlines()[0][:300])
    resp = page(request, "error.html", status_code=503,
                message_key="ledger_down_unsure" if unsure else "reconnecting", detail="")
    resp.headers["Retry-After"] = "5"
    return resp


async def on_data_error(request: Request, exc: Exception):
    """A value the database refused (PostgreSQL: too long, out of range, a NUL) that no entry check
    caught: the transaction is rolled back; the same 400 as ``OverflowError``, and one log line."""
    log.warning("web.value_refused", path=request.url.path, method=request.method,
                error=str(getattr(exc, "orig", exc)).strip().splitlines()[0])
    return bad_input(request, OUT_OF_RANGE)


async def on_internal(request: Request, exc: Exception):
    """``InternalError``: PostgreSQL's "cannot execute ... in a read-only transaction" (a pooled
    connection to a primary demoted by a failover) is answered as the ledger unreachable; any
    other internal error goes on to the 500 handler."""
    if unreachable(exc):
        return ledger_unreachable(request, exc)
    raise exc


async def on_database(request: Request, exc: Exception):
    """Any other ``DatabaseError``: SQLite's "file is not a database" or "database disk image is
    malformed" (the ledger file replaced by junk or damaged under a running server,
    ``central.db.unreachable``) is answered as the ledger unreachable (503, the pool emptied: a good
    file put back serves the next request); anything else goes on to the 500 handler."""
    if unreachable(exc):
        return ledger_unreachable(request, exc)
    raise exc


async def on_commit_pending(request: Request, exc: Exception):
    """``CommitPending``: the ledger has not answered a commit after ``[web] commit_wait_s`` (a
    primary holding it for its synchronous replicas): 503 "the write is waiting for the replicas and
    may still be saved: check before repeating", one log line ``web.ledger_commit_waiting``; the
    commit goes on (the pool is kept: the primary is alive)."""
    log.warning("web.ledger_commit_waiting", path=request.url.path, method=request.method,
                wait_s=getattr(exc, "wait_s", None))
    resp = page(request, "error.html", status_code=503, message_key="ledger_commit_waiting", detail="")
    resp.headers["Retry-After"] = "10"
    return resp


async def on_pool_timeout(request: Request, exc: Exception):
    """SQLAlchemy's pool ``TimeoutError``: every pooled connection is taken (commits held for the
    ledger's replicas, ``CommitPending``, keep theirs) and none came free in the pool's timeout:
    the 503 "busy, nothing was saved, try again" page (this request had no connection, so it wrote
    nothing), one log line ``web.ledger_pool_full``, instead of a 500."""
    log.warning("web.ledger_pool_full", path=request.url.path, method=request.method)
    resp = page(request, "error.html", status_code=503, message_key="busy", detail="")
    resp.headers["Retry-After"] = "10"
    return resp


HTTP_KEYS = {404: "not_found", 405: "method_not_allowed"}
# Starlette's MultiPartException texts for one form field (not a file) over its max_part_size:
# "Field exceeded maximum size of 1024KB." (urlencoded), "Part exceeded maximum size of 1024KB." (multipart)
FIELD_TOO_LARGE = "exceeded maximum size"
FIELD_MAX_BYTES = 1024 * 1024  # Starlette's max_part_size default: a form field (not a file) of a request


async def on_http(request: Request, exc: Exception):
    """Starlette's ``HTTPException`` (no route for the address: 404; a method the route does not
    take: 405) as the error page, its status and headers (``Allow``) kept."""
    status = getattr(exc, "status_code", 500)
    if status == 400 and FIELD_TOO_LARGE in str(getattr(exc, "detail", "")).lower():
        # Starlette's form parser refuses one form field over 1 MB (a chunked body is read as it
        # comes, so ``BodyLimit`` has not counted to its limit yet): too large, not malformed
        log.warning("web.body_too_large", path=request.url.path, field_max_bytes=FIELD_MAX_BYTES)
        detail = f"{FIELD_MAX_BYTES // (1024 * 1024)} MB"
        if request.url.path.startswith("/w/"):  # the worker's words: his text is what is too long
            detail = t(lang_of(request), "w_field_too_large").format(n=MAX_TEXT)
        resp = page(request, "error.html", status_code=413, message_key="too_large", detail=detail)
        resp.headers["Connection"] = "close"
        return resp
    detail = f"{request.method} {request.url.path}" if status == 405 else ""
    if getattr(request.state, "user", None) is None and "session" in request.scope:
        # no route ran its guard: a signed-in user keeps the menu of his role on the error page
        request.state.user = await current_user(request)
    resp = page(request, "error.html", status_code=status, message_key=HTTP_KEYS.get(status, "http_error"),
                detail=detail)
    for name, value in (getattr(exc, "headers", None) or {}).items():
        resp.headers[name] = value
    if status == 405:  # every method of every route at this address (GET /x and POST /x are two routes)
        resp.headers["Allow"] = ", ".join(allowed_methods(request))
    return resp


def allowed_methods(request: Request) -> list[str]:
    """The methods the routes matching ``request``'s path take, sorted (for a 405's ``Allow``)."""
    path = request.scope.get("path", "")
    methods: set[str] = set()
    for route in request.app.routes:
        regex, taken = getattr(route, "path_regex", None), getattr(route, "methods", None)
        if regex is not None and taken and regex.match(path):
            methods |= set(taken)
    return sorted(methods)


HANDLERS = {HTTPException: on_http, BadInput: on_bad_input, OverflowError: on_overflow, DataError: on_data_error,
            OperationalError: on_operational, InternalError: on_internal, CommitPending: on_commit_pending,
            PoolTimeout: on_pool_timeout, DatabaseError: on_database}


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
