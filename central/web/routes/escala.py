"""The escala screens: a day's requisitions (one by the form, or a requisitions.csv) dispatched
from the rotation (R1, R2: ``central.rotation.dispatch_file``) and published to the gates as
escala changes; the result per ship and period with shortfalls and why each worker passed over was
skipped; refusals (R3) and late substitutions; the escala-versus-presence report (R5) and the
per-operator and per-ship exports (R5, Lei 9.719 art. 7).

On an office of several ports (issue 37 item 4) every page here is ``per_port``: a requisition and
an escala row are of their gate's port (``central.rotation.ports``, as a ship call is), a user sees
and changes those of his view's ports only (``request.state.ports``), a requisition at another
port's gate is refused as one at an unknown gate, another port's row is answered as a missing one,
and the rotation fills each requisition from its port's workers."""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
import tempfile

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from sqlalchemy import select

from central import reports
from central.calls.service import calls_in_port, get_call
from central.cli_args import FIRST_DAY, LAST_DAY
from central.registry.schema import workers
from central.rotation import service
from central.rotation.dispatch_file import dispatch_file
from central.rotation.engine import ended_at, function_problem
from central.rotation.ports import RotationPorts
from central.rotation.requisitions import MAX_WORKERS
from central.web.forms import iso_date_text, query_day_text
from central.web.ports import of_gates, per_port
from central.web.render import bad_input, lang_of, page
from central.web.security import ALL_ROLES, guarded
from central.web.service_texts import localize
from central.web.uploads import safe_name, saved
from portgate import cells
from portgate.errors import BadInput, ConfigError
from portgate.records import parse_period

REQ_COLUMNS = ("date", "period", "operator", "ship", "ship_name", "voyage", "berth", "gate_id", "post",
               "function", "workers", "ref")
# the form's one requisition is dispatched as a one-row file of this name; its refusals name the
# place "requisition" (no line: the form has one), which the pt-BR page reads "requisição do formulário"
FORM_FILE = "requisition"


def day_param(request: Request, value: str | None = None) -> dt.date:
    web = request.app.state.web
    text = value if value is not None else query_day_text(request.query_params)  # date, or day
    if not text:
        return web.now().astimezone(web.tz).date()
    try:
        day = dt.date.fromisoformat(text)
    except ValueError as exc:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}/\d{4}", text):  # the shape is right: 2026-02-30
            raise BadInput(f"date {text!r} is not a valid date", where="date") from exc
        raise BadInput(f"date {text!r} is not a date (dd/mm/yyyy)", where="date") from exc  # as the form asks
    if not FIRST_DAY <= day <= LAST_DAY:  # 0001-01-01 has no period bounds in UTC
        raise BadInput(f"date {text!r} is outside {FIRST_DAY}..{LAST_DAY}", where="date")
    return day


def _day_bounds(day: dt.date, tz) -> tuple[dt.datetime, dt.datetime]:
    start = dt.datetime.combine(day, dt.time(), tz)
    return start.astimezone(dt.UTC), (start + dt.timedelta(days=1)).astimezone(dt.UTC)


def group_entries(entries, names: dict[str, str], ended: frozenset[int] = frozenset()) -> list[dict]:
    """The day's escala grouped by ship and period (period, then ship name, IMO): ``{ship,
    ship_name, period, gate_ids, operators, rows}``, each row ``{id, entry, operator, name, ended}``
    by post and function (``name`` the registry's, '' when the registration is not in it;
    ``ended``: its id is in ``ended``, a dispatch whose period is over, which is not changed any
    more: the page offers it no refusal or substitution). Pure."""
    groups: dict[tuple[str, str], dict] = {}
    for entry_id, operator, e in entries:
        g = groups.setdefault((e.period, e.ship), {"ship": e.ship, "ship_name": e.ship_name, "period": e.period,
                                                   "gate_ids": [], "operators": [], "rows": []})
        for key, value in (("gate_ids", e.gate_id), ("operators", operator)):
            if value not in g[key]:
                g[key].append(value)
        g["rows"].append({"id": entry_id, "entry": e, "operator": operator, "name": names.get(e.registration, ""),
                          "ended": entry_id in ended})
    for g in groups.values():
        g["rows"].sort(key=lambda r: (r["entry"].post, r["entry"].function, r["entry"].registration))
    return [groups[k] for k in sorted(groups, key=lambda k: (k[0], groups[k]["ship_name"], k[1]))]


