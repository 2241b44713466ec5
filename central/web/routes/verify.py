"""The public payslip verification page (issue 34 item 9): ``/v/<token>`` (the address a slip's
QR code holds) and ``/v`` (a form to type the short code), reachable without login.

It answers what the holder of a slip may learn and nothing more: for a token the office issued
(``central.pay.slip_codes``) whose slip the ledger still gives the same (its HMAC code recomputed
from the ledger's statements with the office's key, no statement altered outside the ledger), the
slip's total, period and the worker's initials. A token the office issued whose slip changed since
says so without figures; an unknown or malformed token says only that it is unknown (404). Each
client address gets ``[web] verify_per_minute`` look-ups a minute, counted in the ledger by every web
process of the office (``central.web.shared_limit``; then 429 with ``Retry-After``), so 100-bit
tokens cannot be enumerated, however many processes serve the page.
"""

from __future__ import annotations

import json
from decimal import Decimal

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse
from starlette.routing import Route

from central.pay.integrity import altered
from central.pay.payslip import SlipHeader, brl, build_slips, code, date_br, initials
from central.pay.slip_codes import lookup, read_token
from central.web.render import page
from central.web.security import public


def _check(web, token: str):
    """``(state, facts)``: ``("valid", {total, first, last, initials})``, ``("changed", {})`` or
    ``("unknown", {})``."""
    with web.engine.connect() as conn:
        row = lookup(conn, token)
        if row is None:
            return "unknown", {}
        slips = build_slips(conn, row.date_from, row.date_to, registration=row.registration)
        if not slips or web.slip_key is None:
            return "changed", {}
        slip = slips[0]
        header = SlipHeader(**json.loads(row.header))
        if code(web.slip_key, slip, header) != row.code or altered(conn, list(slip.statements)):
            return "changed", {}
        return "valid", {"total": brl(Decimal(row.total_cents) / 100), "first": date_br(row.date_from),
                         "last": date_br(row.date_to), "initials": initials(slip.name)}


def _client(request: Request) -> str:
    return request.client.host if request.client else "?"


@public
async def verify_page(request: Request):
    web = request.app.state.web
    wait = await run_in_threadpool(web.verify_limiter.hit, _client(request))
    if wait:
        resp = page(request, "verify.html", status_code=429, state="limited", facts={}, typed="", retry_after=wait)
        resp.headers["Retry-After"] = str(wait)
        return resp
    typed = request.path_params["token"][:64]
    token = read_token(typed)
    state, facts = ("unknown", {}) if token is None else await run_in_threadpool(_check, web, token)
    return page(request, "verify.html", status_code=404 if state == "unknown" else 200, state=state, facts=facts,
                typed=typed, retry_after=0)


@public
async def verify_form(request: Request):
    """``/v``: the form to type the short code; ``/v?code=...`` goes to its page."""
    typed = str(request.query_params.get("code") or "").strip()[:64]
    if typed:
        token = read_token(typed)
        return RedirectResponse(f"/v/{token or 'invalido'}", status_code=303)
    return page(request, "verify.html", state="form", facts={}, typed="", retry_after=0)


ROUTES = [
    Route("/v", verify_form, methods=["GET"]),
    Route("/v/{token}", verify_page, methods=["GET"]),
]
