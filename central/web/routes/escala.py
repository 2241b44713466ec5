"""The escala screens: a day's requisitions (one by the form, or a requisitions.csv) dispatched
from the rotation (R1, R2: ``central.rotation.dispatch_file``) and published to the gates as
escala changes; the result per ship and period with shortfalls and why each worker passed over was
skipped; refusals (R3) and late substitutions; the escala-versus-presence report (R5) and the
per-operator and per-ship exports (R5, Lei 9.719 art. 7)."""

from __future__ import annotations

import csv
import datetime as dt
import io
import tempfile

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from central import reports
from central.cli_args import FIRST_DAY, LAST_DAY
from central.rotation import service
from central.rotation.dispatch_file import dispatch_file
from central.web.render import bad_input, page
from central.web.security import ALL_ROLES, guarded
from central.web.uploads import safe_name, saved
from portgate.errors import BadInput, ConfigError

REQ_COLUMNS = ("date", "period", "operator", "ship", "ship_name", "voyage", "berth", "gate_id", "post",
               "function", "workers", "ref")
# the form's one requisition is dispatched as a one-row file of this name; its refusals name the
# place "requisition" (no line: the form has one), which the pt-BR page reads "requisição do formulário"
FORM_FILE = "requisition"


def _day(request: Request, value: str | None = None) -> dt.date:
    web = request.app.state.web
    text = value if value is not None else request.query_params.get("date", "")
    if not text:
        return web.now().astimezone(web.tz).date()
    try:
        day = dt.date.fromisoformat(text)
    except ValueError as exc:
        raise BadInput(f"date {text!r} is not YYYY-MM-DD", where="date") from exc
    if not FIRST_DAY <= day <= LAST_DAY:  # 0001-01-01 has no period bounds in UTC
        raise BadInput(f"date {text!r} is outside {FIRST_DAY}..{LAST_DAY}", where="date")
    return day


def _view(session, day, tz):
    entries = service.day_entries(session, day)
    rep = reports.presence(session, day, tz)
    # the page shows a boarding's time in the port's time (``when``), not the report's UTC text
    boarded = [m | {"at": dt.datetime.fromisoformat(m["at"])} for m in rep.boarded_without_dispatch]
    return entries, reports.PresenceReport(rep.dispatched_not_boarded, boarded)


@guarded(*ALL_ROLES)
async def escala_page(request: Request, result=None, status_code: int = 200):
    web = request.app.state.web
    try:
        day = _day(request)
    except BadInput as exc:
        return bad_input(request, str(exc))
    entries, presence = await run_in_threadpool(web.with_session, lambda s: _view(s, day, web.tz))
    return page(request, "escala.html", status_code=status_code, day=day, entries=entries,
                presence=presence, result=result, errors=[], done=request.query_params.get("done", ""))


