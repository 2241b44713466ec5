"""The payroll CSV export of the pay screens (``/pay/export.csv``): one row per statement line and a
``TOTAL`` row per current statement of the period (a superseded version is history, not owed:
``central.pay.statements_read.read_statements``), with the worker's name, CPF and PIS/NIS."""

from __future__ import annotations

import io

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from central.pay.integrity import altered
from central.pay.lines import money_str
from central.pay.statements_read import read_statements
from central.registry.ids import ids_of
from central.web.ports import per_port
from central.web.registry_scope import partial_view, regs_in_view
from central.web.render import bad_input, lang_of
from central.web.routes.pay import READERS, period_param, worker_names
from central.web.security import guarded
from portgate import csvout
from portgate.errors import BadInput
from portgate.records import WorkerIds


#: The payroll CSV's columns: English (``lang`` en) and pt-BR headers, in the same order.
PAYROLL_HEADERS = {
    "en": ("registration", "name", "cpf", "pis_nis", "work_day", "shift_id", "statement_id", "rulebook", "rule",
           "article", "description", "amount", "due_at", "status"),
    "pt": ("matrícula", "nome", "cpf", "pis_nis", "dia_de_trabalho", "turno", "demonstrativo", "tabela_de_regras",
           "regra", "artigo", "descrição", "valor", "vencimento", "situação"),
}
#: A statement's state in the payroll CSV (``altered_`` prefixed when its digest no longer matches).
PAYROLL_STATUS = {"en": {"paid": "paid", "on_hold": "on_hold", "unpaid": "unpaid", "altered_": "altered_"},
                  "pt": {"paid": "pago", "on_hold": "retido", "unpaid": "a_pagar", "altered_": "alterado_"}}


def payroll_rows(views, names: dict, ids: dict, edited: set, lang: str):
    """The payroll CSV's rows (header first) for statements ``views``: one row per line and a
    ``TOTAL`` row per statement, each with the worker's name, CPF and PIS/NIS (bare digits, empty
    when the registry has none; ``central.registry.ids``). Headers and states in ``lang`` (``pt``:
    pt-BR; otherwise English); amounts ``1234.56`` (a dot, as every export), days and due times ISO."""
    heads, words = PAYROLL_HEADERS.get(lang, PAYROLL_HEADERS["en"]), PAYROLL_STATUS.get(lang, PAYROLL_STATUS["en"])
    yield heads
    for s in views:
        state = "paid" if s.paid_at else ("on_hold" if s.on_hold else "unpaid")
        status = (words["altered_"] if s.statement_id in edited else "") + words[state]
        who = ids.get(s.registration, WorkerIds())
        head = (s.registration, names.get(s.registration, ""), who.cpf or "", who.pis or "", s.work_day.isoformat(),
                s.shift_id, s.statement_id, s.rulebook)
        for x in s.lines:
            yield (*head, x.rule, x.article, x.description, money_str(x.amount), s.due_at.isoformat(), status)
        yield (*head, "TOTAL", "", "", money_str(s.total), s.due_at.isoformat(), status)


@guarded(*READERS)
@per_port
async def export_csv(request: Request):
    """The payroll CSV of the period (``payroll_rows``), headers in the page's language."""
    web = request.app.state.web
    try:
        first, last = period_param(request)
    except BadInput as exc:
        return bad_input(request, str(exc))

    ports = partial_view(request)

    def work(conn):
        views = read_statements(conn, first, last)
        if ports is not None:
            mine = regs_in_view(conn, [v.registration for v in views], ports, web.ports)
            views = [v for v in views if v.registration in mine]
        regs = sorted({v.registration for v in views})
        return views, set(altered(conn, views)), worker_names(conn, regs), ids_of(conn, regs)

    found, edited, names, ids = await run_in_threadpool(web.read, work)
    out = io.StringIO()
    w = csvout.writer(out, lineterminator="\n")
    w.writerows(payroll_rows(found, names, ids, edited, lang_of(request)))
    return Response(out.getvalue(), media_type="text/csv; charset=utf-8", headers={
        "content-disposition": f'attachment; filename="folha-{first}-{last}.csv"'})


ROUTES = [Route("/pay/export.csv", export_csv, methods=["GET"])]
