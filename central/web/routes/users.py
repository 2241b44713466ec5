"""Users (admin only): the list, add a user, disable a user."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse
from starlette.routing import Route

from central.web import users as svc
from central.web.render import bad_input, page
from central.web.security import guarded
from portgate.errors import BadInput


@guarded("admin")
async def user_list(request: Request):
    web = request.app.state.web
    rows = await run_in_threadpool(web.with_session, svc.list_users)
    return page(request, "users.html", rows=rows, roles=svc.ROLES, served=web.ports)


@guarded("admin")
async def user_add(request: Request):
    form = await request.form()
    web = request.app.state.web
    actor = f"web:{request.state.user.login}"
    try:
        await run_in_threadpool(web.with_session, lambda s: svc.add_user(
            s, str(form.get("login") or ""), role=str(form.get("role") or ""), password=str(form.get("password") or ""),
            name=str(form.get("name") or ""), actor=actor))
    except BadInput as exc:
        return bad_input(request, str(exc))
    return RedirectResponse("/users", status_code=303)


@guarded("admin")
async def user_disable(request: Request):
    form = await request.form()
    web = request.app.state.web
    actor = f"web:{request.state.user.login}"
    try:
        await run_in_threadpool(web.with_session, lambda s: svc.disable_user(s, str(form.get("login") or ""), actor=actor))
    except BadInput as exc:
        return bad_input(request, str(exc))
    return RedirectResponse("/users", status_code=303)


ROUTES = [
    Route("/users", user_list, methods=["GET"]),
    Route("/users", user_add, methods=["POST"]),
    Route("/users/disable", user_disable, methods=["POST"]),
]
