"""Cases (R7): opened from a flag, the defence, the decision, the appeal, final.

Inspectors change cases; auditors and admins read them. Each action calls
``central.registry.cases`` in one transaction; a ``BadInput`` is shown on the case page (400) and
nothing is written.
"""

from __future__ import annotations


from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from central.registry import cases as svc
from central.registry.photos import office_photo
from central.web import casemodel
from central.web.render import bad_input, page
from central.web.security import guarded
from portgate import cells
from portgate.errors import BadInput

WRITERS = ("inspector",)
READERS = ("inspector", "auditor", "admin")


def _actor(request: Request) -> str:
    return f"web:{request.state.user.login}"


MAX_ID = 2**63 - 1  # the largest row id SQLite and PostgreSQL BIGINT hold


def _row_id(text: str, what: str) -> int:
    """A row id from the URL: 1..MAX_ID, else ``BadInput`` (answered 404: no such row)."""
    try:
        value = int(text)
    except ValueError:
        raise BadInput(f"{what} id is a number", where=what) from None
    if not 1 <= value <= MAX_ID:
        raise BadInput(f"no {what} {text[:30]}", where=what)
    return value


def _case_id(request: Request) -> int:
    return _row_id(request.path_params["case_id"], "case")


async def _act(request: Request, fn) -> Response:
    web = request.app.state.web
    try:
        result = await run_in_threadpool(web.with_session, fn)
    except BadInput as exc:
        return bad_input(request, str(exc))
    target = result if isinstance(result, int) else _case_id(request)
    return RedirectResponse(f"/cases/{target}", status_code=303)


@guarded(*READERS)
async def case_list(request: Request):
    web = request.app.state.web
    rows = await run_in_threadpool(web.with_session, svc.list_open)
    return page(request, "cases.html", rows=rows)


@guarded(*WRITERS)
async def case_open(request: Request):
    form = await request.form()
    actor = _actor(request)
    event_id = str(form.get("event_id") or "")
    web = request.app.state.web
    existing = await run_in_threadpool(web.with_session, lambda s: svc.case_of_event(s, event_id))
    if existing is not None:  # say so: what was typed is not silently dropped for the old case
        return page(request, "error.html", status_code=409, message_key="case_exists",
                    detail="", link=f"/cases/{existing}", link_text=f"#{existing}")
    return await _act(request, lambda s: svc.open_from_event(
        s, str(form.get("event_id") or ""), flag=str(form.get("flag") or ""), charge=str(form.get("charge") or ""),
        article=str(form.get("article") or ""), evidence=str(form.get("evidence") or ""), actor=actor))


@guarded(*READERS)
async def case_detail(request: Request):
    web = request.app.state.web
    try:
        case_id = _case_id(request)

        def load(s):
            row = svc.get_case(s, case_id)
            return (dict(row._mapping), svc.attachments_of(s, case_id), svc.appeal_deadline(row, web.tz),
                    casemodel.record(s, row, web.tz))

        row, files, deadline, rec = await run_in_threadpool(web.with_session, load)
    except BadInput as exc:
        return bad_input(request, str(exc), status_code=404)
    photo = bool(web.photos_dir and row["registration"] and office_photo(web.photos_dir, row["registration"]))
    return page(request, "case.html", case=row, files=files, deadline=deadline, record=rec, photo=photo,
                today=web.now().astimezone(web.tz).date(), decisions=svc.DECISIONS)


@guarded(*WRITERS)
async def case_defence(request: Request):
    form = await request.form()
    files = []
    for item in form.getlist("attachment"):
        if isinstance(item, UploadFile) and item.filename:
            data = await item.read()
            files.append((item.filename, item.content_type or "application/octet-stream", data))
    actor, case_id = _actor(request), _case_id(request)
    return await _act(request, lambda s: svc.record_defence(s, case_id, str(form.get("defence") or ""),
                                                            attachments=files, actor=actor))


def _cell(parse, value, field: str):
    """A form field through a ``portgate.cells`` parser (empty = None); ``BadInput`` names the field."""
    try:
        return parse(None if value is None else str(value), field, optional=True)
    except BadInput as exc:
        raise BadInput(exc.reason.removeprefix(f"{field} "), where=field) from None


@guarded(*WRITERS)
async def case_decide(request: Request):
    form = await request.form()
    actor, case_id = _actor(request), _case_id(request)
    try:
        days, start = _cell(cells.whole, form.get("days"), "days"), _cell(cells.date, form.get("start"), "start")
    except BadInput as exc:
        return bad_input(request, str(exc))
    return await _act(request, lambda s: svc.decide(s, case_id, str(form.get("kind") or ""), days=days,
                                                    start=start, reason=str(form.get("reason") or ""), actor=actor,
                                                    limits=request.app.state.web.suspension_limits))


@guarded(*WRITERS)
async def case_appeal(request: Request):
    form = await request.form()
    actor, case_id = _actor(request), _case_id(request)
    tz = request.app.state.web.tz
    return await _act(request, lambda s: svc.file_appeal(s, case_id, str(form.get("appeal") or ""), actor=actor,
                                                         tz=tz))


@guarded(*WRITERS)
async def case_appeal_outcome(request: Request):
    form = await request.form()
    actor, case_id = _actor(request), _case_id(request)
    return await _act(request, lambda s: svc.decide_appeal(s, case_id, str(form.get("outcome") or ""), actor=actor))


@guarded(*WRITERS)
async def case_waive(request: Request):
    actor, case_id = _actor(request), _case_id(request)
    return await _act(request, lambda s: svc.waive_appeal(s, case_id, actor=actor))


@guarded(*READERS)
async def case_attachment(request: Request):
    web = request.app.state.web
    try:
        case_id, att = _case_id(request), _row_id(request.path_params["attachment_id"], "attachment")
        row = await run_in_threadpool(web.with_session, lambda s: svc.attachment(s, case_id, att))
    except (BadInput, ValueError) as exc:
        return bad_input(request, str(exc), status_code=404)
    safe = "".join(ch for ch in row.filename if ch.isalnum() or ch in "._-") or "anexo"
    return Response(row.data, media_type="application/octet-stream",
                    headers={"Content-Disposition": f'attachment; filename="{safe}"'})


ROUTES = [
    Route("/cases", case_list, methods=["GET"]),
    Route("/cases", case_open, methods=["POST"]),
    Route("/cases/{case_id}", case_detail, methods=["GET"]),
    Route("/cases/{case_id}/defence", case_defence, methods=["POST"]),
    Route("/cases/{case_id}/decide", case_decide, methods=["POST"]),
    Route("/cases/{case_id}/appeal", case_appeal, methods=["POST"]),
    Route("/cases/{case_id}/appeal-outcome", case_appeal_outcome, methods=["POST"]),
    Route("/cases/{case_id}/waive", case_waive, methods=["POST"]),
    Route("/cases/{case_id}/attachments/{attachment_id}", case_attachment, methods=["GET"]),
]
