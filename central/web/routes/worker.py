"""The worker's own pages on his phone (issue 35), under ``/w/``: his escala, shifts, pay and
payslip, cases (R7: his prior defence, his appeal), card (report it lost) and his refusals for
health (R3); the activation page. The office's side (codes, revoking, R3 requests):
``central.web.routes.worker_office``.

Every worker page is wrapped by ``worker_only``: the office's ``guarded("worker")`` (session, role,
CSRF), then the account's registration (``workeraccounts.registration_of``), which must not be
cancelled (R4): else the session ends and the page says the account is disabled (403). Queries take
that registration only (``central.web.workermodel``): another worker's case or attachment is 404.
A worker's changes are audited with the actor ``worker:<login>``.

Pages are plain HTML forms with one small CSS file and one small script (``worker.js``: a typed
defence or appeal is kept on the phone until it is sent); no htmx. A refused defence or appeal is
shown again with what was typed.
"""

from __future__ import annotations

import datetime as dt
import functools
import io
from decimal import Decimal

from PIL import Image, UnidentifiedImageError
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from central.pay.payslip import brl
from central.pay.statements_read import read_statements
from central.production.hours import ARTICLE as R8_ARTICLE
from central.production.hours import worker_months
from central.production.read import member_statements
from central.production.render import quantity_text
from central.registry import cases as case_svc
from central.registry import store
from central.web import workermodel, workerrequests
from central.web.render import _local_time, env, lang_of
from central.web.routes import pay as pay_routes
from central.web.routes.cases import _row_id
from central.web.security import csrf_token, guarded, public, csrf_ok
from central.web.codewords import function_label, post_label
from central.web.service_texts import flag_label, localize, role_label
from central.web.users import MIN_PASSWORD, end_sessions_of
from central.web.workeraccounts import activate, registration_of
from central.web.workertexts import word, pay_rule
from portgate import l10n
from portgate.errors import BadInput

PHOTO_MAX = 4 * 1024 * 1024  # one photo of a document with a defence, bytes (under [web] max_body_mb)
PHOTO_FORMATS = {"JPEG": "image/jpeg", "PNG": "image/png"}
STEVEDORE = "estivador"  # the registry category whose shifts page carries his R8 monthly return of hours
ESCALA_REFRESH_S = 60  # the escala page reloads itself (a plain meta refresh, no script): a new dispatch shows


def wpage(request: Request, template: str, status_code: int = 200, **context) -> HTMLResponse:
    """Render a worker template (``worker/*.html``) with the worker pages' context."""
    web = request.app.state.web
    lang = lang_of(request)
    context.setdefault("reg", getattr(request.state, "registration", None))
    html = env.get_template(template).render(
        request=request, user=getattr(request.state, "user", None), lang=lang, csrf=csrf_token(request),
        gettext=lambda key: word(lang, key), when=_local_time(web.tz, lang), day_text=lambda d: l10n.day(d, lang), path=request.url.path, brl=brl,
        flag=lambda code: flag_label(lang, str(code)), function_name=lambda code: function_label(lang, str(code)),
        post_name=lambda code: post_label(lang, str(code)), rule=lambda r, d: pay_rule(lang, r, d),
        fmt=lambda key, **kw: word(lang, key).format(**kw), **context)
    return HTMLResponse(html, status_code=status_code)


def worker_only(fn):
    """Wrap a worker page: ``guarded("worker")``, then the account's registration must be valid (not
    cancelled, R4): else its sessions end and 403. Sets ``request.state.registration``."""

    @functools.wraps(fn)
    async def inner(request: Request) -> Response:
        web = request.app.state.web
        user = request.state.user

        def check(s):
            reg = registration_of(s, user.id)
            if reg is None:
                end_sessions_of(s, user.id, web.now())
            return reg

        reg = await run_in_threadpool(web.with_session, check)
        if reg is None:
            request.session.pop("sid", None)
            return wpage(request, "worker/message.html", status_code=403, message=word(lang_of(request), "w_disabled"))
        request.state.registration = reg
        return await fn(request)

    return guarded("worker")(inner)


def _actor(request: Request) -> str:
    return f"worker:{request.state.user.login}"


def _today(web) -> dt.date:
    return web.now().astimezone(web.tz).date()


