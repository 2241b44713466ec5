"""Cases (R7): opened from a flag, the defence, the decision, the appeal, final.

Inspectors change cases; auditors and admins read them. Each action calls
``central.registry.cases`` in one transaction; a ``BadInput`` is shown on the case page (400) and
nothing is written.
"""

from __future__ import annotations

import functools

from sqlalchemy import select
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from central.registry import cases as svc
from central.registry.photos import office_photo
from central.registry.schema import cases as cases_table
from central.registry.worker_ports import in_ports
from central.web import casemodel
from central.web.flagsmodel import event_row
from central.web.ports import per_port
from central.web.render import attachment_download, bad_input, page
from central.web.security import guarded
from portgate import cells
from portgate.errors import BadInput

WRITERS = ("inspector",)
READERS = ("inspector", "auditor", "admin")


def _actor(request: Request) -> str:
    return f"web:{request.state.user.login}"


MAX_ID = 2**63 - 1  # the largest row id SQLite and PostgreSQL BIGINT hold


def row_id(text: str, what: str) -> int:
    """A row id from the URL: 1..MAX_ID, else ``BadInput`` (answered 404: no such row)."""
    try:
        value = int(text)
    except ValueError:
        raise BadInput(f"{what} id is a number", where=what) from None
    if not 1 <= value <= MAX_ID:
        raise BadInput(f"no {what} {text[:30]}", where=what)
    return value


def _case_id(request: Request) -> int:
    return row_id(request.path_params["case_id"], "case")


def _of_view(fn):
    """Mark ``fn`` (an endpoint under ``/cases/{case_id}``) per port: a case not of the view's ports
    (``cases.port``, ``central.registry.worker_ports.in_ports``) is answered as a case that does
    not exist (``no case N``: 404 for a page, 400 for a step, as ``case_detail`` and ``_act`` answer
    an unknown one), so a port's inspector learns nothing of another port's cases."""

    @functools.wraps(fn)
    async def endpoint(request: Request) -> Response:
        ports = request.state.ports
        if ports is not None:
            web = request.app.state.web
            try:
                case_id = _case_id(request)
            except BadInput:
                return await fn(request)  # not a case id: the endpoint refuses it as always
            cond = in_ports(cases_table.c.port, ports, web.ports)
            found = await run_in_threadpool(web.read, lambda c: c.execute(
                select(cases_table.c.id).where(cases_table.c.id == case_id, cond)).first())
            if found is None:
                return bad_input(request, f"case: no case {case_id}",
                                 status_code=404 if request.method == "GET" else 400)
        return await fn(request)

    endpoint.per_port = True  # type: ignore[attr-defined]
    return endpoint


async def _act(request: Request, fn) -> Response:
    web = request.app.state.web
    try:
        result = await run_in_threadpool(web.with_session, fn)
    except BadInput as exc:
        return bad_input(request, str(exc))
    target = result if isinstance(result, int) else _case_id(request)
    return RedirectResponse(f"/cases/{target}", status_code=303)


@guarded(*READERS)
@per_port  # the cases of the view's ports
async def case_list(request: Request):
    web = request.app.state.web
    ports = request.state.ports
    cond = None if ports is None else in_ports(cases_table.c.port, ports, web.ports)
    rows = await run_in_threadpool(web.with_session, lambda s: svc.list_open(s, where=cond))
    return page(request, "cases.html", rows=rows)


@guarded(*WRITERS)
@per_port  # from a flagged event of the view's ports
async def case_open(request: Request):
    form = await request.form()
    actor = _actor(request)
    event_id = str(form.get("event_id") or "")
    web = request.app.state.web
    if request.state.ports is not None:
        try:  # another port's event: "no event", as an unknown one
            await run_in_threadpool(web.read, event_row, event_id, request.state.ports)
        except BadInput as exc:
            return bad_input(request, str(exc))
    existing = await run_in_threadpool(web.with_session, lambda s: svc.case_of_event(s, event_id))
    if existing is not None:  # say so: what was typed is not silently dropped for the old case
        return page(request, "error.html", status_code=409, message_key="case_exists",
                    detail="", link=f"/cases/{existing}", link_text=f"#{existing}")
    return await _act(request, lambda s: svc.open_from_event(
        s, str(form.get("event_id") or ""), flag=str(form.get("flag") or ""), charge=str(form.get("charge") or ""),
        article=str(form.get("article") or ""), evidence=str(form.get("evidence") or ""), actor=actor))


@guarded(*READERS)
@_of_view
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
@_of_view
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
@_of_view
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
@_of_view
async def case_appeal(request: Request):
    form = await request.form()
    actor, case_id = _actor(request), _case_id(request)
    tz = request.app.state.web.tz
    return await _act(request, lambda s: svc.file_appeal(s, case_id, str(form.get("appeal") or ""), actor=actor,
                                                         tz=tz))


@guarded(*WRITERS)
@_of_view
async def case_appeal_outcome(request: Request):
    form = await request.form()
    actor, case_id = _actor(request), _case_id(request)
    return await _act(request, lambda s: svc.decide_appeal(s, case_id, str(form.get("outcome") or ""), actor=actor))


@guarded(*WRITERS)
@_of_view
async def case_waive(request: Request):
    actor, case_id = _actor(request), _case_id(request)
    return await _act(request, lambda s: svc.waive_appeal(s, case_id, actor=actor))


@guarded(*READERS)
@_of_view
async def case_attachment(request: Request):
    web = request.app.state.web
    try:
        case_id, att = _case_id(request), row_id(request.path_params["attachment_id"], "attachment")
        row = await run_in_threadpool(web.with_session, lambda s: svc.attachment(s, case_id, att))
    except (BadInput, ValueError) as exc:
        return bad_input(request, str(exc), status_code=404)
    return attachment_download(row.filename, row.data)


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
