"""The registry screens: the worker list (filters, keyset paging; a registration, name or card UID in
any UID form), a worker's page, the add-worker form (a workers.csv row's validation and the
admission evidence, R9), the edit form (validated as a workers.csv row, audited), the card actions
(report lost, replace, enrol a new card typed in any UID form) and the CSV upload of
workers/cards/ships, all or nothing (every bad row named ``file:line``, nothing written). A refused
form is shown again with every typed value and each error beside its field."""

from __future__ import annotations

import datetime as dt
import re
from urllib.parse import urlencode

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse
from starlette.routing import Route

from central.registry import enrol
from central.registry.admission import STEVEDORES, WATCHMEN
from central.registry.edit import EDITABLE, edit_worker
from central.registry.enrol import (
    ADD_FIELDS,
    ADMISSION_FIELDS,
    FormRefused,
    add_worker,
    categories,
    issue_card,
)
from central.registry.store import replace_card, transition_card
from central.registry.worker_ports import in_ports, port_of, set_port, worker_port as worker_port_of
from central.registry.schema import workers as workers_table
from central.web import enrolmodel, registrymodel
from central.web.ports import per_port
from central.web.registry_scope import default_port, new_worker_port, of_worker, offered_gates
from central.web.routes.upload import upload, upload_form
from central.web.forms import br_date_text, iso_date_text
from central.web.render import bad_input, lang_of, page
from central.web.security import ALL_ROLES, guarded
from central.web.service_texts import card_detail, card_word, localize, penalty_kind, penalty_reason
from portgate.docbr import masked_cpf, masked_pis
from portgate.errors import BadInput
from portgate.uid import UidFormat, enrol_uid

WRITERS = ("office",)
STATUSES = ("active", "suspended", "cancelled")
DATE_FIELDS = ("suspended_from", "suspended_until", "health_exam_date")


def _conditions() -> list[tuple[str, str, str]]:
    """The admission conditions the add form asks for (R9), each once: ``(name, label, articles)``."""
    out: dict[str, tuple[str, list[str]]] = {}
    for rules in (WATCHMEN, STEVEDORES):
        for c in rules.conditions:
            out.setdefault(c.name, (c.label, []))[1].append(c.article)
    return [(name, label, "; ".join(arts)) for name, (label, arts) in out.items()]


CONDITIONS = _conditions()


def _list_query(request: Request) -> registrymodel.ListQuery:
    """The list's filters from the query string; ``BadInput`` naming ``expiring`` for a number of
    days that is not a whole number in 0..``MAX_EXPIRING_DAYS``."""
    q = request.query_params
    raw = (q.get("expiring") or "").strip()
    days = None
    if raw:
        if not raw.isdigit() or int(raw) > registrymodel.MAX_EXPIRING_DAYS:
            raise BadInput(f"expiring {raw[:20]!r} is outside 0..{registrymodel.MAX_EXPIRING_DAYS}",
                           where="expiring")
        days = int(raw)
    status = (q.get("status") or "").strip()
    if status and status not in STATUSES:
        raise BadInput(f"status {status[:20]!r} is not one of {', '.join(STATUSES)}", where="status")
    return registrymodel.ListQuery(category=(q.get("category") or "").strip()[:64], status=status,
                                   expiring_days=days, q=(q.get("q") or "").strip()[:128],
                                   after=q.get("after", "")[:64], before=q.get("before", "")[:64])


@guarded(*ALL_ROLES)
@per_port  # the workers of the view's ports (``workers.port``)
async def search(request: Request):
    """The worker list: filters (category, status, G3 exam validity ending within N days, a
    registration, name or card UID), 50 a page, keyset paging (``registrymodel.worker_list``);
    on an office of several ports, the workers of the ports the user's view shows."""
    web = request.app.state.web
    try:
        query = _list_query(request)
    except BadInput as exc:
        return bad_input(request, str(exc))
    today = _today(web)
    scope = None if request.state.ports is None else in_ports(workers_table.c.port, request.state.ports, web.ports)

    def work(s):
        found = registrymodel.worker_list(s, query, today=today, scope=scope)
        why = registrymodel.matched_by(s, query.q, [r.worker for r in found.rows]) if query.q else {}
        return found, categories(s), why

    found, cats, why = await run_in_threadpool(web.with_session, work)
    keep = {k: v for k, v in (("q", query.q), ("category", query.category), ("status", query.status),
                              ("expiring", "" if query.expiring_days is None else str(query.expiring_days))) if v}
    return page(request, "workers.html", q=query.q, query=query, found=found, categories=cats,
                statuses=STATUSES, why=why, keep=urlencode(keep), br_date=br_date_text,
                added=request.query_params.get("added"))


