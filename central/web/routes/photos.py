"""A worker's photo: upload (office; re-encoded by ``central.registry.photos``, audited, then sent to
the gates through the photo downlink when the server has a broker: ``central.web.photo_publish``)
and view."""

from __future__ import annotations

import structlog
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, RedirectResponse
from starlette.routing import Route

from central.registry.changes import audit
from central.registry.photos import office_photo, save_photo
from central.registry.store import get_worker
from central.web.registry_scope import of_worker
from central.web.render import bad_input
from central.web.routes.registry import worker_response
from central.web.security import ALL_ROLES, guarded
from portgate.errors import BadInput, PortgateError

log = structlog.get_logger("central.web")


@guarded("office")
@of_worker
async def upload(request: Request):
    web = request.app.state.web
    reg = request.path_params["registration"]
    if web.photos_dir is None:
        return bad_input(request, "no photos directory: set [web] photos_dir in central.toml")
    form = await request.form()
    up = form.get("photo")
    if not isinstance(up, UploadFile):
        return await _refused(request, reg, "choose a JPEG or PNG photo")
    data = await up.read()
    actor = f"web:{request.state.user.login}"

    def work(s):
        get_worker(s, reg)
        office, gate = save_photo(web.photos_dir, reg, data)
        audit(s, actor=actor, action="worker.photo", subject=reg,
              detail={"gate_bytes": gate.stat().st_size, "office_bytes": office.stat().st_size,
                      "uploaded_bytes": len(data)}, now=web.now())

    try:
        await run_in_threadpool(web.with_session, work)
    except BadInput as exc:
        return await _refused(request, reg, str(exc))
    return RedirectResponse(f"/workers/{reg}?photo={await _to_gates(web, reg)}", status_code=303)


async def _refused(request: Request, reg: str, reason: str):
    """A refused photo: the worker's page again, the reason beside the photo field (400)."""
    return await worker_response(request, reg, errors={"photo": reason}, form="photo", status_code=400)


async def _to_gates(web, reg: str) -> str:
    """Send the photos directory's changes to the gates (after the upload is stored and audited):
    ``sent-VERSION``, ``unsent`` (broker unreachable: it goes with the next publish) or ``off``
    (this server has no broker to publish to)."""
    if web.publish_photos is None:
        return "off"
    try:
        sent = await run_in_threadpool(web.publish_photos, web.photos_dir)
    except PortgateError as exc:
        log.warning("office_web.photo_not_published", registration=reg, error=str(exc))
        return "unsent"
    log.info("office_web.photo_published", registration=reg, **sent)
    return f"sent-{sent['version']}"


@guarded(*ALL_ROLES)
@of_worker
async def show(request: Request):
    web = request.app.state.web
    path = office_photo(web.photos_dir, request.path_params["registration"]) if web.photos_dir else None
    if path is None:
        return PlainTextResponse("no photo", status_code=404)
    return FileResponse(path, media_type="image/jpeg", headers={"cache-control": "private, no-store"})


ROUTES = [
    Route("/workers/{registration}/photo", upload, methods=["POST"]),
    Route("/workers/{registration}/photo", show, methods=["GET"]),
]
