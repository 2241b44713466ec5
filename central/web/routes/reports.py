"""Reports with pictures: R6 sizing and R8 hours over 12 months, rotation fairness of the month,
coverage gaps per ship, flags per week. Each chart is an SVG image (``/reports/chart/NAME.svg``,
pygal on the server) with the numbers in a table beside it. On an office of several ports the page
shows the user's chosen port or all of his ports, every figure (``central.web.ports``,
``central.web.reportsmodel``)."""

from __future__ import annotations

import datetime as dt

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from central.web import reportsmodel as rm
from central.production.render import quantity_text
from central.rotation.ports import RotationPorts
from central.web.i18n import t
from portgate import l10n
from central.web.render import bad_input, lang_of, page
from central.web.service_texts import flag_label
from central.web.ports import per_port
from central.web.security import guarded
from portgate.errors import BadInput

READERS = ("office", "inspector", "auditor", "admin")
SVG_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
CHARTS = ("sizing", "hours", "fairness", "coverage", "flags")


def month_param(request: Request) -> str:
    web = request.app.state.web
    value = request.query_params.get("month") or web.now().astimezone(web.tz).strftime("%Y-%m")
    rm.months_ending(value)  # BadInput when malformed
    return value


def port_view(request: Request) -> tuple[tuple[str, ...] | None, bool]:
    """``(ports, partial)``: the ports the reports count (``request.state.ports``; None: every port,
    a single-port office) and whether that is fewer than the office serves."""
    ports = getattr(request.state, "ports", None)
    return ports, ports is not None and set(ports) != set(request.app.state.web.ports)


def figures(session, month: str, tz, ports: tuple[str, ...] | None = None, partial: bool = False, *,
            served: tuple[str, ...], registered: dict[str, str] | None = None) -> dict:
    """Every figure of the page for the 12 months ending with ``month``, of ``ports`` (None: every
    port; ``served`` the office's ports, ``registered`` its registered gates' ports:
    ``central.web.ports.keeper``, ``central.rotation.ports``); ``partial``: fewer ports than the
    office serves (the registry's figures are then of the workers registered at ``ports``)."""
    months = rm.months_ending(month)
    first, after = months[0], rm.next_month(months[-1])
    view = RotationPorts(tuple(served or ()), registered or {}, ports if partial else None)
    return {
        "months": [m.strftime("%Y-%m") for m in months],
        "sizing": rm.sizing_series(session, months, ports=view),
        "hours": rm.hours_series(session, months, ports=view),
        "fairness": rm.fairness_of(session, months[-1], ports=view),
        "coverage": rm.coverage_by_ship(session, first, after, tz, ports, served=served, registered=registered),
        "flags": rm.flags_per_week(session, first, after, tz, ports),
    }


def number(lang: str):
    """The page's number formatter: at most 2 decimals (the figures' own rounding), the decimal
    comma on pt-BR pages and the point on English ones (``quantity_text``); ``None`` as ``—``."""
    return lambda v: "—" if v is None else quantity_text(v, lang, places=2)


def chart_svg(name: str, f: dict, lang: str = "pt") -> bytes:
    """The chart ``name`` of the figures ``f`` in the page's language (titles and legends from the
    catalogs, a flag by its name: ``flag_label``); its values (axis and tooltips) written as the page
    writes them (``number``)."""
    from central.web import charts  # lazy: pygal only when a chart is drawn (the office's start-up)

    labels = f["months"]
    fmt = number(lang)
    w = lambda key: t(lang, key)  # noqa: E731
    if name == "sizing":
        return charts.line(fmt, w("chart_sizing"), labels, {
            w("chart_avg_worker"): [s["average_shifts_per_worker_month"] for s in f["sizing"]],
            w("target"): [25] * len(labels)})
    if name == "hours":
        return charts.bar(fmt, w("chart_hours"), labels, {
            w("chart_avg_stevedore"): [h["average_hours"] for h in f["hours"]],
            w("chart_hours_limit"): [h["limit_month_hours"] for h in f["hours"]]})
    if name == "fairness":
        shifts = f["fairness"]["shifts"]
        return charts.bar(fmt, w("chart_fairness").format(month=labels[-1]), list(shifts), {
            w("chart_shifts"): list(shifts.values())})
    if name == "coverage":
        rows = f["coverage"]
        return charts.bar(fmt, w("chart_coverage"), [r[0] for r in rows], {
            w("chart_alarms"): [r[1] for r in rows], w("chart_hours_uncovered"): [r[2] for r in rows]})
    weeks = f["flags"]
    kinds = sorted({k for _w, c in weeks for k in c})
    return charts.bar(fmt, w("flags_title"), [l10n.week(wk, lang, short=True) for wk, _c in weeks],
                      {flag_label(lang, k): [c.get(k, 0) for _w, c in weeks] for k in kinds}, stacked=True)


@guarded(*READERS)
@per_port
async def reports_page(request: Request):
    web = request.app.state.web
    try:
        month = month_param(request)
    except BadInput as exc:
        return bad_input(request, str(exc))
    ports, partial = port_view(request)
    f = await run_in_threadpool(web.with_session, lambda s: figures(s, month, web.tz, ports, partial,
                                                                         served=web.ports,
                                                                         registered=web.gate_registry))
    return page(request, "reports.html", month=month, f=f, charts=CHARTS, num=number(lang_of(request)))


@guarded(*READERS)
@per_port
async def chart(request: Request):
    web = request.app.state.web
    name = request.path_params["name"]
    if name not in CHARTS:
        return bad_input(request, "no such chart", status_code=404)
    try:
        month = month_param(request)
    except BadInput as exc:
        return bad_input(request, str(exc))
    ports, partial = port_view(request)
    f = await run_in_threadpool(web.with_session, lambda s: figures(s, month, web.tz, ports, partial,
                                                                         served=web.ports,
                                                                         registered=web.gate_registry))
    svg = chart_svg(name, f, lang_of(request))
    return Response(svg, media_type="image/svg+xml",
                    headers={"content-security-policy": SVG_CSP, "cache-control": "private, no-store"})


ROUTES = [
    Route("/reports", reports_page, methods=["GET"]),
    Route("/reports/chart/{name:str}.svg", chart, methods=["GET"]),
]