def _today(web) -> dt.date:
    return web.now().astimezone(web.tz).date()


@guarded(*ALL_ROLES)
@of_worker
async def worker(request: Request):
    return await worker_response(request, request.path_params["registration"])


async def worker_response(request: Request, reg: str, *, errors: dict[str, str] | None = None,
                          values: dict[str, str] | None = None, form: str = "",
                          status_code: int = 200):
    """The worker's page; after a refused form (``form``: ``edit``, ``photo``, ``card-new``,
    ``replace-<uid>``) the same page with the typed ``values`` and each of ``errors`` (English:
    worded here in the page's language) beside its field, answered ``status_code``."""
    web = request.app.state.web
    try:
        wp = await run_in_threadpool(web.with_session, lambda s: registrymodel.worker_page(
            s, reg, today=_today(web), now=web.now()))
    except BadInput as exc:
        return bad_input(request, str(exc), status_code=404)
    photo = web.photo_exists(reg)
    # an office of several ports: the worker's port (``workers.port``; none stored: the home port)
    worker_port = port_of((await run_in_threadpool(web.read, worker_port_of, reg))[1], web.ports) \
        if len(web.ports) > 1 else None
    enrol = None
    if getattr(request.state.user, "role", None) in WRITERS:  # issue 34: enrol mode on a chosen gate
        enrol = await run_in_threadpool(web.with_session, lambda s: enrolmodel.refresh(
            s, reg, web.now(), offered_gates(request, s, reg)))
    sent = request.query_params.get("photo", "")
    lang = lang_of(request)
    w = wp.worker
    shown = {k: _text(getattr(w, k, None)) for k in EDITABLE} | {
        "cpf": masked_cpf(wp.ids.cpf), "pis": masked_pis(wp.ids.pis)}
    for k in DATE_FIELDS:
        shown[k] = br_date_text(getattr(w, k))
    if form == "edit" and values:
        shown |= values
    card_done = request.query_params.get("card", "")
    return page(request, "worker.html", status_code=status_code, wp=wp, w=w,
                saved=request.query_params.get("saved"), added=request.query_params.get("added"),
                card_done=card_done if re.fullmatch(r"(lost|replaced|issued)-[0-9A-F]{6,20}", card_done) else "",
                card_word=lambda v: card_word(lang, v), card_detail=lambda v: card_detail(lang, v),
                penalty_kind=lambda v: penalty_kind(lang, v), penalty_reason=lambda v: penalty_reason(lang, v),
                photo=photo, photo_sent=sent if re.fullmatch(r"sent-\d{1,20}|unsent|off", sent) else "",
                form=form, errors={k: localize(lang, v) for k, v in (errors or {}).items()},
                values=shown, typed=values or {}, uid_forms=[f.value for f in UidFormat],
                summary_ids=_summary_ids(form), enrol=enrol, worker_port=worker_port)


#: The edit form's input ids (kept from before the form showed its errors beside the fields).
EDIT_IDS = {"name": "e-name", "category": "e-category", "status": "e-status", "suspended_from": "e-sfrom",
            "suspended_until": "e-suntil", "health_exam_date": "e-exam", "booklet_revalidated_year": "e-booklet",
            "rotation_number": "e-rot", "cpf": "e-cpf", "pis": "e-pis"}


