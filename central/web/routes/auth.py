"""Log in, log out, switch language."""

from __future__ import annotations

import secrets

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse
from starlette.routing import Route

from central.web.i18n import LANGS
from central.web.ports import ALL, SESSION_KEY, per_port
from central.web.render import page
from central.web.security import ALL_ROLES, csrf_ok, csrf_token, guarded, public, safe_next
from central.web.users import LoginRefused, check_login, end_session, start_session


@public
async def login_form(request: Request):
    return page(request, "login.html", error=None, next=safe_next(request.query_params.get("next")))


@public
async def login(request: Request):
    form = await request.form()
    nxt = safe_next(str(form.get("next") or "/"))
    if not await csrf_ok(request):
        return page(request, "login.html", status_code=403, error="csrf", next=nxt)
    login_name = str(form.get("login") or "")
    password = str(form.get("password") or "")
    address = request.client.host if request.client else "?"
    web = request.app.state.web

    def attempt(session):
        try:
            user = check_login(session, login_name, password, address=address,
                               now=web.throttle_now())  # a clock that moves (WebState)
            return user, start_session(session, user.id, web.now())
        except LoginRefused as exc:
            return exc  # returned, not raised: the failure row commits with the transaction

    outcome = await run_in_threadpool(web.with_session, attempt)
    if isinstance(outcome, LoginRefused):
        key = "login_locked" if outcome.locked else "login_wrong"
        resp = page(request, "login.html", status_code=429 if outcome.locked else 401, error=key, next=nxt,
                    retry_after=outcome.retry_after)
        if outcome.locked:
            resp.headers["Retry-After"] = str(outcome.retry_after)
        return resp
    user, sid = outcome
    if user.role == "worker" and not nxt.startswith("/w/"):  # a worker's pages (routes/worker.py)
        nxt = "/w/"
    lang = request.session.get("lang")
    request.session.clear()  # a new session after login (no fixation)
    request.session.update({"sid": sid, "csrf": secrets.token_urlsafe(32)})
    if lang:
        request.session["lang"] = lang
    return RedirectResponse(nxt, status_code=303)


@guarded(*ALL_ROLES, "worker")
@per_port  # shows no port's data
async def logout(request: Request):
    """End the session server-side (a copy of the cookie opens nothing after) and clear the cookie."""
    sid = str(request.session.get("sid") or "")
    web = request.app.state.web
    await run_in_threadpool(web.with_session, lambda s: end_session(s, sid, web.now()))
    request.session.clear()
    return RedirectResponse("/login", status_code=303)


@public
async def set_lang(request: Request):
    """Language switch (pt | en), also before login; CSRF-checked like every change."""
    if not await csrf_ok(request):
        return page(request, "error.html", status_code=403, message_key="csrf", detail="")
    form = await request.form()
    lang = str(form.get("lang") or "pt")
    request.session["lang"] = lang if lang in LANGS else "pt"
    csrf_token(request)
    return RedirectResponse(safe_next(str(form.get("next") or "/")), status_code=303)


@guarded(*ALL_ROLES)
@per_port
async def set_port(request: Request):
    """The port selector (an office of several ports, ``central.web.ports``): one of the user's
    ports, or ``*`` for all of them (consolidated); anything else is all of them."""
    form = await request.form()
    chosen = str(form.get("port") or ALL)
    request.session[SESSION_KEY] = chosen if chosen in request.state.port_scope else ALL
    return RedirectResponse(safe_next(str(form.get("next") or "/")), status_code=303)


ROUTES = [
    Route("/login", login_form, methods=["GET"]),
    Route("/login", login, methods=["POST"]),
    Route("/logout", logout, methods=["POST"]),
    Route("/lang", set_lang, methods=["POST"]),
    Route("/port", set_port, methods=["POST"]),
]