def names_of(session, registrations) -> dict[str, str]:
    regs = sorted(set(registrations))
    out: dict[str, str] = {}
    for i in range(0, len(regs), 500):  # SQLite's bound-parameter limit
        out.update((r.registration, r.name) for r in session.execute(select(
            workers.c.registration, workers.c.name).where(workers.c.registration.in_(regs[i:i + 500]))))
    return out


def office_ports(request: Request) -> RotationPorts:
    """The office's ports and the request's view (``request.state.ports``) for the rotation."""
    web = request.app.state.web
    return RotationPorts(tuple(web.ports or ()), web.gate_registry, request.state.ports)


def _view(session, day, tz, now: dt.datetime, ports: RotationPorts | None = None) -> dict:
    """What the escala page shows for ``day``: the entries grouped by ship and period with the
    workers' names (each marked ``ended`` when its period is over at ``now``, the office's clock:
    ``engine.ended_at``, which ``service.refuse``/``substitute`` refuse), the escala-versus-presence
    report (names beside registrations, boarding times as aware datetimes for the port-time
    ``when``) and the ship calls in port that day (the requisition form's choice): of the gates of
    ``ports``' view only (``central.rotation.ports``; None: every gate)."""
    entries = service.day_entries(session, day, ports)
    ended = frozenset(i for i, _o, e in entries if ended_at(e, now, tz.key) is not None)
    rep = reports.presence(session, day, tz)
    # the page shows a boarding's time in the port's time (``when``), not the report's UTC text
    boarded = [m | {"at": dt.datetime.fromisoformat(m["at"])} for m in _of_view(session, ports,
                                                                                 rep.boarded_without_dispatch)]
    missing = _of_view(session, ports, rep.dispatched_not_boarded)
    names = names_of(session, [e.registration for _i, _o, e in entries]
                   + [m["registration"] for m in missing + boarded])
    return {"entries": entries, "groups": group_entries(entries, names, ended), "names": names,
            "presence": reports.PresenceReport(missing, boarded),
            "calls": _of_view(session, ports, calls_in_port(session, *_day_bounds(day, tz)))}


def _of_view(session, ports: RotationPorts | None, rows: list[dict]) -> list[dict]:
    """``rows`` (dicts with a ``gate_id``) of the gates of ``ports``' view (``central.web.ports.of_gates``)."""
    if ports is None:
        return rows
    return of_gates(session.connection(), ports.view, rows, ports.served, ports.registered)


async def _day_view(request: Request, day: dt.date) -> dict:
    """``_view`` of ``day`` for this request's ports."""
    web, ports = request.app.state.web, office_ports(request)
    return await run_in_threadpool(web.with_session, lambda s: _view(s, day, web.tz, web.now(), ports))


def _escala(request: Request, view: dict, day: dt.date, *, status_code: int = 200, **extra):
    """The escala page; ``extra``: ``result`` (a dispatch), ``errors`` (the requisition's refusal),
    ``req_values``/``req_errors`` (the requisition form as typed, errors by field), ``row_form``
    (a refused refusal/substitution: entry id, action, typed values, errors by field)."""
    ctx = {"result": None, "errors": [], "done": "", "by_form": False, "req_values": {}, "req_errors": {},
           "row_form": None} | extra
    return page(request, "escala.html", status_code=status_code, day=day, **view, **ctx)


@guarded(*ALL_ROLES)
@per_port  # the requisitions and rows of the view's ports' gates
async def escala_page(request: Request):
    web = request.app.state.web
    try:
        day = day_param(request)
    except BadInput as exc:
        return bad_input(request, str(exc))
    view = await _day_view(request, day)
    return _escala(request, view, day, done=request.query_params.get("done", ""))


#: the requisition form's fields the clerk types (the ship, its voyage, berth and gate come from
#: the chosen ship call)
TYPED = ("period", "operator", "post", "function", "workers")


def typed_problems(form) -> dict[str, str]:
    """The requisition form's typed fields checked one by one, as ``central.rotation.requisitions``
    reads a row (R1: a period ``HH-HH``, an operator, a post, 1 to ``MAX_WORKERS`` workers): the
    English reason by field, empty when all are right. Pure."""
    text = {k: " ".join(str(form.get(k) or "").split()) for k in TYPED}
    out = {}
    try:
        parse_period(text["period"])
    except BadInput as exc:
        out["period"] = exc.reason
    for name in ("operator", "post"):
        if not text[name]:
            out[name] = f"{name} is required"
    try:
        count = cells.whole(text["workers"], "workers")  # ASCII digits only: int() takes "٣"
    except BadInput:
        out["workers"] = f"workers {str(form.get('workers') or '')!r} is not a whole number"
    else:
        if not 1 <= count <= MAX_WORKERS:
            out["workers"] = f"workers must be between 1 and {MAX_WORKERS}, not {count}"
    return out


