"""The office's side of the workers' own pages (issue 35, docs/worker.md): print an activation code
from the worker's page (``/workers/{registration}/access-code``), revoke his access
(``/workers/{registration}/access-revoke``), and decide the workers' refusals for health (R3) with
their certificates (``/worker-requests``). Role office; pages rendered like the worker's
(``central.web.routes.worker_frame.wpage``)."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from central.registry.schema import workers
from central.registry.worker_ports import in_ports, worker_in
from central.rotation.ports import RotationPorts
from central.web import workerrequests
from central.web.ports import per_port
from central.web.registry_scope import of_worker
from central.web.routes.cases import row_id
from central.web.routes.worker_frame import PHOTO_FORMATS, refused, wpage
from central.web.security import guarded
from central.web.users import disable_user
from central.web.workeraccounts import account_of, issue_code
from portgate.errors import BadInput

OFFICE = ("office",)


@guarded(*OFFICE)
@of_worker
async def access_code(request: Request):
    """The office prints an activation code for the worker (a printable page; the code is shown
    once, only its hash is kept)."""
    web = request.app.state.web
    reg = request.path_params["registration"]
    actor = f"web:{request.state.user.login}"
    try:
        issued = await run_in_threadpool(web.with_session, lambda s: issue_code(s, reg, actor=actor, now=web.now()))
    except BadInput as exc:
        return refused(request, str(exc), status_code=404 if "no worker" in str(exc) else 400)
    url = f"{request.url.scheme}://{request.url.netloc}/w/ativar"
    return wpage(request, "worker/code.html", issued=issued, url=url)


@guarded(*OFFICE)
@of_worker
async def revoke_access(request: Request):
    """The office ends the worker's access (``users.disable_user``: no login, open sessions end);
    a new activation code gives it back. 404 when the registration has no account."""
    web = request.app.state.web
    reg = request.path_params["registration"]
    actor = f"web:{request.state.user.login}"

    def revoke(s):
        row = account_of(s, reg)
        if row is None:
            return False
        disable_user(s, row.login, actor=actor, now=web.now())
        return True

    if not await run_in_threadpool(web.with_session, revoke):
        return refused(request, f"registration {reg[:64]} has no worker account", status_code=404)
    return RedirectResponse(f"/workers/{reg}?access=revoked", status_code=303)


@guarded(*OFFICE)
@per_port  # the requests of the view's ports' workers (``workers.port``)
async def office_requests(request: Request):
    """The office's list of workers' health refusals (R3), pending first, with their certificates;
    on an office of several ports, those of the workers of the ports the user's view shows."""
    web = request.app.state.web
    ports = request.state.ports
    where = None if ports is None else in_ports(workers.c.port, ports, web.ports)
    found = await run_in_threadpool(web.read, lambda c: workerrequests.listing(c, workers_where=where,
                                                                                now=web.now()))
    return wpage(request, "worker/requests.html", found=found)


async def _in_view(request: Request, request_id: int | None) -> bool:
    """False for a request of a worker not of the view's ports (answered as no such request)."""
    web, ports = request.app.state.web, request.state.ports
    if ports is None or request_id is None:
        return True

    def mine(conn) -> bool:
        reg = workerrequests.registration_of(conn, request_id)
        return reg is None or worker_in(conn, reg, ports, web.ports)  # an unknown one: refused as always

    return await run_in_threadpool(web.read, mine)


@guarded(*OFFICE)
@per_port  # a request of the view's ports' workers; another port's is "no request"
async def office_request_photo(request: Request):
    web = request.app.state.web
    try:
        request_id = row_id(request.path_params["request_id"], "request")
    except BadInput:
        request_id = None
    if not await _in_view(request, request_id):
        request_id = None
    found = None if request_id is None else await run_in_threadpool(web.read, workerrequests.photo_of, request_id)
    if found is None:
        return refused(request, "no request", status_code=404)
    _name, ctype, data = found
    return Response(data, media_type=ctype if ctype in PHOTO_FORMATS.values() else "application/octet-stream")


@guarded(*OFFICE)
@per_port  # a request of the view's ports' workers; another port's is "no pending request"
async def office_request_decide(request: Request):
    """Accept (the R3 refusal with proof: no infraction, he keeps his place) or reject."""
    web = request.app.state.web
    form = await request.form()
    actor = f"web:{request.state.user.login}"
    accept = str(form.get("decision") or "") == "accept"
    try:
        request_id = row_id(request.path_params["request_id"], "request")
        if not await _in_view(request, request_id):
            raise BadInput(f"no pending request {request_id}", where="request")
        ports = RotationPorts(tuple(web.ports or ()), web.gate_registry)  # the next worker: of the entry's port
        await run_in_threadpool(web.with_session, lambda s: workerrequests.decide(
            s, request_id, accept, actor=actor, now=web.now(), ports=ports))
    except BadInput as exc:
        return refused(request, str(exc), status_code=404 if "no pending" in str(exc) or "no request" in str(exc)
                        else 400)
    return RedirectResponse("/worker-requests", status_code=303)


ROUTES = [
    Route("/workers/{registration}/access-code", access_code, methods=["POST"]),
    Route("/workers/{registration}/access-revoke", revoke_access, methods=["POST"]),
    Route("/worker-requests", office_requests, methods=["GET"]),
    Route("/worker-requests/{request_id}/photo", office_request_photo, methods=["GET"]),
    Route("/worker-requests/{request_id}/decide", office_request_decide, methods=["POST"]),
]
