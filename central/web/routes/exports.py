"""CSV exports of the alarm list (``/alarms.csv``), of each table of the reports page
(``/reports/NAME.csv``) and of the day's escala as the escala page lists it (``/escala.csv``),
issue 34 item 12. Every file is written by ``portgate.csvout`` (a cell that begins with ``=``,
``+``, ``-``, ``@``, TAB or CR gets a leading apostrophe; plain decimal numbers stay numbers);
headers in the page's language (pt-BR, or English on an English page), times in UTC ISO 8601 and
in the port's local time, numbers with a decimal point (as every export)."""

from __future__ import annotations

import datetime as dt
import io
from collections.abc import Iterable

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from central.calls import acks, coverage
from central.ledger import reader_alarms
from central.rotation import service as rotation
from central.web.ports import of_gates, per_port
from central.web.render import bad_input, lang_of, period_label
from central.web.routes import escala as escala_routes, reports as reports_routes
from central.web.security import ALL_ROLES, guarded
from portgate import csvout
from portgate.errors import BadInput

#: rows of the alarm export at most, per kind, newest first (the page shows 200)
ALARM_ROWS = 10_000

ALARM_HEADERS = {
    "pt": ("tipo", "id", "navio", "nome_do_navio", "portaló", "leitor", "período", "aberto_utc", "aberto_local",
           "encerrado_utc", "encerrado_local", "detalhe", "reconhecido_por", "reconhecido_utc", "comentário"),
    "en": ("kind", "id", "ship", "ship_name", "gate", "reader", "period", "raised_utc", "raised_local",
           "ended_utc", "ended_local", "detail", "acknowledged_by", "acknowledged_utc", "comment"),
}
REPORT_HEADERS = {
    "sizing": {"pt": ("mês", "turnos_12_meses", "registrados", "média_mês_por_trabalhador", "trabalhadores_para_25"),
               "en": ("month", "shifts_12_months", "registered", "average_per_worker_month", "workers_for_25")},
    "hours": {"pt": ("mês", "horas_total", "registrados", "média_horas", "limite_mês_horas"),
              "en": ("month", "total_hours", "registered", "average_hours", "limit_month_hours")},
    "fairness": {"pt": ("mês", "matrícula", "turnos"), "en": ("month", "registration", "shifts")},
    "coverage": {"pt": ("navio", "alarmes", "horas_sem_vigia"), "en": ("ship", "alarms", "hours_uncovered")},
    "flags": {"pt": ("semana", "ocorrência", "quantidade"), "en": ("week", "flag", "count")},
}
REPORT_FILES = {"pt": {"sizing": "dimensionamento", "hours": "horas", "fairness": "rodizio", "coverage": "cobertura",
                       "flags": "ocorrencias"},
                "en": {"sizing": "sizing", "hours": "hours", "fairness": "fairness", "coverage": "coverage",
                       "flags": "flags"}}
ESCALA_HEADERS = {
    "pt": ("data", "período", "navio", "nome_do_navio", "portaló", "posto", "função", "matrícula", "nome", "operador"),
    "en": ("date", "period", "ship", "ship_name", "gate", "post", "function", "registration", "name", "operator"),
}


def _lang(request: Request) -> str:
    return "en" if lang_of(request) == "en" else "pt"


def csv_response(rows: Iterable[Iterable], filename: str) -> Response:
    """``rows`` (the header first) as a CSV download written by ``portgate.csvout``."""
    out = io.StringIO()
    csvout.writer(out, lineterminator="\n").writerows(rows)
    return Response(out.getvalue(), media_type="text/csv; charset=utf-8",
                    headers={"content-disposition": f'attachment; filename="{filename}"'})


def _utc(at: dt.datetime | None) -> str:
    return at.astimezone(dt.UTC).isoformat() if at else ""


def _local(at: dt.datetime | None, tz) -> str:
    return at.astimezone(tz).strftime("%d/%m/%Y %H:%M:%S") if at else ""


def alarm_rows(coverage_rows: list[dict], reader_rows: list[dict], done: dict, tz) -> Iterable[tuple]:
    """One row per alarm (coverage first, then reader; each newest first, as the page): the kind
    (``coverage`` | ``reader``), the ship or the reader, raised and ended times (UTC ISO and local
    ``dd/mm/aaaa hh:mm:ss``; empty while open) and the acknowledgement (who, when, comment)."""
    for a in coverage_rows:
        ack = done["coverage"].get(a["id"])
        yield ("coverage", a["id"], a["ship"], a.get("ship_name") or "", a.get("gate_id") or "", "",
               period_label(a["period_start"], tz), _utc(a["raised_at"]), _local(a["raised_at"], tz),
               _utc(a["ended_at"]), _local(a["ended_at"], tz), "",
               *((ack.actor, _utc(ack.at), ack.comment) if ack else ("", "", "")))
    for a in reader_rows:
        ack = done["reader"].get(a["id"])
        yield ("reader", a["id"], "", "", a["gate_id"], a["reader_id"], "", _utc(a["raised_at"]),
               _local(a["raised_at"], tz), _utc(a["ended_at"]), _local(a["ended_at"], tz), a.get("detail") or "",
               *((ack.actor, _utc(ack.at), ack.comment) if ack else ("", "", "")))