def _days(request: Request) -> tuple[dt.date, dt.date]:
    """``from``/``to`` of the query (default: the month so far), as the office's pay page reads them."""
    return pay_routes._period(request)


@worker_only
async def escala_page(request: Request):
    web, reg = request.app.state.web, request.state.registration
    today = _today(web)
    tomorrow = today + dt.timedelta(days=1)

    def load(conn):
        found = workermodel.escala_of(conn, reg, (today, tomorrow))
        return found, workermodel.next_period(conn, reg, web.now(), web.tz), workerrequests.requests_of(conn, reg)

    found, nxt, asked = await run_in_threadpool(web.read, load)
    days = [(word(lang_of(request), "w_today"), today, [d for d in found if d.date == today]),
            (word(lang_of(request), "w_tomorrow"), tomorrow, [d for d in found if d.date == tomorrow])]
    return wpage(request, "worker/escala.html", days=days, nxt=nxt, refresh_s=ESCALA_REFRESH_S, asked=asked,
                 done=request.query_params.get("done", ""), photo_mb=PHOTO_MAX // (1024 * 1024), now=web.now())


@worker_only
async def health_refusal(request: Request):
    """He refuses one of his dispatches for health reasons with a photo of the certificate (R3): a
    pending request the office decides (``central.web.workerrequests``)."""
    web, reg, actor = request.app.state.web, request.state.registration, _actor(request)
    try:
        escala_id = _row_id(request.path_params["escala_id"], "escala")
    except BadInput:
        return _refused(request, word(lang_of(request), "w_no_such_dispatch"), status_code=404)
    form = await request.form()
    item = form.get("photo")
    try:
        if not (isinstance(item, UploadFile) and item.filename):
            raise BadInput("a photo of the medical certificate is required", where="photo-kind")
        photo = _photo(await item.read(), item.filename)
        await run_in_threadpool(web.with_session, lambda s: workerrequests.ask_health_refusal(
            s, reg, escala_id, str(form.get("reason") or ""), photo, actor=actor, now=web.now()))
    except LookupError:
        return _refused(request, word(lang_of(request), "w_no_such_dispatch"), status_code=404)
    except BadInput as exc:
        return _refused(request, say(lang_of(request), exc))
    return RedirectResponse("/w/?done=health", status_code=303)


@worker_only
async def shifts_page(request: Request):
    web, reg = request.app.state.web, request.state.registration
    try:
        first, last = _days(request)
    except BadInput as exc:
        return _refused(request, str(exc))

    def load(conn):
        found = workermodel.shifts_of(conn, reg, first, last)
        stevedore = workermodel.category_of(conn, reg) == STEVEDORE
        return found, (worker_months(conn, reg, first, last) if stevedore else None)

    found, months = await run_in_threadpool(web.read, load)
    total = sum((s.hours for s in found), start=Decimal("0.00"))
    return wpage(request, "worker/shifts.html", shifts=found, first=first, last=last, total=total,
                 months=months, r8_article=R8_ARTICLE)


@worker_only
async def pay_page(request: Request):
    web, reg = request.app.state.web, request.state.registration
    try:
        first, last = _days(request)
    except BadInput as exc:
        return _refused(request, str(exc))

    def load(conn):
        production = member_statements(conn, reg, first, last)
        return (read_statements(conn, first, last, registration=reg), production,
                workermodel.ship_names(conn, reg, {p.ship for p in production}))

    found, production, ships = await run_in_threadpool(web.read, load)
    return wpage(request, "worker/pay.html", found=found, production=production, ships=ships, first=first,
                 last=last, now=web.now(), total=sum((s.total for s in found), start=Decimal("0.00")),
                 role_label=role_label, quantity_text=quantity_text)


@worker_only
async def payslip(request: Request):
    """His payslip PDF of the period: the office's payslip (``routes.pay._pdf``), signed the same."""
    return await pay_routes._pdf(request, request.state.registration)


@worker_only
async def cases_page(request: Request):
    web, reg = request.app.state.web, request.state.registration
    found = await run_in_threadpool(web.read, lambda c: workermodel.cases_of(c, reg))
    return wpage(request, "worker/cases.html", cases=found)


def _case_id(request: Request) -> int | None:
    try:
        return _row_id(request.path_params["case_id"], "case")
    except BadInput:
        return None


async def _case_view(request: Request, status_code: int = 200, **extra) -> Response:
    web, reg = request.app.state.web, request.state.registration
    case_id = _case_id(request)
    found = None if case_id is None else await run_in_threadpool(web.read, workermodel.case_of, reg, case_id)
    if found is None:
        return _refused(request, f"no case {request.path_params['case_id'][:30]}", status_code=404)
    row, files = found
    deadline = case_svc.appeal_deadline(_Row(row)) if row.get("decided_at") else None
    context = {"defence_text": "", "appeal_text": "", "error": "", "saved": request.query_params.get("saved", "")}
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


def _photo(data: bytes, name: str) -> tuple[str, str, bytes]:
    """One photo of a document: at most ``PHOTO_MAX`` bytes, a JPEG or PNG Pillow can read.
    ``BadInput`` otherwise."""
    if len(data) > PHOTO_MAX:
        raise BadInput(f"attachment {name} is larger than {PHOTO_MAX // 1024 // 1024} MB", where="photo-size")
    try:
        with Image.open(io.BytesIO(data)) as img:
            kind = img.format
            img.verify()
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError):
        raise BadInput(f"attachment {name} is not a JPEG or PNG photo", where="photo-kind") from None
    if kind not in PHOTO_FORMATS:
        raise BadInput(f"attachment {name} is not a JPEG or PNG photo", where="photo-kind")
    return name, PHOTO_FORMATS[kind], data


