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

Its parts: this module the escala, shifts, pay, payslip, card and activation pages;
``worker_cases.py`` his cases (R7); ``worker_frame.py`` what every worker page shares (``wpage``,
``worker_only``, ``say``, ``checked_photo``).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import RedirectResponse
from starlette.routing import Route

from central.pay.statements_read import read_statements
from central.production.hours import ARTICLE as R8_ARTICLE
from central.production.hours import worker_months
from central.production.read import member_statements
from central.production.render import quantity_text
from central.registry import store
from central.web import workermodel, workerrequests
from central.web.render import lang_of
from central.web.routes import pay as pay_routes
from central.web.routes import worker_cases
from central.web.routes.cases import row_id
from central.web.routes.worker_frame import (  # PHOTO_MAX and wpage: this module's names too
    PHOTO_MAX, worker_actor, checked_photo, refused, say, worker_only, wpage)
from central.web.security import public, csrf_ok
from central.web.service_texts import role_label
from central.web.users import MIN_PASSWORD
from central.web.workeraccounts import activate
from central.web.workertexts import word
from portgate.errors import BadInput

STEVEDORE = "estivador"  # the registry category whose shifts page carries his R8 monthly return of hours
ESCALA_REFRESH_S = 60  # the escala page reloads itself (a plain meta refresh, no script): a new dispatch shows


def _today(web) -> dt.date:
    return web.now().astimezone(web.tz).date()


def _days(request: Request) -> tuple[dt.date, dt.date]:
    """``from``/``to`` of the query (default: the month so far), as the office's pay page reads them."""
    return pay_routes.period_param(request)


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
    web, reg, actor = request.app.state.web, request.state.registration, worker_actor(request)
    try:
        escala_id = row_id(request.path_params["escala_id"], "escala")
    except BadInput:
        return refused(request, word(lang_of(request), "w_no_such_dispatch"), status_code=404)
    form = await request.form()
    item = form.get("photo")
    try:
        if not (isinstance(item, UploadFile) and item.filename):
            raise BadInput("a photo of the medical certificate is required", where="photo-kind")
        photo = checked_photo(await item.read(), item.filename)
        await run_in_threadpool(web.with_session, lambda s: workerrequests.ask_health_refusal(
            s, reg, escala_id, str(form.get("reason") or ""), photo, actor=actor, now=web.now()))
    except LookupError:
        return refused(request, word(lang_of(request), "w_no_such_dispatch"), status_code=404)
    except BadInput as exc:
        return refused(request, say(lang_of(request), exc))
    return RedirectResponse("/w/?done=health", status_code=303)


@worker_only
async def shifts_page(request: Request):
    web, reg = request.app.state.web, request.state.registration
    try:
        first, last = _days(request)
    except BadInput as exc:
        return refused(request, str(exc))

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
        return refused(request, str(exc))

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
    return await pay_routes.payslip_response(request, request.state.registration)


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
    web, reg, actor = request.app.state.web, request.state.registration, worker_actor(request)
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
        return refused(request, word(lang_of(request), "w_no_such_card"), status_code=404)
    except PermissionError:
        return refused(request, word(lang_of(request), "w_card_confirm_needed"))
    except BadInput:
        return refused(request, word(lang_of(request), "w_card_not_active"))
    return RedirectResponse("/w/cartao?done=lost", status_code=303)


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
            return activate(s, login, str(form.get("code") or ""), password, address=address, now=web.now(),
                            throttle_at=web.throttle_now())  # the rate limit: a clock that moves
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
    *worker_cases.ROUTES,  # /w/processos...
    Route("/w/cartao", card_page, methods=["GET"]),
    Route("/w/cartao/perdido", card_lost, methods=["POST"]),
    Route("/w/ativar", activate_form, methods=["GET"]),
    Route("/w/ativar", activate_post, methods=["POST"]),
]