def _summary_ids(form: str) -> dict[str, str]:
    """The id of the input each error of ``form`` links to from the refusal's summary."""
    if form == "edit":
        return EDIT_IDS
    if form == "photo":
        return {"photo": "p-file"}
    if form == "card-new":
        return {"uid": "n-uid", "kind": "n-kind"}
    if form.startswith("replace-"):
        return {"new_uid": f"r-{form[8:]}-uid"}
    if form.startswith("lost-"):
        return {form: "cards"}
    if form == "enrol":
        return {"gate_id": "en-gate_id", "kind": "en-kind", "session": "enrol"}
    return {}


def _text(value) -> str:
    if value is None:
        return ""
    return value.value if hasattr(value, "value") else str(value)


def _dates_read(row: dict[str, str], fields) -> dict[str, str]:
    """Turn the typed dd/mm/aaaa dates of ``row`` into ISO text (in place); ``{field: reason}``
    for a typed date that is neither dd/mm/aaaa nor ISO."""
    errors = {}
    for k in fields:
        typed = row.get(k, "")
        iso = iso_date_text(typed)
        if iso:
            try:
                dt.date.fromisoformat(iso)
            except ValueError:
                errors[k] = f"{k} {typed[:40]!r} is not a day written dd/mm/aaaa"
                continue
        row[k] = iso
    return errors


def _field_errors(exc: BadInput, default: str) -> dict[str, str]:
    if isinstance(exc, FormRefused):
        return exc.fields
    return {(exc.where or default).lstrip("-").replace("-", "_"): exc.reason}


@guarded(*WRITERS)
@of_worker
async def worker_edit(request: Request):
    web = request.app.state.web
    reg = request.path_params["registration"]
    form = await request.form()
    typed = {k: str(form.get(k) or "") for k in EDITABLE if k in form}
    row = dict(typed)
    errors = _dates_read(row, [k for k in DATE_FIELDS if k in row])
    actor = f"web:{request.state.user.login}"
    if not errors:
        try:
            _w, changed = await run_in_threadpool(web.with_session, lambda s: edit_worker(
                s, reg, row, actor=actor, now=web.now()))
        except BadInput as exc:
            errors = _field_errors(exc, "name")
    if errors:
        return await worker_response(request, reg, errors=errors, values=typed, form="edit", status_code=400)
    return RedirectResponse(f"/workers/{reg}?saved={len(changed)}", status_code=303)


@guarded(*WRITERS)
@per_port  # the form offers the user's ports
async def new_form(request: Request):
    web = request.app.state.web
    cats = await run_in_threadpool(web.with_session, categories)
    today = br_date_text(_today(web))
    return page(request, "worker_new.html", values={"registered_on": today, "nationality": "BR",
                                                    "port": default_port(request) or ""},
                errors={}, categories=cats, conditions=CONDITIONS)


@guarded(*WRITERS)
@per_port  # a worker of one of the user's ports (``registry_scope.new_worker_port``)
async def new_post(request: Request):
    """Add a worker (``central.registry.enrol.add_worker``) of the port chosen among the user's
    (``workers.port``); refused: the same form, every typed value kept, each error beside its
    field (400)."""
    web = request.app.state.web
    form = await request.form()
    typed = {k: str(form.get(k) or "")[:1000] for k in (*ADD_FIELDS, *ADMISSION_FIELDS, "port")}
    row = dict(typed)
    dates = ("health_exam_date", "birth_date", "registered_on",
             *(f for f in ADMISSION_FIELDS if f.endswith("_on")))
    errors = _dates_read(row, dates)
    port, refused = new_worker_port(request, typed["port"])
    if refused:
        errors["port"] = refused
    actor = f"web:{request.state.user.login}"

    def work(s):
        # a date that is not dd/mm/aaaa goes on as typed: the service refuses it (nothing written)
        # and names every other bad field in the same answer
        added = add_worker(s, {k: row[k] for k in ADD_FIELDS}, {k: row[k] for k in ADMISSION_FIELDS},
                           actor=actor, now=web.now())
        if refused:
            raise FormRefused({})  # the port's refusal: nothing written
        set_port(s, added.registration, port, actor=actor, now=web.now(), served=web.ports)
        return added, categories(s)

    try:
        added, cats = await run_in_threadpool(web.with_session, work)
    except FormRefused as exc:
        errors = dict(exc.fields) | errors  # the date's own wording (dd/mm/aaaa) beside it
        added, cats = None, await run_in_threadpool(web.with_session, categories)
    if errors or added is None:
        lang = lang_of(request)
        return page(request, "worker_new.html", status_code=400, values=typed, categories=cats,
                    errors={k: localize(lang, v) for k, v in errors.items()}, conditions=CONDITIONS)
    return RedirectResponse(f"/workers/{added.registration}?added=1", status_code=303)


