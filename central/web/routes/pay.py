"""Pay screens: statements by period and worker with every line (rule id, article), statements on
hold with their reason and the release, the overdue list (48 h, Lei 9.719 art. 2 §1), marking a
batch paid and the payslip PDFs (one worker, or the period's batch); the payroll CSV is
``pay_export``. Statements are computed by ``portgate pay --db``; these screens read and mark them
through ``central.pay``: only each shift's current statement is listed, summed, selected and
printed; a superseded version is history, shown under its current statement as such, never
summed (the evidence bundle keeps it too)."""

from __future__ import annotations

import datetime as dt
from urllib.parse import urlencode

from sqlalchemy import select
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from central.cli_args import FIRST_DAY, LAST_DAY
from central.production.read import gangs_of_period
from central.production.render import quantity_text
from central.pay.statements_store import mark_paid, overdue, release_holds, reverse_paid, superseded_among
from central.pay.payments import statements_port
from central.pay.integrity import altered
from central.pay.payslip import brl, build_slips, code
from central.pay.slip_codes import issue
from central.pay.statements_read import read_statements, superseded_versions
from central.registry.changes import audit
from central.registry.schema import workers
from central.web import payrun
from central.web.flagsmodel import FLAGS
from central.web.ports import per_port
from central.web.registry_scope import partial_view, regs_in_view
from central.web.render import bad_input, lang_of, page
from central.web.security import guarded
from central.web.service_texts import localize, role_label
from portgate.errors import BadInput

READERS = ("office", "auditor", "admin")
WRITERS = ("office",)


def period_param(request: Request, params=None) -> tuple[dt.date, dt.date]:
    """``(first, last)`` of the ``from``/``to`` query (default: the month so far), each in
    ``FIRST_DAY..LAST_DAY`` (2000-01-01..2100-12-31, as ``portgate pay``). ``BadInput`` otherwise
    (shown in pt-BR: "o dia 1900-01-01 está fora de 2000-01-01..2100-12-31")."""
    web = request.app.state.web
    today = web.now().astimezone(web.tz).date()
    q = request.query_params if params is None else params
    try:
        first = dt.date.fromisoformat(q["from"]) if q.get("from") else today.replace(day=1)
        last = dt.date.fromisoformat(q["to"]) if q.get("to") else today
    except ValueError as exc:
        raise BadInput("dates are YYYY-MM-DD", where="from/to") from exc
    for day, where in ((first, "from"), (last, "to")):  # the CLI's range (central.cli_args.work_day_arg)
        if not FIRST_DAY <= day <= LAST_DAY:
            raise BadInput(f"the day {day} is outside {FIRST_DAY}..{LAST_DAY}", where=where)
    if last < first:
        raise BadInput("the period ends before it starts", where="to")
    return first, last


async def _run_page(request: Request, *, status_code: int = 200, errors: dict[str, str] | None = None,
                    selected: set[str] | None = None, ref: str = "", params=None):
    """The pay page; after a refused mark-paid, the same page with the selection and reference
    kept and the error beside the button (``errors``: ``{"statement"|"ref": English}``).
    ``params``: the period and worker filter (a POST's form; default the query string)."""
    web = request.app.state.web
    q = request.query_params if params is None else params
    try:
        first, last = period_param(request, q)
    except BadInput as exc:
        return bad_input(request, str(exc))
    worker = str(q.get("worker") or "").strip() or None
    found = await run_in_threadpool(web.read, lambda c: read_statements(c, first, last, registration=worker))
    late = await run_in_threadpool(web.read, lambda c: overdue(c, web.now()))
    history = await run_in_threadpool(web.read, lambda c: superseded_versions(c, first, last, registration=worker))
    gangs = await run_in_threadpool(web.read, lambda c: gangs_of_period(c, first, last))
    ports = partial_view(request)
    if ports is not None:  # a statement follows its worker's port; a gang its members'
        regs = [s.registration for s in (*found, *late)] + [m["registration"] for g in gangs for m in g.members]
        mine = await run_in_threadpool(web.read, regs_in_view, regs, ports, web.ports)
        found, late = [s for s in found if s.registration in mine], [s for s in late if s.registration in mine]
        gangs = [g for g in gangs if any(m["registration"] in mine for m in g.members)]
    names = await run_in_threadpool(web.read, worker_names, sorted({s.registration for s in found}))
    held = [s for s in found if s.on_hold]
    total = sum((s.total for s in found), start=0)
    lang = lang_of(request)
    run = payrun.group(found, names)
    if selected is None:
        selected = {r.registration for r in run if r.payable} if request.query_params.get("all") else set()
    return page(request, "pay.html", status_code=status_code, first=first, last=last, worker=worker or "",
                found=found, held=held, late=late, total=total, brl=brl, gangs=gangs, run=run, names=names,
                history=history,  # looked up by the shifts of ``found`` only (the view's ports')
                qty=lambda v: quantity_text(v, lang), role=lambda v: role_label(lang, v),
                hold_parts=payrun.hold_parts, flag_codes=set(FLAGS), selected=selected, ref=ref,
                errors={k.lstrip("-"): localize(lang, v) for k, v in (errors or {}).items()},
                done=request.query_params.get("done", ""))


