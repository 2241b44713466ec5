"""Who may call what: the session's user, its role, and the CSRF token of every change.

Every route endpoint is wrapped by ``guarded(*roles)`` or marked ``public``. A guarded endpoint:

- without a logged-in, enabled user: a page (GET) redirects to ``/login`` (303), anything else
  (htmx, SSE, POST) answers 401; never the data;
- with a user whose role is not in ``roles``: 403;
- with a method that changes state (not GET/HEAD/OPTIONS): the ``X-CSRF-Token`` header or the
  ``csrf_token`` form field must equal the session's token (constant-time compare), else 403 with the app's error page.

The session is Starlette's ``SessionMiddleware`` cookie (signed with itsdangerous, HttpOnly,
SameSite=Lax, Secure when configured), holding ``sid`` (the token of a server-side session,
``central.web.users.session_user``: logout, a new password or disabling the user end it), ``csrf``
and ``lang``.
"""

from __future__ import annotations

import functools
import hmac
import secrets
from collections.abc import Awaitable, Callable
from urllib.parse import quote, urlsplit

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from central.web.ports import SESSION_KEY, user_ports, view_ports
from central.web.users import User, session_user

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
ALL_ROLES = ("office", "inspector", "auditor", "admin")

Endpoint = Callable[[Request], Awaitable[Response]]


def csrf_token(request: Request) -> str:
    """The session's CSRF token, created on first use."""
    token = request.session.get("csrf")
    if not token:
        token = request.session["csrf"] = secrets.token_urlsafe(32)
    return token


async def csrf_ok(request: Request) -> bool:
    """True when the request carries the session's CSRF token (header or form field)."""
    expected = request.session.get("csrf")
    if not expected:
        return False
    sent = request.headers.get("x-csrf-token")
    if not sent:
        ctype = request.headers.get("content-type", "")
        if ctype.startswith(("application/x-www-form-urlencoded", "multipart/form-data")):
            form = await request.form()
            value = form.get("csrf_token")
            sent = value if isinstance(value, str) else None
    return bool(sent) and hmac.compare_digest(str(sent), str(expected))


async def current_user(request: Request) -> User | None:
    """The enabled user of this session, or None (no session, ended session, disabled user)."""
    sid = request.session.get("sid")
    if not isinstance(sid, str) or not sid:
        return None
    app = request.app.state.web
    # a read on a plain connection (no ORM session, no transaction to commit): every page pays it;
    # on a SQLite ledger whose pool has a connection free, on the event loop itself: one thread hand-off
    # (there and back) fewer per page (``WebState.quick_read_here``, docs/performance.md)
    if app.quick_read_here():
        return app.read(session_user, sid)
    return await run_in_threadpool(app.read, session_user, sid)


def public(fn: Endpoint) -> Endpoint:
    """Mark an endpoint reachable without a session (the login page, static files)."""
    fn.public = True  # type: ignore[attr-defined]
    return fn


def guarded(*roles: str) -> Callable[[Endpoint], Endpoint]:
    """Wrap an endpoint with the session, role and CSRF checks above. ``roles``: who may call it."""
    allowed = tuple(roles) or ALL_ROLES

    def deco(fn: Endpoint) -> Endpoint:
        @functools.wraps(fn)
        async def endpoint(request: Request) -> Response:
            user = await current_user(request)
            if user is None:
                wants_page = request.method == "GET" and "hx-request" not in request.headers and \
                    "text/event-stream" not in request.headers.get("accept", "")
                if wants_page:
                    return RedirectResponse("/login?next=" + _local(request.url.path), status_code=303)
                return _login_required(request)
            if user.role not in allowed:
                from central.web.render import forbidden  # lazy: cycle: render builds pages with security's csrf_token

                return forbidden(request, user)
            refused = _port_scope(request, user, fn)
            if refused is not None:
                return refused
            if request.method not in SAFE_METHODS and not await csrf_ok(request):
                from central.web.render import page  # lazy: cycle: render builds pages with csrf_token

                request.state.user = user  # the refusal is the app's page, in the user's language
                keeps_typed = getattr(fn, "csrf_refused", None)  # a form shown again with what was typed
                if keeps_typed is not None:
                    return await keeps_typed(request)
                return page(request, "error.html", status_code=403, message_key="csrf_refused", detail="")
            request.state.user = user
            return await fn(request)

        endpoint.roles = allowed  # type: ignore[attr-defined]
        return endpoint

    return deco


def _port_scope(request: Request, user: User, fn: Endpoint) -> Response | None:
    """Set ``request.state.ports`` (what the page may show, ``central.web.ports``) and
    ``port_scope`` (the user's ports); on an office of several ports, the 403 page
    ``port_scope_page`` for a page not split by port (not ``per_port``) when the user does not see
    every served port. ``None``: go on."""
    served = request.app.state.web.ports
    if len(served) <= 1 or user.role == "worker":  # one port (or a worker's own pages): no filter
        request.state.ports, request.state.port_scope = None, ()
        return None
    scope = user_ports(user.ports, served)
    request.state.port_scope = scope
    request.state.ports = view_ports(scope, request.session.get(SESSION_KEY))
    if getattr(fn, "per_port", False) or set(scope) >= set(served):
        return None
    from central.web.render import page  # lazy: cycle: render builds pages with csrf_token

    request.state.user = user
    return page(request, "error.html", status_code=403, message_key="port_scope_page", detail="")


def _login_required(request: Request) -> Response:
    """401 for a request without a session that is not a page to redirect (a form's POST, an htmx
    or SSE request): the error page in the user's language with a link to the login page (back to
    the page the form was on, from ``Referer``); htmx also gets ``HX-Redirect`` so the whole page
    goes to the login page. Nothing the request sent is read or written."""
    from central.web.render import page  # lazy: cycle: render builds pages with security's csrf_token

    if "hx-request" in request.headers:  # htmx: the whole page goes to the login page
        back = urlsplit(request.headers.get("hx-current-url", "")).path or "/"
    else:
        back = urlsplit(request.headers.get("referer", "")).path or "/"
    link = "/login?next=" + _local(back)
    request.state.user = None
    resp = page(request, "error.html", status_code=401, message_key="login_required", detail="", login_link=link)
    if "hx-request" in request.headers:
        resp.headers["HX-Redirect"] = link
    return resp


def _local(path: str) -> str:
    """A path safe to redirect to after login (local, no scheme or host)."""
    if not path.startswith("/") or path.startswith("//"):
        return "/"
    return quote(path, safe="/")


def safe_next(value: str | None) -> str:
    """``value`` if it is a local path, else ``/`` (no open redirect after login)."""
    if not value or not value.startswith("/") or value.startswith("//") or "\\" in value:
        return "/"
    return value
