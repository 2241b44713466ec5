"""The worker's cases on his phone (R7), under ``/w/processos``: the list, one case with its
deadline for an appeal, his prior defence and his appeal (each with a photo of a document), and
his case's attachments. Only his own cases: another worker's case or attachment is 404. A refused
defence or appeal (400; an expired form's CSRF refusal: 403) is shown again with what was typed; one
sent twice is recorded once (``central.web.resend``). Part of ``central.web.routes.worker``'s
``ROUTES``.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from central.registry import cases as case_svc
from central.web import resend, workermodel
from central.web.workeraccounts import registration_of
from central.web.workertexts import word
from central.web.render import attachment_download, lang_of
from central.web.routes.cases import row_id
from central.web.routes.worker_frame import PHOTO_MAX, worker_actor, checked_photo, refused, say, worker_only, wpage
from portgate.errors import BadInput


@worker_only
async def cases_page(request: Request):
    web, reg = request.app.state.web, request.state.registration
    found = await run_in_threadpool(web.read, lambda c: workermodel.cases_of(c, reg))
    return wpage(request, "worker/cases.html", cases=found)


def _case_id(request: Request) -> int | None:
    try:
        return row_id(request.path_params["case_id"], "case")
    except BadInput:
        return None


async def _case_view(request: Request, status_code: int = 200, **extra) -> Response:
    web, reg = request.app.state.web, request.state.registration
    case_id = _case_id(request)
    found = None if case_id is None else await run_in_threadpool(web.read, workermodel.case_of, reg, case_id)
    if found is None:
        return refused(request, f"no case {request.path_params['case_id'][:30]}", status_code=404)
    row, files = found
    deadline = case_svc.appeal_deadline(_Row(row)) if row.get("decided_at") else None
    context = {"defence_text": "", "appeal_text": "", "error": "", "saved": request.query_params.get("saved", ""),
               "send_id": resend.new_send_id()}
    context.update(extra)
    return wpage(request, "worker/case.html", status_code=status_code, case=row, files=files, deadline=deadline,
                 now=web.now(), photo_mb=PHOTO_MAX // (1024 * 1024), **context)


class _Row:
    """A case dict read as the row ``cases.appeal_deadline`` takes."""

    def __init__(self, d: dict) -> None:
        self.__dict__.update(d)


@worker_only
async def case_page(request: Request):
    return await _case_view(request)


async def _case_change(request: Request, field: str, step) -> Response:
    """A worker's defence or appeal: the case must be his (else 404); ``step(session, case_id, text,
    files, send_id)`` records it, unless it is the same send as an earlier one (``resend``: then
    nothing is recorded and the answer is the same 303); a refusal shows the case again with the
    text typed (400)."""
    web, reg = request.app.state.web, request.state.registration
    case_id = _case_id(request)
    found = None if case_id is None else await run_in_threadpool(web.read, workermodel.case_of, reg, case_id)
    if found is None:
        return refused(request, f"no case {request.path_params['case_id'][:30]}", status_code=404)
    form = await request.form()
    text, send_id, actor = str(form.get(field) or ""), resend.send_id_of(form.get("send_id")), worker_actor(request)

    def once(s):
        if not resend.already_sent(s, action=f"case.{field}", case_id=case_id, actor=actor, send_id=send_id,
                                   text=text, now=web.now()):
            step(s, case_id, text, files, send_id)

    try:
        files = []
        item = form.get("photo")
        if isinstance(item, UploadFile) and item.filename:
            files.append(checked_photo(await item.read(), item.filename))
        await run_in_threadpool(web.with_session, once)
    except BadInput as exc:
        return await _case_view(request, status_code=400, error=say(lang_of(request), exc),
                                **{f"{field}_text": text})
    return RedirectResponse(f"/w/processos/{case_id}?saved={field}", status_code=303)


async def _csrf_refused(request: Request) -> Response:
    """An expired form (CSRF refused by ``security.guarded``, the user known): the case page again,
    403, with the reason and the text typed still in the form (nothing recorded)."""
    web, user = request.app.state.web, request.state.user
    reg = await run_in_threadpool(web.with_session, lambda s: registration_of(s, user.id))
    reason = word(lang_of(request), "csrf_refused")
    if reg is None:
        return wpage(request, "worker/message.html", status_code=403, message=reason)
    request.state.registration = reg
    field = "defence" if request.url.path.endswith("/defesa") else "appeal"
    form = await request.form()
    return await _case_view(request, status_code=403, error=reason, **{f"{field}_text": str(form.get(field) or "")})


def _keeps_typed(fn):
    """Mark a case form's endpoint: ``security.guarded`` answers its CSRF refusal by ``_csrf_refused``."""
    fn.csrf_refused = _csrf_refused
    return fn


@worker_only
@_keeps_typed
async def case_defence(request: Request):
    web = request.app.state.web
    actor = worker_actor(request)
    return await _case_change(request, "defence", lambda s, cid, text, files, send_id: case_svc.record_defence(
        s, cid, text, attachments=files, actor=actor, now=web.now(), send_id=send_id))


@worker_only
@_keeps_typed
async def case_appeal(request: Request):
    actor = worker_actor(request)

    def step(s, cid, text, files, send_id):
        if not text.strip():
            raise BadInput("the appeal text is required", where="appeal")
        case_svc.file_appeal(s, cid, text, actor=actor, now=request.app.state.web.now(), send_id=send_id)

    return await _case_change(request, "appeal", step)


@worker_only
async def case_attachment(request: Request):
    web, reg = request.app.state.web, request.state.registration
    case_id = _case_id(request)
    try:
        att = row_id(request.path_params["attachment_id"], "attachment")
    except BadInput:
        att = None
    found = None if case_id is None else await run_in_threadpool(web.read, workermodel.case_of, reg, case_id)
    if found is None or att is None or att not in {f["id"] for f in found[1]}:
        return refused(request, "no attachment", status_code=404)
    row = await run_in_threadpool(web.with_session, lambda s: case_svc.attachment(s, case_id, att))
    return attachment_download(row.filename, row.data)


ROUTES = [
    Route("/w/processos", cases_page, methods=["GET"]),
    Route("/w/processos/{case_id}", case_page, methods=["GET"]),
    Route("/w/processos/{case_id}/defesa", case_defence, methods=["POST"]),
    Route("/w/processos/{case_id}/recurso", case_appeal, methods=["POST"]),
    Route("/w/processos/{case_id}/anexos/{attachment_id}", case_attachment, methods=["GET"]),
]