@guarded(*ALL_ROLES)
@per_port
async def alarms_csv(request: Request):
    """The coverage (G11) and reader alarms of ``/alarms`` (at most ``ALARM_ROWS`` each, of the
    user's ports) as CSV."""
    web = request.app.state.web
    ports = request.state.ports

    def load(s):
        rows = of_gates(s.connection(), ports, coverage.list_alarms(s, limit=ALARM_ROWS), web.ports, web.gate_registry)
        reader_rows = of_gates(s.connection(), ports, reader_alarms.list_alarms(s, limit=ALARM_ROWS),
                               web.ports, web.gate_registry)
        done = {"coverage": acks.acks(s, "coverage", [r["id"] for r in rows]),
                "reader": acks.acks(s, "reader", [r["id"] for r in reader_rows])}
        return rows, reader_rows, done

    rows, reader_rows, done = await run_in_threadpool(web.with_session, load)
    lang = _lang(request)
    return csv_response([ALARM_HEADERS[lang], *alarm_rows(rows, reader_rows, done, web.tz)],
                        "alarmes.csv" if lang == "pt" else "alarms.csv")


def report_rows(name: str, f: dict) -> Iterable[tuple]:
    """The rows of the reports page's table ``name`` (one of ``reports.CHARTS``) from its figures
    ``f`` (``reports.figures``): numbers as numbers (``None``, no figure, as an empty cell)."""
    if name == "sizing":
        return [(s["month"], s["shifts"], s["registered"], s["average_shifts_per_worker_month"],
                 s["workers_for_target"]) for s in f["sizing"]]
    if name == "hours":
        return [(h["month"], h["total_hours"], h["registered"], h["average_hours"], h["limit_month_hours"])
                for h in f["hours"]]
    if name == "fairness":
        return [(f["months"][-1], reg, n) for reg, n in f["fairness"]["shifts"].items()]
    if name == "coverage":
        return list(f["coverage"])
    return [(week, flag, n) for week, counts in f["flags"] for flag, n in counts.items()]


@guarded(*reports_routes.READERS)
@per_port
async def report_csv(request: Request):
    """One table of ``/reports`` (``NAME`` of ``reports.CHARTS``) for the 12 months ending with
    ``month`` (``YYYY-MM``; default this month) as CSV; 404 for an unknown table, 400 for a bad month."""
    web = request.app.state.web
    name = request.path_params["name"]
    if name not in reports_routes.CHARTS:
        return bad_input(request, "no such report", status_code=404)
    try:
        month = reports_routes.month_param(request)
    except BadInput as exc:
        return bad_input(request, str(exc))
    ports, partial = reports_routes.port_view(request)
    f = await run_in_threadpool(web.with_session,
                                lambda s: reports_routes.figures(s, month, web.tz, ports, partial, served=web.ports,
                                                                 registered=web.gate_registry))
    lang = _lang(request)
    return csv_response([REPORT_HEADERS[name][lang], *report_rows(name, f)], f"{REPORT_FILES[lang][name]}-{month}.csv")


def escala_rows(groups: list[dict], day: dt.date) -> Iterable[tuple]:
    """The escala page's rows in its order (``escala.group_entries``: by period, ship name, IMO;
    within a group by post, function, registration), the worker's name beside the registration."""
    for g in groups:
        for r in g["rows"]:
            e = r["entry"]
            yield (day.isoformat(), e.period, e.ship, e.ship_name, e.gate_id, e.post, e.function, e.registration,
                   r["name"], r["operator"])


@guarded(*ALL_ROLES)
@per_port  # the rows of the view's ports' gates, as the escala page
async def escala_csv(request: Request):
    """The day's active escala (``date``, ``YYYY-MM-DD``; default today in port time) as CSV; the
    rows of the view's ports (``escala.office_ports``)."""
    web = request.app.state.web
    try:
        day = escala_routes.day_param(request)
    except BadInput as exc:
        return bad_input(request, str(exc))
    ports = escala_routes.office_ports(request)

    def load(s):
        entries = rotation.day_entries(s, day, ports)
        return escala_routes.group_entries(entries, escala_routes.names_of(s, [e.registration for _i, _o, e in entries]))

    groups = await run_in_threadpool(web.with_session, load)
    lang = _lang(request)
    return csv_response([ESCALA_HEADERS[lang], *escala_rows(groups, day)], f"escala-{day.isoformat()}.csv")


ROUTES = [
    Route("/alarms.csv", alarms_csv, methods=["GET"]),
    Route("/reports/{name:str}.csv", report_csv, methods=["GET"]),
    Route("/escala.csv", escala_csv, methods=["GET"]),
]