@guarded("office")
async def dispatch_post(request: Request):
    web = request.app.state.web
    form = await request.form()
    try:
        day = _day(request, str(form.get("date") or ""))
    except BadInput as exc:
        return bad_input(request, str(exc))
    up = form.get("requisitions")
    by_form = not (isinstance(up, UploadFile) and up.filename)
    if not by_form:
        name, data = safe_name(up.filename, "requisitions.csv"), await up.read()
    else:  # the form: one requisition
        row = {k: str(form.get(k) or "").strip() for k in REQ_COLUMNS}
        row["date"] = row["date"] or day.isoformat()
        out = io.StringIO()
        w = csv.DictWriter(out, fieldnames=REQ_COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerow(row)
        name, data = FORM_FILE, out.getvalue().encode()
    actor = f"web:{request.state.user.login}"

    def work(s):
        with saved({"r": (name, data)}) as paths:
            run = dispatch_file(s, day, paths["r"], actor=actor, now=web.now())
        return run, _view(s, day, web.tz)

    try:
        run, (entries, presence) = await run_in_threadpool(web.with_session, work)
    except (BadInput, ConfigError, UnicodeDecodeError) as exc:
        entries, presence = await run_in_threadpool(web.with_session, lambda s: _view(s, day, web.tz))
        errors = str(exc).splitlines()
        if by_form:  # "requisition:2: ..." -> "requisition: ...": the form has no lines
            errors = [e.replace(f"{FORM_FILE}:2: ", f"{FORM_FILE}: ", 1) for e in errors]
        return page(request, "escala.html", status_code=400, day=day, entries=entries, presence=presence,
                    result=None, errors=errors, done="", by_form=by_form)
    return page(request, "escala.html", day=day, entries=entries, presence=presence, result=_result(run),
                errors=[], done="")


def _result(run) -> dict:
    """The dispatch result grouped per ship and period: filled, shortfalls, skips with reasons."""
    res = run.done.result
    by_ref = {r.ref: r for r in run.requisitions}
    groups: dict[tuple[str, str], dict] = {}
    for r in run.requisitions:
        groups.setdefault((r.ship, r.period), {"ship": r.ship, "ship_name": r.ship_name, "period": r.period,
                                               "requested": 0, "filled": [], "short": 0, "skips": []})
        groups[(r.ship, r.period)]["requested"] += r.workers
    for a in res.assignments:
        groups[(a.requisition.ship, a.requisition.period)]["filled"].append(a.entry)
    for s in res.shortfalls:
        groups[(s.requisition.ship, s.requisition.period)]["short"] += s.missing
    for k in res.skips:
        req = by_ref.get(k.requisition_ref)
        if req is not None:
            groups[(req.ship, req.period)]["skips"].append((k.registration, k.reason.value))
    ineligible = sorted((reg, tuple(p.value for p in probs)) for reg, probs in res.ineligible.items())
    return {"groups": [groups[k] for k in sorted(groups, key=lambda k: (k[1], k[0]))], "ineligible": ineligible,
            "dispatched": len(run.done.entry_ids), "flags": run.flags}


@guarded("office")
async def entry_change(request: Request):
    """Refusal (R3) or late substitution of one escala entry; both published at once."""
    web = request.app.state.web
    form = await request.form()
    action = request.path_params["action"]
    if action not in ("refuse", "substitute"):
        return bad_input(request, "unknown action", status_code=404)
    reason = str(form.get("reason") or "").strip()
    actor = f"web:{request.state.user.login}"
    try:
        entry_id = int(request.path_params["entry_id"])
        day = _day(request, str(form.get("date") or ""))
        if not reason:
            raise BadInput("give the reason", where="reason")
        if action == "refuse":
            proof = str(form.get("health_proof") or "").strip() or None
            await run_in_threadpool(web.with_session, lambda s: service.refuse(
                s, entry_id, reason=reason, actor=actor, health_proof=proof, now=web.now()))
        else:
            reg = str(form.get("registration") or "").strip() or None
            await run_in_threadpool(web.with_session, lambda s: service.substitute(
                s, entry_id, reason=reason, actor=actor, registration=reg, now=web.now()))
    except ValueError:
        return bad_input(request, "entry id is a number")
    except BadInput as exc:
        return bad_input(request, str(exc))
    return RedirectResponse(f"/escala?date={day.isoformat()}&done={action}", status_code=303)


@guarded(*ALL_ROLES)
async def export_csv(request: Request):
    """One export file (R5): ``by`` operator or ship, ``name`` the operator or IMO."""
    web = request.app.state.web
    try:
        day = _day(request)
    except BadInput as exc:
        return bad_input(request, str(exc))
    by, name = request.path_params["by"], request.query_params.get("name", "")
    if by not in ("operator", "ship"):
        return bad_input(request, "export by operator or ship", status_code=404)

    def work(s):
        with tempfile.TemporaryDirectory() as tmp:
            for path in service.export(s, day, tmp):
                safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in name)
                if path.name == f"escala-{day.isoformat()}-{by}-{safe}.csv":
                    return path.name, path.read_bytes()
        return None

    found = await run_in_threadpool(web.with_session, work)
    if found is None:
        return bad_input(request, f"no escala for {by} {name!r} on {day}", status_code=404)
    return Response(found[1], media_type="text/csv; charset=utf-8",
                    headers={"content-disposition": f'attachment; filename="{found[0]}"'})


ROUTES = [
    Route("/escala", escala_page, methods=["GET"]),
    Route("/escala/dispatch", dispatch_post, methods=["POST"]),
    Route("/escala/entry/{entry_id}/{action:str}", entry_change, methods=["POST"]),
    Route("/escala/export/{by:str}", export_csv, methods=["GET"]),
]