@guarded(*WRITERS)
@of_worker
async def card_lost(request: Request):
    """Report the card lost (G2): a cards change the downlink sends to every gate at once."""
    web = request.app.state.web
    reg, uid = request.path_params["registration"], request.path_params["uid"]
    actor = f"web:{request.state.user.login}"

    def work(s):
        enrol.card_of(s, reg, uid)
        return transition_card(s, uid, "lost", actor=actor, now=web.now())

    try:
        await run_in_threadpool(web.with_session, work)
    except BadInput as exc:
        return await worker_response(request, reg, errors={f"lost-{uid}": exc.reason}, form=f"lost-{uid}",
                                     status_code=400)
    return RedirectResponse(f"/workers/{reg}?card=lost-{uid}", status_code=303)


@guarded(*WRITERS)
@of_worker
async def card_replace(request: Request):
    """Replace a card (active, lost or confiscated) by a new one typed in any UID form."""
    web = request.app.state.web
    reg, uid = request.path_params["registration"], request.path_params["uid"]
    form = await request.form()
    typed = {"new_uid": str(form.get("new_uid") or "")[:64], "uid_form": str(form.get("uid_form") or "")[:20]}
    actor = f"web:{request.state.user.login}"

    def work(s):
        enrol.card_of(s, reg, uid)
        try:
            new_uid = enrol_uid(typed["new_uid"], typed["uid_form"] or None)
        except BadInput as exc:
            raise FormRefused({"new_uid": exc.reason}) from None
        return replace_card(s, uid, new_uid, actor=actor, now=web.now())

    try:
        new = await run_in_threadpool(web.with_session, work)
    except BadInput as exc:
        return await worker_response(request, reg, errors=_field_errors(exc, "new_uid"), values=typed,
                                     form=f"replace-{uid}", status_code=400)
    return RedirectResponse(f"/workers/{reg}?card=replaced-{new.uid}", status_code=303)


@guarded(*WRITERS)
@of_worker
async def card_new(request: Request):
    """Enrol a new card for the worker, its UID typed in any UID form."""
    web = request.app.state.web
    reg = request.path_params["registration"]
    form = await request.form()
    typed = {k: str(form.get(k) or "")[:64] for k in ("uid", "uid_form", "kind")}
    actor = f"web:{request.state.user.login}"
    try:
        card = await run_in_threadpool(web.with_session, lambda s: issue_card(
            s, reg, typed["uid"], typed["uid_form"], typed["kind"], actor=actor, now=web.now()))
    except BadInput as exc:
        return await worker_response(request, reg, errors=_field_errors(exc, "uid"), values=typed,
                                     form="card-new", status_code=400)
    return RedirectResponse(f"/workers/{reg}?card=issued-{card.uid}", status_code=303)


ROUTES = [
    Route("/workers", search, methods=["GET"]),
    Route("/workers/upload", upload_form, methods=["GET"]),
    Route("/workers/upload", upload, methods=["POST"]),
    Route("/workers/new", new_form, methods=["GET"]),
    Route("/workers/new", new_post, methods=["POST"]),
    Route("/workers/{registration}/cards", card_new, methods=["POST"]),
    Route("/workers/{registration}/cards/{uid}/lost", card_lost, methods=["POST"]),
    Route("/workers/{registration}/cards/{uid}/replace", card_replace, methods=["POST"]),
    Route("/workers/{registration}", worker, methods=["GET"]),
    Route("/workers/{registration}", worker_edit, methods=["POST"]),
]
