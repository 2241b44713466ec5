"""The inspectors' flag queue and the taps around one flagged event."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.routing import Route

from central.web import flagsmodel
from central.web.render import bad_input, page
from central.web.security import guarded
from portgate.errors import BadInput

READERS = ("inspector", "auditor", "admin", "office")


@guarded(*READERS)
async def flag_list(request: Request):
    web = request.app.state.web
    try:
        f = flagsmodel.parse_filters(request.query_params)
    except BadInput as exc:
        return bad_input(request, str(exc))
    rows = await run_in_threadpool(web.read, flagsmodel.flag_rows, f, web.tz)
    return page(request, "flags.html", rows=rows, f=f, flags=flagsmodel.FLAGS)


@guarded(*READERS)
async def flag_detail(request: Request):
    web = request.app.state.web
    event_id = request.path_params["event_id"]
    try:
        around = await run_in_threadpool(web.read, flagsmodel.taps_around, event_id)
    except BadInput as exc:
        return bad_input(request, str(exc), status_code=404)
    this = next(r for r in around if r["this"])
    return page(request, "flag.html", around=around, this=this,
                flags=this["flags"])


ROUTES = [
    Route("/flags", flag_list, methods=["GET"]),
    Route("/flags/{event_id}", flag_detail, methods=["GET"]),
]