async def _view_statements(request: Request, found: list) -> list:
    """``found`` (statements) of the view's ports' workers (all of them on a view of every port)."""
    ports = partial_view(request)
    if ports is None:
        return found
    web = request.app.state.web
    mine = await run_in_threadpool(web.read, regs_in_view, [s.registration for s in found], ports, web.ports)
    return [s for s in found if s.registration in mine]


async def _foreign_ids(request: Request, ids: list[str]) -> list[str]:
    """The statement ids among ``ids`` not of the view's ports' workers (refused as unknown ids)."""
    if partial_view(request) is None or not ids:
        return []
    web = request.app.state.web
    seen = await run_in_threadpool(web.read, lambda c: read_statements(c, FIRST_DAY, LAST_DAY, ids=ids[:1000],
                                                                       current_only=False))
    mine = {s.statement_id for s in await _view_statements(request, seen)}
    return [i for i in ids if i not in mine and i in {s.statement_id for s in seen}]


async def _refused_ids(request: Request, ids: list[str]) -> str:
    """Why ``ids`` cannot be marked paid before the confirmation is even shown (``""``: they can be
    asked): another port's statements (``unknown: ...``), else superseded versions (``superseded:
    id (by newer id)``, ``mark_paid``'s words: a form posted before pay was re-run)."""
    foreign = await _foreign_ids(request, ids)
    if foreign:
        return f"unknown: {', '.join(foreign)}"
    stale = await run_in_threadpool(request.app.state.web.read, superseded_among, ids)
    return f"superseded: {', '.join(stale)}" if stale else ""


@guarded(*READERS)
@per_port  # the statements of the view's ports' workers
async def statements_page(request: Request):
    return await _run_page(request)


