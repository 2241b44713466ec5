"""The read log (every tap, searchable by date range, gate, worker, card and decision) and the
audit log (who changed what, when; by date range, user, action and subject), each a keyset-paged
page and a CSV export of everything the search finds (``central.web.logmodel``; issue 34 item 12).
A refused search is the same form with the typed values and the error beside its field.
Both are split by port (``central.web.ports``): the read log by the tap's port, the audit log by
the entry's (``audit_log.port``, 0031, ``central.registry.audit_ports``)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import io
import json
from collections.abc import Iterator

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

from central.web import auditwords, logmodel
from central.web.render import lang_of, page
from central.web.ports import per_port
from central.web.registry_scope import partial_view
from central.web.security import guarded
from central.web.service_texts import localize
from portgate import csvout
from portgate.errors import BadInput

READ_ROLES = ("inspector", "auditor", "admin", "office")
AUDIT_ROLES = ("auditor", "admin", "office")
READ_FIELDS = ("from", "to", "gate", "worker", "card", "decision")
AUDIT_FIELDS = ("from", "to", "actor", "action", "subject")
READ_HEADERS = {"pt": ("instante_utc", "hora_local", "portaló", "cartão", "matrícula", "nome", "decisão", "ocorrências",
                       "mensagem"),
                "en": ("occurred_at_utc", "local_time", "gate", "card", "registration", "name", "decision", "flags",
                       "message")}
AUDIT_HEADERS = {"pt": ("instante_utc", "hora_local", "quem", "ação", "sobre", "detalhe"),
                 "en": ("at_utc", "local_time", "actor", "action", "subject", "detail")}


def _typed(request: Request, fields) -> dict[str, str]:
    return {k: str(request.query_params.get(k) or "").strip()[:100] for k in fields}


def _days(web, typed: dict[str, str], default_days: int) -> tuple[dt.date, dt.date, dict[str, str]]:
    today = web.now().astimezone(web.tz).date()
    errors: dict[str, str] = {}
    out = []
    for key, default in (("from", today - dt.timedelta(days=default_days)), ("to", today)):
        try:
            out.append(dt.date.fromisoformat(typed[key]) if typed[key] else default)
        except ValueError:
            errors[key] = f"{key} {typed[key][:20]!r} is not an ISO date (YYYY-MM-DD)"
            out.append(default)
    return out[0], out[1], errors


def _after(request: Request) -> int:
    text = str(request.query_params.get("after") or "")
    return int(text) if text.isdigit() and len(text) < 19 else 0


def read_query(request: Request) -> tuple[logmodel.ReadQuery, dict[str, str], dict[str, str]]:
    """The read log's query from the query string, the typed values and ``{field: English error}``."""
    web = request.app.state.web
    typed = _typed(request, READ_FIELDS)
    first, last, errors = _days(web, typed, 6)
    q = logmodel.ReadQuery(first, last, typed["gate"], typed["worker"], typed["card"], typed["decision"],
                           _after(request), getattr(request.state, "ports", None))
    if not errors:
        try:
            logmodel.check_read_query(q, web.tz)
        except BadInput as exc:
            errors[exc.where or "from"] = exc.reason
    return q, typed, errors


def audit_query(request: Request) -> tuple[logmodel.AuditQuery, dict[str, str], dict[str, str]]:
    web = request.app.state.web
    typed = _typed(request, AUDIT_FIELDS)
    first, last, errors = _days(web, typed, 30)
    q = logmodel.AuditQuery(first, last, typed["actor"], typed["action"], typed["subject"], _after(request),
                            getattr(request.state, "ports", None), tuple(web.ports))
    if not errors:
        try:
            logmodel.day_bounds(first, last, web.tz)
        except BadInput as exc:
            errors[exc.where or "from"] = exc.reason
    return q, typed, errors


def _localized(request: Request, errors: dict[str, str]) -> dict[str, str]:
    lang = lang_of(request)
    return {k: localize(lang, v) for k, v in errors.items()}


@guarded(*READ_ROLES)
@per_port
async def reads_page(request: Request):
    web = request.app.state.web
    q, typed, errors = read_query(request)
    rows, nxt = ([], None) if errors else await run_in_threadpool(web.read, logmodel.read_page, q, web.tz)
    shown = {k: v for k, v in typed.items() if v} | {"from": q.first.isoformat(), "to": q.last.isoformat()}
    return page(request, "reads.html", status_code=400 if errors else 200, rows=rows, next_after=nxt,
                values=typed | {"from": typed["from"] or q.first.isoformat(), "to": typed["to"] or q.last.isoformat()},
                errors=_localized(request, errors), query=shown, decisions=logmodel.DECISIONS, first_page=bool(q.after))