async def _case_change(request: Request, field: str, step) -> Response:
    """A worker's defence or appeal: the case must be his (else 404); ``step(session, case_id, text,
    files)`` records it; a refusal shows the case again with the text typed (400)."""
    web, reg = request.app.state.web, request.state.registration
    case_id = _case_id(request)
    found = None if case_id is None else await run_in_threadpool(web.read, workermodel.case_of, reg, case_id)
    if found is None:
        return _refused(request, f"no case {request.path_params['case_id'][:30]}", status_code=404)
    form = await request.form()
    text = str(form.get(field) or "")
    try:
        files = []
        item = form.get("photo")
        if isinstance(item, UploadFile) and item.filename:
            files.append(_photo(await item.read(), item.filename))
        await run_in_threadpool(web.with_session, lambda s: step(s, case_id, text, files))
    except BadInput as exc:
        return await _case_view(request, status_code=400, error=say(lang_of(request), exc),
                                **{f"{field}_text": text})
    return RedirectResponse(f"/w/processos/{case_id}?saved={field}", status_code=303)


@worker_only
async def case_defence(request: Request):
    actor = _actor(request)
    return await _case_change(request, "defence", lambda s, cid, text, files: case_svc.record_defence(
        s, cid, text, attachments=files, actor=actor, now=request.app.state.web.now()))


@worker_only
async def case_appeal(request: Request):
    actor = _actor(request)

    def step(s, cid, text, files):
        if not text.strip():
            raise BadInput("the appeal text is required", where="appeal")
        case_svc.file_appeal(s, cid, text, actor=actor, now=request.app.state.web.now())

    return await _case_change(request, "appeal", step)


@worker_only
async def case_attachment(request: Request):
    web, reg = request.app.state.web, request.state.registration
    case_id = _case_id(request)
    try:
        att = _row_id(request.path_params["attachment_id"], "attachment")
    except BadInput:
        att = None
    found = None if case_id is None else await run_in_threadpool(web.read, workermodel.case_of, reg, case_id)
    if found is None or att is None or att not in {f["id"] for f in found[1]}:
        return _refused(request, "no attachment", status_code=404)
    row = await run_in_threadpool(web.with_session, lambda s: case_svc.attachment(s, case_id, att))
    safe = "".join(ch for ch in row.filename if ch.isalnum() or ch in "._-") or "anexo"
    return Response(row.data, media_type="application/octet-stream",
                    headers={"Content-Disposition": f'attachment; filename="{safe}"'})


@worker_only
async def card_page(request: Request):
    web, reg = request.app.state.web, request.state.registration
    found = await run_in_threadpool(web.read, workermodel.cards_of, reg)
    return wpage(request, "worker/card.html", cards=found, done=request.query_params.get("done", ""))


LOST_DETAIL = "reported lost by the worker: replacement requested"


