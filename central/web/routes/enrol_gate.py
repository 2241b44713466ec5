"""Enrol mode on a chosen gate, from a worker's page (issue 34): the clerk starts it
(``POST /workers/{registration}/enrol``: gate and card kind), the gate gets its ``EnrolCommand``
at once (``central.web.gate_commands``), the panel (``GET .../enrol``, polled by htmx every 2 s
while the session is open) offers the card the gate read, the clerk binds it
(``POST .../enrol/{id}/confirm``) or cancels (``POST .../enrol/{id}/cancel``, the gate told too).
The session and its audit rows are ``central.registry.gate_enrol``; the ledger side is
``central.web.enrolmodel``. A refused start is the worker's page with the error beside the gate."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse
from starlette.routing import Route

from central.registry import gate_enrol
from central.registry.enrol import FormRefused
from central.web import enrolmodel
from central.web.registry_scope import of_worker, offered_gates
from central.web.render import bad_input, lang_of, page
from central.web.routes.registry import WRITERS, worker_response
from central.web.security import guarded
from central.web.service_texts import card_word
from portgate.errors import BadInput, BrokerUnavailable, ConfigError
from wire.downlink import EnrolCommand


MAX_SESSION = 2**31 - 1  # enrol_sessions.id is an Integer (32-bit on PostgreSQL)


def _session_id(request: Request) -> int:
    """The session id from the URL; ``BadInput`` (no such session) outside 1..MAX_SESSION."""
    sid = request.path_params["session"]
    if not 1 <= sid <= MAX_SESSION:
        raise BadInput(f"enrol session {sid} does not exist", where="session")
    return sid


def not_offered(gate_id: str, registration: str) -> str:
    """The refusal of a gate the worker page does not offer: the same for another port's gate and
    for no gate at all (a port's clerk learns nothing of another port's gates)."""
    return f"gate {gate_id} is not a gate of {registration}'s port: choose one of the list"


def _refused(exc: BadInput) -> dict[str, str]:
    if isinstance(exc, FormRefused):
        return exc.fields
    return {exc.where if exc.where in ("gate_id", "kind") else "session": exc.reason}


@guarded(*WRITERS)
@of_worker
async def panel(request: Request):
    """The enrol panel alone (htmx's poll): the gate's read offered as soon as it arrives."""
    web = request.app.state.web
    reg = request.path_params["registration"]
    try:
        view = await run_in_threadpool(web.with_session, lambda s: enrolmodel.refresh(
            s, reg, web.now(), offered_gates(request, s, reg)))
    except BadInput as exc:
        return bad_input(request, str(exc), status_code=404)
    lang = lang_of(request)
    return page(request, "_enrol_panel.html", enrol=view, w=_Who(reg), errors={}, form="", typed={},
                card_word=lambda v: card_word(lang, v))


class _Who:
    def __init__(self, registration: str) -> None:
        self.registration = registration


@guarded(*WRITERS)
@of_worker
async def start(request: Request):
    """Start enrol mode at the chosen gate: the session (refused for an offline gate, a gate
    already enrolling, a worker with an open session), then the gate's ``EnrolCommand``; a
    command the broker did not take ends the session at once (cancelled, audited) and says so.
    A gate the worker page does not offer (another port's, ``registry_scope.gate_offered``) is
    refused first, online or not: 403, no session, nothing sent."""
    web = request.app.state.web
    reg = request.path_params["registration"]
    form = await request.form()
    typed = {k: str(form.get(k) or "")[:64] for k in ("gate_id", "kind")}
    actor = f"web:{request.state.user.login}"
    if web.send_command is None:
        return await worker_response(request, reg, errors={"gate_id": "no MQTT link to the gates is configured"},
                                     values=typed, form="enrol", status_code=400)

    def work(s):
        offered = offered_gates(request, s, reg)
        if offered is not None and not offered(typed["gate_id"]):
            return None
        online = enrolmodel.gate_online(s, typed["gate_id"])
        return gate_enrol.start(s, reg, typed["gate_id"], typed["kind"], gate_online=online, actor=actor,
                                now=web.now(), timeout_s=web.settings.enrol_timeout_s)

    try:
        found = await run_in_threadpool(web.with_session, work)
    except BadInput as exc:
        return await worker_response(request, reg, errors=_refused(exc), values=typed, form="enrol", status_code=400)
    if found is None:
        return await worker_response(request, reg, errors={"gate_id": not_offered(typed["gate_id"], reg)},
                                     values=typed, form="enrol", status_code=403)
    command = EnrolCommand(session=found.wire_id, action="start", registration=reg, until=found.until,
                           timeout_s=web.settings.enrol_timeout_s, at=web.now())
    try:
        await run_in_threadpool(web.send_command, found.gate_id, command)
    except (BrokerUnavailable, ConfigError) as exc:
        await run_in_threadpool(web.with_session, lambda s: gate_enrol.cancel(
            s, reg, found.id, actor="system", now=web.now()))
        return await worker_response(request, reg, errors={"gate_id": f"gate {found.gate_id} not told: {exc}"},
                                     values=typed, form="enrol", status_code=503)
    return RedirectResponse(f"/workers/{reg}#enrol", status_code=303)


@guarded(*WRITERS)
@of_worker
async def cancel(request: Request):
    """Cancel the open session; the gate is told (if that fails, its deadline ends it)."""
    web = request.app.state.web
    reg = request.path_params["registration"]
    actor = f"web:{request.state.user.login}"
    try:
        sid = _session_id(request)
        found = await run_in_threadpool(web.with_session, lambda s: gate_enrol.cancel(
            s, reg, sid, actor=actor, now=web.now()))
    except BadInput as exc:
        return await worker_response(request, reg, errors=_refused(exc), form="enrol", status_code=400)
    if web.send_command is not None:
        try:
            await run_in_threadpool(web.send_command, found.gate_id,
                                    EnrolCommand(session=found.wire_id, action="cancel", at=web.now()))
        except (BrokerUnavailable, ConfigError):
            pass  # the gate's own deadline ends its enrol mode
    return RedirectResponse(f"/workers/{reg}#enrol", status_code=303)


@guarded(*WRITERS)
@of_worker
async def confirm(request: Request):
    """Bind the card the gate read to the worker (``gate_enrol.confirm``: ``issue_card``)."""
    web = request.app.state.web
    reg = request.path_params["registration"]
    actor = f"web:{request.state.user.login}"
    try:
        sid = _session_id(request)
        card = await run_in_threadpool(web.with_session, lambda s: gate_enrol.confirm(
            s, reg, sid, actor=actor, now=web.now()))
    except BadInput as exc:
        return await worker_response(request, reg, errors=_refused(exc), form="enrol", status_code=400)
    return RedirectResponse(f"/workers/{reg}?card=issued-{card.uid}", status_code=303)


ROUTES = [
    Route("/workers/{registration}/enrol", panel, methods=["GET"]),
    Route("/workers/{registration}/enrol", start, methods=["POST"]),
    Route("/workers/{registration}/enrol/{session:int}/cancel", cancel, methods=["POST"]),
    Route("/workers/{registration}/enrol/{session:int}/confirm", confirm, methods=["POST"]),
]