@guarded(*AUDIT_ROLES)
@per_port
async def audit_page(request: Request):
    web = request.app.state.web
    q, typed, errors = audit_query(request)
    rows, nxt = ([], None) if errors else await run_in_threadpool(web.read, logmodel.audit_page, q, web.tz)
    shown = {k: v for k, v in typed.items() if v} | {"from": q.first.isoformat(), "to": q.last.isoformat()}
    return page(request, "audit.html", status_code=400 if errors else 200, rows=rows, next_after=nxt,
                values=typed | {"from": typed["from"] or q.first.isoformat(), "to": typed["to"] or q.last.isoformat()},
                errors=_localized(request, errors), query=shown, first_page=bool(q.after),
                port_note=partial_view(request) is not None, **_audit_words(request))


def _audit_words(request: Request) -> dict:
    """The audit page's ``detail(stored)`` (a field list, ``central.web.auditwords``),
    ``action_name(code)`` and ``subject_name(stored)`` in the page's language."""
    lang, tz = lang_of(request), request.app.state.web.tz
    return {"detail": lambda d: auditwords.detail_fields(lang, d, tz),
            "action_name": lambda a: auditwords.action_label(lang, str(a)),
            "subject_name": lambda s: auditwords.subject_label(lang, str(s or ""))}


def _stream(web, rows_of, header, cells) -> Iterator[str]:
    """CSV text a chunk of rows at a time: the header, then ``cells(row)`` of each row ``rows_of``
    yields (every cell neutralised by ``portgate.csvout``)."""
    out = io.StringIO()
    w = csvout.writer(out, lineterminator="\n")
    w.writerow(header)
    with web.engine.connect() as conn:
        for n, row in enumerate(rows_of(conn), start=1):
            w.writerow(cells(row))
            if n % 2000 == 0:
                yield out.getvalue()
                out.seek(0)
                out.truncate()
    yield out.getvalue()


def _local(web, at: dt.datetime) -> str:
    return at.astimezone(web.tz).strftime("%d/%m/%Y %H:%M:%S")


@guarded(*READ_ROLES)
@per_port
async def reads_csv(request: Request):
    """Every tap the search finds, newest first, streamed (keyset chunks: any size)."""
    web = request.app.state.web
    q, typed, errors = read_query(request)
    if errors:
        return page(request, "reads.html", status_code=400, rows=[], next_after=None, values=typed,
                    errors=_localized(request, errors), query={}, decisions=logmodel.DECISIONS, first_page=False)
    q = dataclasses.replace(q, after=0)
    lang = "en" if lang_of(request) == "en" else "pt"
    body = _stream(web, lambda conn: logmodel.read_all(conn, q, web.tz), READ_HEADERS[lang], lambda r: (
        r.at.astimezone(dt.UTC).isoformat(), _local(web, r.at), r.gate, r.card, r.registration, r.name, r.decision,
        " ".join(r.flags), r.message))
    return StreamingResponse(body, media_type="text/csv; charset=utf-8", headers={
        "content-disposition": f'attachment; filename="leituras-{q.first}-{q.last}.csv"'})


@guarded(*AUDIT_ROLES)
@per_port
async def audit_csv(request: Request):
    web = request.app.state.web
    q, typed, errors = audit_query(request)
    if errors:
        return page(request, "audit.html", status_code=400, rows=[], next_after=None, values=typed,
                    errors=_localized(request, errors), query={}, first_page=False, **_audit_words(request))
    q = dataclasses.replace(q, after=0)
    lang = "en" if lang_of(request) == "en" else "pt"
    body = _stream(web, lambda conn: logmodel.audit_all(conn, q, web.tz), AUDIT_HEADERS[lang], lambda r: (
        r["at"].astimezone(dt.UTC).isoformat(), _local(web, r["at"]),
        r["actor"], r["action"], r["subject"], json.dumps(r["detail"], ensure_ascii=False, sort_keys=True)))
    return StreamingResponse(body, media_type="text/csv; charset=utf-8", headers={
        "content-disposition": f'attachment; filename="auditoria-{q.first}-{q.last}.csv"'})


ROUTES = [
    Route("/reads", reads_page, methods=["GET"]),
    Route("/reads.csv", reads_csv, methods=["GET"]),
    Route("/audit", audit_page, methods=["GET"]),
    Route("/audit.csv", audit_csv, methods=["GET"]),
]
