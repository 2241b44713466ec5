"""The inspectors' flag queue and the taps around one flagged event; an inspector reviews a flag:
acknowledge it with a comment (seen), open a case from it in one step, or close it as no
infraction (handled) — ``central.registry.flag_reviews``, ``central.registry.cases``."""

from __future__ import annotations

import io

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from central.registry import cases as case_svc
from central.registry import flag_reviews
from central.web import flagsmodel
from central.web.render import bad_input, lang_of, page
from central.web.ports import per_port
from central.web.security import guarded
from central.web.service_texts import flag_label
from portgate import csvout, l10n
from portgate.errors import BadInput
from portgate.timeutil import as_utc

READERS = ("inspector", "auditor", "admin", "office")
WRITERS = ("inspector",)
CSV_ROWS = 10_000
#: ``/flags.csv``'s header row in the page's language (as the other exports: ``routes/exports.py``)
CSV_HEADERS = {
    "pt": ("instante_utc", "portaló", "seq", "evento", "ocorrências", "matrícula", "matrícula_do_crachá", "navio",
           "decisão", "mensagem", "estado", "desfecho", "processo", "revisto_por", "revisto_utc", "comentário"),
    "en": ("occurred_at", "gate_id", "seq", "event_id", "flags", "registration", "badge_registration", "ship",
           "decision", "message", "state", "outcome", "case_id", "reviewed_by", "reviewed_at", "comment"),
}


@guarded(*READERS)
@per_port
async def flag_list(request: Request):
    web = request.app.state.web
    try:
        f = flagsmodel.parse_filters(request.query_params, request.state.ports)
    except BadInput as exc:
        return bad_input(request, str(exc))

    def load(conn):
        return flagsmodel.flag_rows(conn, f, web.tz), flagsmodel.state_counts(conn, f, web.tz)

    rows, counts = await run_in_threadpool(web.read, load)
    return page(request, "flags.html", rows=rows, f=f, flags=flagsmodel.FLAGS, counts=counts,
                states=flag_reviews.STATES, query=f.query())


@guarded(*READERS)
@per_port
async def flag_csv(request: Request):
    """The queue as CSV with the page's filters (at most ``CSV_ROWS`` rows, newest first): headers
    in the page's language (``CSV_HEADERS``), times in UTC ISO 8601, flag codes as codes, the state
    and the latest review."""
    web = request.app.state.web
    try:
        f = flagsmodel.parse_filters(request.query_params, request.state.ports)
    except BadInput as exc:
        return bad_input(request, str(exc))
    rows = await run_in_threadpool(web.read, flagsmodel.flag_rows, f, web.tz, CSV_ROWS)
    out = io.StringIO()
    w = csvout.writer(out)  # a typed comment or message never runs as a formula
    lang = "en" if lang_of(request) == "en" else "pt"
    w.writerow(CSV_HEADERS[lang])
    for r in rows:
        v = r.review
        w.writerow((
            r.occurred_at.isoformat(), r.gate_id, r.seq, r.event_id, " ".join(r.flags), r.registration,
            r.badge_registration, r.ship, r.decision, r.message, v.state, v.outcome, v.case_id, v.actor,
            v.at.isoformat() if v.at else "", v.comment))
    name = "flags" if lang == "en" else "ocorrencias"
    return Response(out.getvalue(), media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{name}.csv"'})


@guarded(*READERS)
@per_port
async def flag_detail(request: Request):
    web = request.app.state.web
    event_id = request.path_params["event_id"]

    def load(conn):
        flagsmodel.event_row(conn, event_id, request.state.ports)  # "no event" if of another port
        around = flagsmodel.taps_around(conn, event_id)
        return around, flag_reviews.states(conn, [event_id])[event_id]

    try:
        around, review = await run_in_threadpool(web.read, load)
    except BadInput as exc:
        return bad_input(request, str(exc), status_code=404)
    this = next(r for r in around if r["this"])
    return page(request, "flag.html", around=around, this=this, flags=this["flags"], review=review)


async def _review(request: Request, fn) -> Response:
    web = request.app.state.web
    form = await request.form()
    event_id, comment = request.path_params["event_id"], str(form.get("comment") or "")
    actor = f"web:{request.state.user.login}"

    def work(s):
        flagsmodel.event_row(s.connection(), event_id, request.state.ports)  # "no event" if of another port
        fn(s, event_id, comment, actor=actor, now=web.now())

    try:
        await run_in_threadpool(web.with_session, work)
    except BadInput as exc:
        return bad_input(request, str(exc))
    back = str(form.get("back") or "")
    return RedirectResponse(back if back.startswith("/flags") else f"/flags/{event_id}", status_code=303)


@guarded(*WRITERS)
@per_port
async def flag_acknowledge(request: Request):
    return await _review(request, flag_reviews.acknowledge)


@guarded(*WRITERS)
@per_port
async def flag_close(request: Request):
    return await _review(request, flag_reviews.close_no_infraction)


@guarded(*WRITERS)
@per_port  # a flag of the view's ports; the case is of its event's port (``cases.port``)
async def flag_open_case(request: Request):
    """One step from a flag to a case (R7): the charge is the flag's name, the article the flag's
    (``cases.FLAG_ARTICLES``), the evidence the flagged read (gate, sequence, port time, card); the
    inspector completes the case on its page. Another port's flag is "no event", as an unknown one."""
    web = request.app.state.web
    event_id, lang = request.path_params["event_id"], lang_of(request)
    actor = f"web:{request.state.user.login}"

    def work(s):
        flagsmodel.event_row(s.connection(), event_id, request.state.ports)  # "no event" if of another port
        [this] = [r for r in flagsmodel.taps_around(s.connection(), event_id, 0) if r["this"]]
        if not this["flags"]:
            raise BadInput(f"event {event_id} carries no flag", where="event")
        flag = next((x for x in this["flags"] if x in case_svc.FLAG_ARTICLES), this["flags"][0])
        at = l10n.at(as_utc(this["occurred_at"]), lang, web.tz)
        words = "flagged read" if lang == "en" else "leitura sinalizada"
        evidence = (f"{words}: {this['gate_id']} seq {this['seq']}, {at}, {this['type']} "
                    f"{this['decision'] or ''}".rstrip() + f", {this['uid'] or '—'}: "
                    + ", ".join(flag_label(lang, x) for x in this["flags"]))
        return case_svc.open_from_event(s, event_id, flag=flag, charge=flag_label(lang, flag), article=None,
                                        evidence=evidence, actor=actor, now=web.now())

    try:
        case_id = await run_in_threadpool(web.with_session, work)
    except BadInput as exc:
        return bad_input(request, str(exc))
    return RedirectResponse(f"/cases/{case_id}", status_code=303)


ROUTES = [
    Route("/flags", flag_list, methods=["GET"]),
    Route("/flags.csv", flag_csv, methods=["GET"]),
    Route("/flags/{event_id}", flag_detail, methods=["GET"]),
    Route("/flags/{event_id}/acknowledge", flag_acknowledge, methods=["POST"]),
    Route("/flags/{event_id}/close", flag_close, methods=["POST"]),
    Route("/flags/{event_id}/case", flag_open_case, methods=["POST"]),
]