class FormRefused(Exception):
    """The requisition form refused field by field: ``errors`` (English reason by field)."""

    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))
        self.errors = errors


def _form_row(s, form, day: dt.date, tz, ports: RotationPorts | None = None) -> dict:
    """The form's one requisition as a requisitions.csv row: the typed fields, and the ship, name,
    voyage, berth and gate of the chosen ship call (``call``, an id of a call in port that day).
    Without ``call`` the columns are read as posted (a script's POST, as a CSV row). ``FormRefused``
    with every field's problem (``typed_problems``, an unknown function, a call that is unknown, not
    in port that day or has no gate; a call at a gate outside ``ports``' view as an unknown one)."""
    row = {k: str(form.get(k) or "").strip() for k in REQ_COLUMNS}
    row["date"] = row["date"] or day.isoformat()
    text = str(form.get("call") or "").strip()
    if "call" not in form:
        return row
    row["date"] = day.isoformat()  # the form's date, typed dd/mm/aaaa or ISO, as read
    function = " ".join(row["function"].split()).lower()  # as ``portgate.cells.term`` keeps it
    problem = function and function_problem(function, service.known_functions(s))
    errors = typed_problems(form) | ({"function": problem} if problem else {})
    try:
        row = _call_row(s, row, text, day, tz, ports)
    except BadInput as exc:
        errors["call"] = exc.reason
    if errors:
        raise FormRefused(errors)
    return row


def _call_row(s, row: dict, text: str, day: dt.date, tz, ports: RotationPorts | None = None) -> dict:
    """``row`` with the ship, name, voyage, berth and gate of call ``text``; ``BadInput`` (the
    call's problem) otherwise: a call of another port's gate is "no ship call N", as an unknown one."""
    if not text:
        raise BadInput("choose the ship in port", where="call")
    call_id = int(text) if cells.WHOLE.fullmatch(text) else None  # ASCII digits only: int() takes "٣"
    if call_id is None:
        raise BadInput(f"no ship call {text[:20]!r}", where="call")
    call = get_call(s, call_id)
    if not _of_view(s, ports, [call]):
        raise BadInput(f"no ship call {call_id}", where="call")
    start, end = _day_bounds(day, tz)
    if not (call["arrival"] < end and (call["departure"] is None or call["departure"] > start)):
        raise BadInput(f"ship {call['ship']} is not in port on {day}", where="call")
    if not call["gate_id"]:
        raise BadInput(f"the call of ship {call['ship']} names no gate: give it one on the ships page",
                       where="call")
    return row | {k: call[k] for k in ("ship", "ship_name", "voyage", "berth", "gate_id")}