@worker_only
async def card_lost(request: Request):
    """Report a card of his lost: the card goes to ``lost`` (``store.transition_card``, a cards change
    the downlink sends to every gate: G2 denies it) with the detail ``LOST_DETAIL``, which the
    office's worker page shows as the request for a replacement."""
    web, reg, actor = request.app.state.web, request.state.registration, _actor(request)
    form = await request.form()
    uid = str(form.get("uid") or "").strip()[:32]
    confirmed = form.get("confirm") == "yes"  # the box the page asks him to tick

    def step(s):
        cards = {c["uid"]: c for c in workermodel.cards_of(s.connection(), reg)}
        if uid not in cards:
            raise LookupError(uid)
        if not confirmed:  # a POST without it changes nothing
            raise PermissionError(uid)
        store.transition_card(s, uid, "lost", actor=actor, now=web.now(), detail=LOST_DETAIL)

    try:
        await run_in_threadpool(web.with_session, step)
    except LookupError:
        return _refused(request, word(lang_of(request), "w_no_such_card"), status_code=404)
    except PermissionError:
        return _refused(request, word(lang_of(request), "w_card_confirm_needed"))
    except BadInput:
        return _refused(request, word(lang_of(request), "w_card_not_active"))
    return RedirectResponse("/w/cartao?done=lost", status_code=303)


SAYS = {"code": "w_code_wrong", "locked": "login_locked", "--password": "w_password_short",
        "photo-size": "w_photo_size", "photo-kind": "w_photo_kind"}


def say(lang: str, exc: BadInput) -> str:
    """A refusal in ``lang``: this module's own words by the error's ``where``, else the office's
    translation of the service's message (``service_texts.localize``)."""
    key = SAYS.get(exc.where or "")
    if key:
        return word(lang, key).format(mb=PHOTO_MAX // (1024 * 1024), n=MIN_PASSWORD)
    return localize(lang, exc.reason)


def _refused(request: Request, message: str, status_code: int = 400) -> HTMLResponse:
    return wpage(request, "worker/message.html", status_code=status_code,
                 message=localize(lang_of(request), message))


@public
async def activate_form(request: Request):
    return wpage(request, "worker/activate.html", error="", login=request.query_params.get("m", "")[:64],
                 min_password=MIN_PASSWORD)


@public
async def activate_post(request: Request):
    """Set the password with the printed code (``workeraccounts.activate``); then to the login page."""
    form = await request.form()
    login = str(form.get("login") or "").strip()[:64]
    lang = lang_of(request)

    def again(msg: str, status: int):
        return wpage(request, "worker/activate.html", status_code=status, error=msg, login=login,
                     min_password=MIN_PASSWORD)

    if not await csrf_ok(request):
        return again(word(lang, "csrf"), 403)
    password = str(form.get("password") or "")
    if password != str(form.get("password2") or ""):
        return again(word(lang, "w_passwords_differ"), 400)
    web = request.app.state.web
    address = request.client.host if request.client else "?"

    def attempt(s):
        try:
            return activate(s, login, str(form.get("code") or ""), password, address=address, now=web.now())
        except BadInput as exc:
            return exc  # returned: a wrong code's failure row commits with the transaction

    outcome = await run_in_threadpool(web.with_session, attempt)
    if isinstance(outcome, BadInput):
        return again(say(lang, outcome), 400)
    return wpage(request, "worker/message.html", message=word(lang, "w_activated"), login_link=True)


ROUTES = [
    Route("/w/", escala_page, methods=["GET"]),
    Route("/w/escala/{escala_id}/saude", health_refusal, methods=["POST"]),
    Route("/w/turnos", shifts_page, methods=["GET"]),
    Route("/w/pagamento", pay_page, methods=["GET"]),
    Route("/w/contracheque.pdf", payslip, methods=["GET"]),
    Route("/w/processos", cases_page, methods=["GET"]),
    Route("/w/processos/{case_id}", case_page, methods=["GET"]),
    Route("/w/processos/{case_id}/defesa", case_defence, methods=["POST"]),
    Route("/w/processos/{case_id}/recurso", case_appeal, methods=["POST"]),
    Route("/w/processos/{case_id}/anexos/{attachment_id}", case_attachment, methods=["GET"]),
    Route("/w/cartao", card_page, methods=["GET"]),
    Route("/w/cartao/perdido", card_lost, methods=["POST"]),
    Route("/w/ativar", activate_form, methods=["GET"]),
    Route("/w/ativar", activate_post, methods=["POST"]),
]