def worker_names(conn, regs: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for i in range(0, len(regs), 500):
        out |= dict(conn.execute(select(workers.c.registration, workers.c.name)
                                 .where(workers.c.registration.in_(regs[i:i + 500]))).all())
    return out


def _ids(form) -> list[str]:
    return [str(v) for v in form.getlist("statement") if str(v).strip()]


def _chosen(form, found) -> list[str]:
    """The statement ids a mark-paid form names: its ``statement`` ids, then the payable
    statements (not paid, not on hold) of each worker ticked (``pay_worker``), in the page's order."""
    ids = _ids(form)
    regs = {str(v) for v in form.getlist("pay_worker")}
    ids += [s.statement_id for s in found if s.registration in regs and not s.paid_at and not s.on_hold]
    return list(dict.fromkeys(ids))


@guarded(*WRITERS)
@per_port
async def mark_paid_post(request: Request):
    """Mark paid in two steps: the form's selection (workers ticked, or statement ids) answers a
    confirmation page (how many, total, date, reference); its "confirm" posts the ids back with
    ``confirm=yes`` and ``central.pay.statements_store.mark_paid`` marks them (all or nothing,
    audited). An empty selection or a refusal: the pay page again, selection and reference kept,
    the error beside the button (400)."""
    web = request.app.state.web
    form = await request.form()
    ref = str(form.get("ref") or "").strip()
    try:
        first, last = period_param(request, form)
    except BadInput as exc:
        return bad_input(request, str(exc))
    found = await _view_statements(request, await run_in_threadpool(web.read, lambda c: read_statements(
        c, first, last)))
    ids = _chosen(form, found)
    refused = await _refused_ids(request, ids)
    if refused:  # another port's statement (as an unknown one), or a superseded version
        return await _run_page(request, status_code=400, errors={"statement": refused}, ref=ref, params=form)
    selected = {str(v) for v in form.getlist("pay_worker")} | {s.registration for s in found if s.statement_id in ids}
    if not ids:
        return await _run_page(request, status_code=400, errors={"statement": "select at least one statement"},
                               selected=selected, ref=ref, params=form)
    if form.get("confirm") != "yes":
        chosen = [s for s in found if s.statement_id in set(ids)]
        known = {s.statement_id for s in chosen}
        names = await run_in_threadpool(web.read, worker_names, sorted({s.registration for s in chosen}))
        return page(request, "pay_confirm.html", first=first, last=last, ids=ids,
                    unknown=[i for i in ids if i not in known],
                    run=payrun.group(chosen, names), total=sum((s.total for s in chosen), start=0), brl=brl,
                    paid_at=web.now(), ref=ref, back=_back(form), count=len(ids),
                    workers=len({s.registration for s in chosen}))
    actor = f"web:{request.state.user.login}"
    try:
        now = web.now()  # the office's clock: paid now
        await run_in_threadpool(lambda: mark_paid(web.engine, ids, now, ref or None, now=now, actor=actor,
                                                  tz=web.tz))  # + audit row
    except BadInput as exc:
        error = {"ref": exc.reason} if exc.where == "ref" else {"statement": str(exc)}  # the date's error names it
        return await _run_page(request, status_code=400, errors=error, selected=selected, ref=ref, params=form)
    return RedirectResponse(f"/pay?{_back(form)}&done=paid-{len(ids)}", status_code=303)


@guarded(*WRITERS)
@per_port
async def reverse_form(request: Request):
    """The reversal of a mistaken mark-paid: the statement and a reason, then ``POST``."""
    return await _reverse_page(request, request.query_params.get("statement", ""), request.query_params)


async def _reverse_page(request: Request, sid: str, params, *, errors=None, reason: str = "", status_code: int = 200):
    web = request.app.state.web
    st = await _view_statements(request, await run_in_threadpool(web.read, lambda c: read_statements(
        c, FIRST_DAY, LAST_DAY, ids=[sid[:200]], current_only=False)))  # a paid older version too
    if not st:
        return bad_input(request, f"unknown: {sid[:200]}", status_code=404)
    names = await run_in_threadpool(web.read, worker_names, [st[0].registration])
    lang = lang_of(request)
    back_fields = {k: str(params.get(k) or "")[:64] for k in ("from", "to", "worker")}
    return page(request, "pay_reverse.html", status_code=status_code, s=st[0],
                name=names.get(st[0].registration, "—"),
                brl=brl, reason=reason, back=urlencode(back_fields), back_fields=back_fields,
                errors={k.lstrip("-"): localize(lang, v) for k, v in (errors or {}).items()})


@guarded(*WRITERS)
@per_port
async def reverse_post(request: Request):
    """Reverse a mistaken mark-paid (``central.pay.statements_store.reverse_paid``: audited,
    never an edit); refused (no reason, not paid): the same form with the reason kept."""
    web = request.app.state.web
    form = await request.form()
    sid = str(form.get("statement") or "")
    reason = str(form.get("reason") or "")[:1000]
    actor = f"web:{request.state.user.login}"
    if await _foreign_ids(request, [sid]):
        return bad_input(request, f"unknown: {sid[:200]}", status_code=404)
    try:
        await run_in_threadpool(lambda: reverse_paid(web.engine, [sid], reason, at=web.now(), actor=actor))
    except BadInput as exc:
        return await _reverse_page(request, sid, form, errors={exc.where or "reason": exc.reason}, reason=reason,
                                   status_code=400)
    return RedirectResponse(f"/pay?{_back(form)}&done=reversed-1", status_code=303)


@guarded(*WRITERS)
@per_port
async def release_post(request: Request):
    web = request.app.state.web
    form = await request.form()
    ids = list(dict.fromkeys(_ids(form)))  # a statement named twice is released once
    note = f"{request.state.user.login}: {str(form.get('note') or '').strip()}"
    actor = f"web:{request.state.user.login}"
    if not ids or not str(form.get("note") or "").strip():
        return bad_input(request, "select statements and write the note (who reviewed and why)")
    foreign = await _foreign_ids(request, ids)
    if foreign:
        return bad_input(request, f"statement: unknown: {', '.join(foreign)}")
    try:
        await run_in_threadpool(release_holds, web.engine, ids, web.now(), note[:255])
        await run_in_threadpool(web.with_session, lambda s: _audit(s, actor, "pay.release", ids, note, web.now()))
    except BadInput as exc:
        return bad_input(request, str(exc))
    return RedirectResponse(f"/pay?{_back(form)}&done=released-{len(ids)}", status_code=303)


def _back(form) -> str:
    return urlencode({k: str(form.get(k) or "") for k in ("from", "to", "worker")})


def _audit(session, actor, action, ids, detail, now) -> None:
    """An audit row about statements ``ids`` with their port (``central.pay.payments.statements_port``)."""
    audit(session, actor=actor, action=action, subject=f"{len(ids)} statement(s)",
          detail={"statements": ids, "detail": detail}, now=now, port=statements_port(session.connection(), ids))


def _known_worker(conn, registration: str) -> bool:
    if not registration or len(registration) > 64:
        return False
    return conn.execute(select(workers.c.registration).where(workers.c.registration == registration)).first() is not None


async def payslip_response(request: Request, registration: str | None) -> Response:
    web = request.app.state.web
    ports = partial_view(request)
    if registration is not None and not await run_in_threadpool(web.read, _known_worker, registration) or (
            registration is not None and ports is not None and not await run_in_threadpool(
                web.read, regs_in_view, [registration], ports, web.ports)):
        return bad_input(request, f"no worker with registration {registration[:64]!r}", status_code=404)
    if web.slip_key is None:
        return bad_input(request, "this server has no payslip key: the operator restarts it with "
                         "`portgate office serve --config central.toml` (key in [web] slip_key_file or "
                         "<keys_dir>/payslip.key)", status_code=503)
    try:
        first, last = period_param(request)
    except BadInput as exc:
        return bad_input(request, str(exc))

    header = web.slip_header(str(request.base_url))

    def work():
        with web.engine.begin() as conn:  # the slips' verification tokens are written with the read
            slips = build_slips(conn, first, last, registration=registration)
            if ports is not None:  # the view's ports' workers' slips only
                mine = regs_in_view(conn, [s.registration for s in slips], ports, web.ports)
                slips = [s for s in slips if s.registration in mine]
            edited = altered(conn, [st for slip in slips for st in slip.statements])
            if edited:  # not printed as proof of pay
                return None, edited
            codes = [(code(web.slip_key, s, header), s) for s in slips]
            tokens = issue(conn, [(c, s.registration, first, last, int(s.total * 100)) for c, s in codes],
                           header.as_json(), now=web.now())
        # rendered after the commit: no write lock held while the PDF is drawn
        from central.pay.payslip_pdf import render  # lazy: ReportLab and Pillow only when a PDF is drawn

        return render(slips, web.slip_key, tz=web.tz, date_from=first, date_to=last, header=header,
                      tokens=tokens)[0], ()

    data, edited = await run_in_threadpool(work)
    if edited:
        more = f" (+{len(edited) - 5})" if len(edited) > 5 else ""
        return bad_input(request, f"statement {', '.join(edited[:5])}{more} no longer matches its digest "
                         "(altered outside the ledger): payslip not printed, run `portgate pay close` "
                         "for these days", status_code=409)
    name = f"contracheque-{registration}-{first}-{last}.pdf" if registration else f"contracheques-{first}-{last}.pdf"
    return Response(data, media_type="application/pdf",
                    headers={"content-disposition": f'attachment; filename="{name}"'})


@guarded(*READERS)
@per_port
async def slip_pdf(request: Request):
    return await payslip_response(request, request.path_params["registration"])


@guarded(*READERS)
@per_port
async def batch_pdf(request: Request):
    return await payslip_response(request, None)


ROUTES = [
    Route("/pay", statements_page, methods=["GET"]),
    Route("/pay/mark-paid", mark_paid_post, methods=["POST"]),
    Route("/pay/reverse", reverse_form, methods=["GET"]),
    Route("/pay/reverse", reverse_post, methods=["POST"]),
    Route("/pay/release", release_post, methods=["POST"]),
    Route("/pay/slips.pdf", batch_pdf, methods=["GET"]),
    Route("/pay/slip/{registration}.pdf", slip_pdf, methods=["GET"]),
]
