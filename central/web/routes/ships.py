"""Ship calls (the form and the ``ships.csv`` import) and the coverage alarm list (G11)."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import RedirectResponse
from starlette.routing import Route

from central.calls import acks, coverage, service
from central.ledger import reader_alarms
from central.web.forms import instant_text
from central.web.ports import of_gates, per_port
from central.web.render import bad_input, lang_of, page
from central.web.security import ALL_ROLES, guarded
from central.web.service_texts import localize
from central.web.uploads import safe_name, saved
from portgate.errors import BadInput

WRITERS = ("office",)


@guarded(*ALL_ROLES)
@per_port  # a call by its gate's port; adding or changing calls stays with users of every port
async def ship_list(request: Request):
    return await _ships(request)


async def _ships(request: Request, *, status_code: int = 200, values: dict | None = None,
                 errors: dict | None = None, departure: dict | None = None, import_errors: list[str] | None = None):
    """The calls and, for the office, the add-call form; a refused form comes back with the typed
    ``values`` and ``errors`` by field (``status_code`` 400); a refused departure with
    ``departure`` (``{id, value, error}``: the call's row, the text as typed, the error beside it);
    a refused import with ``import_errors`` (every bad row, English, shown beside the file field)."""
    web = request.app.state.web
    ports = request.state.ports
    calls = await run_in_threadpool(web.with_session, lambda s: of_gates(s.connection(), ports, service.list_calls(s),
                                                                         web.ports, web.gate_registry))
    return page(request, "ships.html", status_code=status_code, calls=calls, values=values or {},
                errors=errors or {}, departure=departure, import_errors=import_errors or [])


@guarded(*WRITERS)
async def ship_add(request: Request):
    """Add (or update) a call from the form. Arrival and departure are typed as ``dd/mm/aaaa
    hh:mm`` or a ``datetime-local`` value in port time (``[web] tz``), or an ISO instant with
    offset (``central.web.forms.instant_text``). A refusal shows the same form (400) with every
    typed value and every bad field's error beside it (``service.read_call``); nothing is written."""
    form = await request.form()
    web = request.app.state.web
    actor = f"web:{request.state.user.login}"
    typed = {k: str(form.get(k) or "") for k in service.COLUMNS}
    row, unread = dict(typed), {}
    for k in ("arrival", "departure"):
        try:
            row[k] = instant_text(typed[k], web.tz, k)
        except BadInput as exc:
            unread[k] = exc.reason
    call, problems = service.read_call(row, unread)  # every bad field, each beside its own
    try:
        if call is not None:
            await run_in_threadpool(web.with_session,
                                    lambda s: service.save_call(s, call, actor=actor, now=web.now()))
    except BadInput as exc:
        problems = {exc.where if exc.where in service.COLUMNS else "ship": exc.reason}
    if problems:
        return await _ships(request, status_code=400, values=typed,
                            errors={k: localize(lang_of(request), reason) for k, reason in problems.items()})
    return RedirectResponse("/ships", status_code=303)


@guarded(*WRITERS)
async def ship_import(request: Request):
    """Import a ``ships.csv`` (``service.import_csv``: all or nothing). A refused file shows the
    ships page again (400) with every bad row beside the file field, one item each, named by the
    uploaded file's name and line (``ships-marco.csv:2: ...``); nothing is written."""
    form = await request.form()
    upload = form.get("file")
    if not (isinstance(upload, UploadFile) and upload.filename):
        return await _ships(request, status_code=400, import_errors=["choose a ships.csv file"])
    data = await upload.read()
    web = request.app.state.web
    actor = f"web:{request.state.user.login}"

    def work(s):
        with saved({"ships": (safe_name(upload.filename, "ships.csv"), data)}) as paths:  # named as uploaded
            return service.import_csv(s, paths["ships"], actor=actor, now=web.now())

    try:
        await run_in_threadpool(web.with_session, work)
    except (BadInput, UnicodeDecodeError) as exc:
        return await _ships(request, status_code=400, import_errors=str(exc).splitlines())
    return RedirectResponse("/ships", status_code=303)


@guarded(*WRITERS)
async def ship_departure(request: Request):
    """Record a call's departure, typed as the add-call form's (port time). A refusal shows the
    ships page again (400) with that row's field as typed and the error beside it; nothing is
    written. An id that is not a number is the bare error page (no row to show it beside)."""
    form = await request.form()
    web = request.app.state.web
    actor = f"web:{request.state.user.login}"
    typed = str(form.get("departure") or "")
    try:
        call_id = int(request.path_params["call_id"])
    except ValueError:
        return bad_input(request, "call id is a number")
    try:
        when = service.parse_time(instant_text(typed, web.tz, "departure"), "departure")
        await run_in_threadpool(web.with_session,
                                lambda s: service.set_departure(s, call_id, when, actor=actor, now=web.now()))
    except BadInput as exc:
        return await _ships(request, status_code=400, departure={
            "id": call_id, "value": typed, "error": localize(lang_of(request), exc.reason)})
    return RedirectResponse("/ships", status_code=303)


ACKERS = ("inspector", "office", "admin")


@guarded(*ALL_ROLES)
@per_port
async def alarm_list(request: Request):
    web = request.app.state.web
    ports = request.state.ports

    def load(s):
        rows = of_gates(s.connection(), ports, coverage.list_alarms(s), web.ports, web.gate_registry)
        reader_rows = of_gates(s.connection(), ports, reader_alarms.list_alarms(s), web.ports, web.gate_registry)
        done = {"coverage": acks.acks(s, "coverage", [r["id"] for r in rows]),
                "reader": acks.acks(s, "reader", [r["id"] for r in reader_rows])}
        return rows, reader_rows, done

    rows, reader_rows, done = await run_in_threadpool(web.with_session, load)
    return page(request, "alarms.html", rows=rows, reader_rows=reader_rows, acks=done,
                can_ack=request.state.user.role in ACKERS)


@guarded(*ACKERS)
async def alarm_acknowledge(request: Request):
    web = request.app.state.web
    form = await request.form()
    kind, actor = request.path_params["kind"], f"web:{request.state.user.login}"
    try:
        alarm_id = int(request.path_params["alarm_id"])
        await run_in_threadpool(web.with_session, lambda s: acks.acknowledge(
            s, kind, alarm_id, str(form.get("comment") or ""), actor=actor, now=web.now()))
    except ValueError:
        return bad_input(request, "alarm id is a number", status_code=404)
    except BadInput as exc:
        return bad_input(request, str(exc))
    return RedirectResponse(f"/alarms#{kind}-{alarm_id}", status_code=303)


ROUTES = [
    Route("/ships", ship_list, methods=["GET"]),
    Route("/ships", ship_add, methods=["POST"]),
    Route("/ships/import", ship_import, methods=["POST"]),
    Route("/ships/{call_id}/departure", ship_departure, methods=["POST"]),
    Route("/alarms", alarm_list, methods=["GET"]),
    Route("/alarms/{kind}/{alarm_id}/acknowledge", alarm_acknowledge, methods=["POST"]),
]
