"""The registry screens: search workers (name, registration, card UID in any UID form), a
worker's page, the edit form (validated as a workers.csv row, audited) and the CSV upload of
workers/cards/ships, all or nothing (every bad row named ``file:line``, nothing written)."""

from __future__ import annotations

import datetime as dt
import re

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import RedirectResponse
from starlette.routing import Route

from central.calls import service as calls_service
from central.registry.edit import EDITABLE, edit_worker
from central.registry.store import import_files
from central.web import registrymodel
from central.web.render import bad_input, lang_of, page
from central.web.security import ALL_ROLES, guarded
from central.web.service_texts import card_detail, card_word, penalty_kind, penalty_reason
from central.web.uploads import safe_name, saved
from portgate.errors import BadInput

WRITERS = ("office",)
UPLOAD_KINDS = ("workers", "cards", "ships")


@guarded(*ALL_ROLES)
async def search(request: Request):
    web = request.app.state.web
    q = request.query_params.get("q", "")
    hits = await run_in_threadpool(web.with_session, lambda s: registrymodel.search(s, q))
    return page(request, "workers.html", q=q, hits=hits)


def _today(web) -> dt.date:
    return web.now().astimezone(web.tz).date()


@guarded(*ALL_ROLES)
async def worker(request: Request):
    web = request.app.state.web
    reg = request.path_params["registration"]
    try:
        wp = await run_in_threadpool(web.with_session, lambda s: registrymodel.worker_page(
            s, reg, today=_today(web), now=web.now()))
    except BadInput as exc:
        return bad_input(request, str(exc), status_code=404)
    photo = web.photo_exists(reg)
    sent = request.query_params.get("photo", "")
    lang = lang_of(request)
    return page(request, "worker.html", wp=wp, w=wp.worker, saved=request.query_params.get("saved"),
                card_word=lambda v: card_word(lang, v), card_detail=lambda v: card_detail(lang, v),
                penalty_kind=lambda v: penalty_kind(lang, v), penalty_reason=lambda v: penalty_reason(lang, v),
                photo=photo, photo_sent=sent if re.fullmatch(r"sent-\d{1,20}|unsent|off", sent) else "")


@guarded(*WRITERS)
async def worker_edit(request: Request):
    web = request.app.state.web
    reg = request.path_params["registration"]
    form = await request.form()
    row = {k: str(form.get(k) or "") for k in EDITABLE if k in form}
    actor = f"web:{request.state.user.login}"
    try:
        _w, changed = await run_in_threadpool(web.with_session, lambda s: edit_worker(
            s, reg, row, actor=actor, now=web.now()))
    except BadInput as exc:
        return bad_input(request, str(exc))
    return RedirectResponse(f"/workers/{reg}?saved={len(changed)}", status_code=303)


@guarded(*WRITERS)
async def upload_form(request: Request):
    return page(request, "upload.html", errors=[], done=None)


@guarded(*WRITERS)
async def upload(request: Request):
    """Workers, cards and ships files in one transaction: any bad row, and nothing is written."""
    web = request.app.state.web
    form = await request.form()
    files: dict[str, tuple[str, bytes]] = {}
    for kind in UPLOAD_KINDS:
        up = form.get(kind)
        if isinstance(up, UploadFile) and up.filename:
            files[kind] = (safe_name(up.filename, f"{kind}.csv"), await up.read())
    if not files:
        return page(request, "upload.html", status_code=400, errors=["choose at least one CSV file"], done=None)
    actor = f"web:{request.state.user.login}"

    def work(s):
        with saved(files) as paths:
            errors: list[str] = []
            counts: dict[str, int] = {}
            if "workers" in paths or "cards" in paths:
                try:
                    counts.update(import_files(s, workers_csv=paths.get("workers"), cards_csv=paths.get("cards"),
                                               actor=actor, now=web.now()))
                except BadInput as exc:
                    errors += str(exc).splitlines()
            if "ships" in paths:
                try:
                    counts["ships"] = calls_service.import_csv(s, paths["ships"], actor=actor, now=web.now())
                except (BadInput, UnicodeDecodeError) as exc:
                    errors += str(exc).splitlines()
            if errors:
                raise _Refused(errors)
            return counts

    try:
        counts = await run_in_threadpool(web.with_session, work)
    except _Refused as exc:
        return page(request, "upload.html", status_code=400, errors=exc.errors, done=None)
    return page(request, "upload.html", errors=[], done=counts)


class _Refused(Exception):
    """Bad rows: the transaction is rolled back (nothing written) and every row is shown."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors


ROUTES = [
    Route("/workers", search, methods=["GET"]),
    Route("/workers/upload", upload_form, methods=["GET"]),
    Route("/workers/upload", upload, methods=["POST"]),
    Route("/workers/{registration}", worker, methods=["GET"]),
    Route("/workers/{registration}", worker_edit, methods=["POST"]),
]
