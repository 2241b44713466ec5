"""The audit-log page (issue 34 item 12): who changed what, when, filtered (``central.web.auditmodel``);
for the office, the auditor and the admin. A bad filter is the same form with the error beside
its field (400)."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.routing import Route

from central.web import auditmodel
from central.web.render import lang_of, page
from central.web.security import guarded
from central.web.service_texts import localize
from portgate.errors import BadInput

READERS = ("office", "auditor", "admin")


@guarded(*READERS)
async def audit_page(request: Request):
    web = request.app.state.web
    typed = {k: request.query_params.get(k, "") for k in ("actor", "action", "subject", "from", "to")}
    try:
        f = auditmodel.parse_filters(request.query_params)
    except BadInput as exc:
        return page(request, "audit.html", status_code=400, rows=[], next_query=None, first_page=None, typed=typed,
                    errors={exc.where or "from": localize(lang_of(request), exc.reason)})
    rows, next_before = await run_in_threadpool(web.read, auditmodel.search, f, web.tz)
    return page(request, "audit.html", rows=rows, typed=typed, errors={},
                next_query=f.query(before=next_before) if next_before else None,
                first_page=f.query(before=None) if f.before else None)


ROUTES = [Route("/audit", audit_page, methods=["GET"])]