@guarded("office")
@per_port  # a requisition at a gate of the view's ports only (``central.rotation.ports``)
async def dispatch_post(request: Request):
    web, ports = request.app.state.web, office_ports(request)
    form = await request.form()
    up = form.get("requisitions")
    by_form = not (isinstance(up, UploadFile) and up.filename)
    typed = {k: str(form.get(k) or "") for k in (*TYPED, "call", "date")} if by_form else {}
    try:
        day = day_param(request, iso_date_text(str(form.get("date") or "")))
    except BadInput as exc:
        if not (by_form and "call" in form):
            return bad_input(request, str(exc))
        day = day_param(request, "")  # the form again, on today's escala, with the typed date beside its field
        view = await _day_view(request, day)
        errors = typed_problems(form) | {"date": exc.reason}
        return _escala(request, view, day, status_code=400, by_form=True, req_values=typed,
                       req_errors={k: localize(lang_of(request), v) for k, v in errors.items()})
    actor = f"web:{request.state.user.login}"
    file_data = b"" if by_form else await up.read()

    def work(s):
        if by_form:  # the form: one requisition
            out = io.StringIO()
            w = csv.DictWriter(out, fieldnames=REQ_COLUMNS, lineterminator="\n")
            w.writeheader()
            w.writerow(_form_row(s, form, day, web.tz, ports))
            name, data = FORM_FILE, out.getvalue().encode()
        else:
            name, data = safe_name(up.filename, "requisitions.csv"), file_data
        with saved({"r": (name, data)}) as paths:
            run = dispatch_file(s, day, paths["r"], actor=actor, now=web.now(), ports=ports)
        return run, _view(s, day, web.tz, web.now(), ports)

    try:
        run, view = await run_in_threadpool(web.with_session, work)
    except (BadInput, ConfigError, UnicodeDecodeError, FormRefused) as exc:
        view = await _day_view(request, day)
        if isinstance(exc, FormRefused):
            return _escala(request, view, day, status_code=400, by_form=True, req_values=typed,
                           req_errors={k: localize(lang_of(request), v) for k, v in exc.errors.items()})
        if by_form and isinstance(exc, service.PastEscala):  # the form's period has ended
            return _escala(request, view, day, status_code=400, by_form=True, req_values=typed,
                           req_errors={"period": localize(lang_of(request), exc.reasons[0])})
        errors = re.sub(r"\A--date: ", "date: ", str(exc)).splitlines()  # the service's option: the page's field
        if by_form:  # "requisition:2: ..." -> "requisition: ...": the form has no lines
            errors = [e.replace(f"{FORM_FILE}:2: ", f"{FORM_FILE}: ", 1) for e in errors]
        return _escala(request, view, day, status_code=400, errors=errors, by_form=by_form, req_values=typed)
    return _escala(request, view, day, result=_result(run))


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


#: a refusal's or substitution's fields (the per-row menu's forms)
ROW_FIELDS = {"refuse": ("reason", "health_proof"), "substitute": ("reason", "registration")}


@guarded("office")
@per_port  # a row of the view's ports; another port's is answered as a missing one
async def entry_change(request: Request):
    """Refusal (R3) or late substitution of one escala entry; both published at once. A refused
    one shows the escala page again with that row's menu open, the typed values and the error
    beside its field (400)."""
    web = request.app.state.web
    form = await request.form()
    action = request.path_params["action"]
    if action not in ROW_FIELDS:
        return bad_input(request, "unknown action", status_code=404)
    typed = {k: str(form.get(k) or "") for k in ROW_FIELDS[action]}
    reason = typed["reason"].strip()
    actor, ports = f"web:{request.state.user.login}", office_ports(request)
    try:
        entry_id = int(request.path_params["entry_id"])
        day = day_param(request, str(form.get("date") or ""))
    except ValueError:
        return bad_input(request, "entry id is a number")
    except BadInput as exc:
        return bad_input(request, str(exc))
    try:
        if not reason:
            raise BadInput("give the reason", where="reason")
        if action == "refuse":
            proof = typed["health_proof"].strip() or None
            await run_in_threadpool(web.with_session, lambda s: service.refuse(
                s, entry_id, reason=reason, actor=actor, health_proof=proof, now=web.now(), ports=ports))
        else:
            reg = typed["registration"].strip() or None
            await run_in_threadpool(web.with_session, lambda s: service.substitute(
                s, entry_id, reason=reason, actor=actor, registration=reg, now=web.now(), ports=ports))
    except BadInput as exc:
        field = (exc.where or "").lstrip("-")
        field = field if field in ROW_FIELDS[action] else "entry"
        view = await _day_view(request, day)
        return _escala(request, view, day, status_code=400, row_form={
            "id": entry_id, "action": action, "values": typed,
            "errors": {field: localize(lang_of(request), exc.reason)}})
    return RedirectResponse(f"/escala?date={day.isoformat()}&done={action}", status_code=303)


@guarded(*ALL_ROLES)
@per_port  # the rows of the view's ports
async def export_csv(request: Request):
    """One export file (R5): ``by`` operator or ship, ``name`` the operator or IMO; the rows of the
    view's ports only (an operator or ship with none there: 404, as one with no escala)."""
    web = request.app.state.web
    try:
        day = day_param(request)
    except BadInput as exc:
        return bad_input(request, str(exc))
    by, name = request.path_params["by"], request.query_params.get("name", "")
    ports = office_ports(request)
    if by not in ("operator", "ship"):
        return bad_input(request, "export by operator or ship", status_code=404)

    def work(s):
        with tempfile.TemporaryDirectory() as tmp:
            for path in service.export(s, day, tmp, ports):
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
