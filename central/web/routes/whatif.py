"""The "what if" page: a past day's recorded gate decisions replayed through another gate rulebook
(recorded vs new decision per read), and a period's pay under another pay rulebook (recorded vs new
amount per worker, shift and rule). Nothing is stored: the pay side is
``central.pay.whatif.pay_what_if`` (``pay_from_ledger(store=False)``), the gate side the function
``portgate replay --from-ledger`` runs, handed to ``create_app`` as ``gate_what_if`` by the layer
that joins the office with the gate rules (``app.whatif.web_gate_what_if``).

On an office of several ports (``central.web.ports``) a user whose view is some of the ports runs
both over his ports only: the gate side decides again the taps of his ports' gates (``view_gates``;
another port's gate answers as a gate the ledger does not know), the pay side shows the statements
of his ports' workers (``central.web.registry_scope.regs_in_view``: a statement follows its worker's
port, as on the pay page)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import tomllib
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.routing import Route

from sqlalchemy import select

from central.cli_args import FIRST_DAY, LAST_DAY
from central.ledger.schema import events
from central.pay.calendar import HolidayCalendar
from central.pay.loading import DEFAULT_PORT_CONFIG, calendar_from_config, load_port_config, load_rulebook
from central.pay.payslip import brl
from central.pay.whatif import pay_what_if
from central.production.fromledger import shifts_against_gangs
from central.web.ports import keeper, per_port
from central.web.registry_scope import partial_view, regs_in_view
from central.web.render import lang_of, page
from central.web.security import guarded
from central.web.service_texts import localize
from portgate.errors import BadInput, ConfigError, PortgateError
from portgate.timeutil import as_utc

READERS = ("office", "auditor", "admin")
RULEBOOKS = Path(__file__).resolve().parents[3] / "config" / "rulebooks"
MAX_RULEBOOK_CHARS = 200_000


def pay_rulebook_ids() -> list[str]:
    """Ids of the watchmen's pay rulebooks shipped in ``config/rulebooks``: the files that load as
    one (``load_rulebook``). The stevedoring and dock-work rulebooks (``dl-2032-1940``...) and the
    gate rulebook are not offered: the pay what-if would refuse them."""
    ids = []
    for path in sorted(RULEBOOKS.glob("*.toml")):
        try:
            if "id" not in tomllib.loads(path.read_text(encoding="utf-8")):
                continue
            load_rulebook(path)
        except (OSError, tomllib.TOMLDecodeError, ConfigError, BadInput):
            continue
        ids.append(path.stem)
    return ids


def _default_gate_rulebook() -> str:
    try:
        return (RULEBOOKS / "gate-default.toml").read_text(encoding="utf-8")
    except OSError:
        return ""


def _day(value: str, where: str) -> dt.date:
    """``YYYY-MM-DD`` in [FIRST_DAY, LAST_DAY] -> date; ``BadInput`` naming ``where`` otherwise."""
    try:
        day = dt.date.fromisoformat(value.strip())
    except ValueError as exc:
        raise BadInput("dates are YYYY-MM-DD", where=where) from exc
    if not FIRST_DAY <= day <= LAST_DAY:
        raise BadInput(f"the day {day} is outside {FIRST_DAY}..{LAST_DAY}", where=where)
    return day


def _money(value: str | None) -> str:
    return "—" if value is None else brl(Decimal(value))


def per_worker(rows: list[dict]) -> list[dict]:
    """Per worker, the sum of the TOTAL rows: ``{registration, recorded, what_if, diff, changed}``
    (amounts as strings, ``recorded`` ``None`` when no shift of theirs has a recorded statement)."""
    sums: dict[str, list] = {}
    for r in rows:
        if r["rule"] != "TOTAL":
            continue
        acc = sums.setdefault(r["registration"], [None, Decimal(0), False])
        if r["recorded"] is not None:
            acc[0] = (acc[0] or Decimal(0)) + Decimal(r["recorded"])
        acc[1] += Decimal(r["what_if"] or 0)
        acc[2] = acc[2] or r["changed"]
    return [{"registration": reg, "recorded": None if was is None else f"{was:.2f}", "what_if": f"{now:.2f}",
             "diff": f"{now - (was or 0):.2f}", "changed": changed}
            for reg, (was, now, changed) in sorted(sums.items())]


def _directions(text: str) -> dict[str, str]:
    out = {}
    for item in text.replace(",", " ").split():
        reader, _, direction = item.partition("=")
        if not reader or direction not in ("in", "out", "both"):
            raise BadInput(f"{item[:60]!r} is not READER_ID=in|out|both", where="directions")
        out[reader] = direction
    return out


def rulebook_in_force(conn, gate: str, day: dt.date, tz) -> dict | None:
    """The gate rulebook ``gate`` journaled last before the end of local ``day`` (its ``rulebook``
    event, ``edge.rulebook_record``): ``{name, sha256, toml, at}`` (``at`` aware UTC; ``toml`` the
    shipped default's text when the gate runs the built-in default), or None when the gate never
    reported one (a gate older than the event)."""
    end = dt.datetime.combine(day + dt.timedelta(days=1), dt.time(), tz).astimezone(dt.UTC)
    row = conn.execute(select(events.c.payload, events.c.occurred_at).where(
        events.c.gate_id == gate, events.c.type == "rulebook", events.c.occurred_at < end)
        .order_by(events.c.occurred_at.desc(), events.c.seq.desc()).limit(1)).first()
    if row is None:
        return None
    p = row.payload or {}
    return {"name": p.get("name", ""), "sha256": p.get("sha256", ""),
            "toml": p.get("toml") or _default_gate_rulebook(), "at": as_utc(row.occurred_at)}


def _context(request: Request, **extra) -> dict:
    web = request.app.state.web
    today = web.now().astimezone(web.tz).date()
    base = {"day": today.isoformat(), "gate": "", "gate_rulebook": _default_gate_rulebook(), "directions": "",
            "in_force": None, "pay_from": today.replace(day=1).isoformat(), "pay_to": today.isoformat(),
            "pay_rulebook": _port_rulebook_id(web),
            "pay_rulebooks": pay_rulebook_ids(), "gate_available": web.gate_what_if is not None,
            "gate_result": None, "pay_result": None, "error": "", "error_of": "", "money": _money,
            "params": [], "param_typed": {}, "param_errors": {}, "param_result": None}
    return {**base, **extra}


def _port_rulebook_id(web) -> str:
    """The id of the port's own pay rulebook (the one ``portgate pay`` uses): the pay what-if's
    choice until the user picks another, so an untouched what-if changes nothing."""
    try:
        return load_rulebook(load_port_config(str(web.port_config or DEFAULT_PORT_CONFIG)).rulebook).id
    except (OSError, ValueError, PortgateError):
        return ""


def _parameters(web, toml: str, day: dt.date) -> list[dict]:
    """The parameters the form offers (``app.whatif.gate_parameters`` of the gate what-if handed
    in), [] when the what-if has none or the rulebook does not load (the raw TOML mode says why)."""
    parameters = getattr(web.gate_what_if, "parameters", None)
    if parameters is None:
        return []
    try:
        return parameters(toml, day)
    except PortgateError:
        return []


def view_gates(request: Request) -> Callable[[str], bool] | None:
    """The test "is this gate one of the view's ports'" (``central.web.ports.keeper``: a gate's port
    is its events', else its registration's, else the home port); None when the view is every
    served port (or the office serves one): every gate."""
    web = request.app.state.web
    if partial_view(request) is None:
        return None
    return web.read(lambda conn: keeper(conn, request.state.ports, web.ports, web.gate_registry))


def _in_force(web, keep: Callable[[str], bool] | None, gate: str, day: dt.date) -> dict | None:
    """``rulebook_in_force`` of ``gate`` when it is one of the view's gates, else None (as a gate
    that never reported one: another port's gate is not told apart from an unknown one)."""
    if not gate or (keep is not None and not keep(gate)):
        return None
    return web.read(rulebook_in_force, gate, day, web.tz)


@guarded(*READERS)
@per_port
async def whatif_page(request: Request):
    """The what-if page; with ``?gate=G&day=D`` the gate rulebook is the one in force at G that
    day (``rulebook_in_force``), so running it untouched changes no decision."""
    web = request.app.state.web
    gate = (request.query_params.get("gate") or "").strip()[:64]
    text = (request.query_params.get("day") or "").strip()
    if not gate:  # the shipped default's parameters for today
        today = web.now().astimezone(web.tz).date()
        return page(request, "whatif.html", **_context(request, params=_parameters(web, _default_gate_rulebook(), today)))
    try:
        day = _day(text, "day") if text else web.now().astimezone(web.tz).date()
    except BadInput as exc:
        return page(request, "whatif.html", status_code=400,
                    **_context(request, gate=gate, error=str(exc), error_of="gate"))
    keep = await run_in_threadpool(view_gates, request)
    found = await run_in_threadpool(_in_force, web, keep, gate, day)
    extra = {"gate": gate, "day": day.isoformat(), "in_force": (found | {"missing": False}) if found else {"missing": True}}
    if found:
        extra["gate_rulebook"] = found["toml"]
    extra["params"] = _parameters(web, extra.get("gate_rulebook") or _default_gate_rulebook(), day)
    return page(request, "whatif.html", **_context(request, **extra))


def _param_form(form) -> tuple[dict, dict]:
    """The parameter form's ``(fields, typed)``: the day, gate and reader directions as typed, and
    the parameter key and value typed (each cut to its field's size)."""
    fields = {"day": str(form.get("day") or ""), "gate": str(form.get("gate") or "").strip()[:64],
              "directions": str(form.get("directions") or "")[:500]}
    typed = {"param": str(form.get("param") or "")[:100], "value": str(form.get("value") or "")[:500]}
    return fields, typed


async def _param_context(request: Request, fields: dict, typed: dict, day: dt.date,
                         keep: Callable[[str], bool] | None) -> tuple[dict, dict | None]:
    """The page's context for ``fields``'s gate on ``day``: the rulebook in force there (the shipped
    default when none), its parameters, the typed values; and the parameter ``typed`` names (None:
    not one of them)."""
    web = request.app.state.web
    found = await run_in_threadpool(_in_force, web, keep, fields["gate"], day)
    toml = found["toml"] if found else _default_gate_rulebook()
    params = _parameters(web, toml, day)
    ctx = {**fields, "gate_rulebook": toml, "params": params, "param_typed": typed,
           "in_force": (found | {"missing": False}) if found else ({"missing": True} if fields["gate"] else None)}
    return ctx, next((p for p in params if p["key"] == typed["param"]), None)


async def _param_run(request: Request, ctx: dict, param: dict | None, typed: dict, day: dt.date,
                     keep: Callable[[str], bool] | None):
    """The page of one parameter changed: refused beside its field (400), "nothing changes" for the
    value in force, else the day's decisions replayed with it (over the view's gates)."""
    web, what_if = request.app.state.web, request.app.state.web.gate_what_if
    try:
        if param is None:
            raise BadInput("choose one of the listed parameters", where="param")
        value = what_if.parse(param, typed["value"])
        if value == what_if.parse(param, param["value"]):
            return page(request, "whatif.html", **_context(request, **ctx, param_result={
                "param": param, "unchanged": True}))
        directions = _directions(ctx["directions"])
        rows, summary = await run_in_threadpool(_gate_run, web, day, ctx["gate"], ctx["gate_rulebook"], directions,
                                                lang_of(request), keep, (param["key"], value))
    except BadInput as exc:
        where = exc.where if exc.where in ("param", "value") else "value"
        return page(request, "whatif.html", status_code=400, **_context(
            request, **ctx, param_errors={where: localize(lang_of(request), exc.reason)}))
    except PortgateError as exc:
        return page(request, "whatif.html", status_code=400,
                    **_context(request, **ctx, error=str(exc), error_of="gate"))
    for row in rows:
        row["read_at"] = dt.datetime.fromisoformat(row["at"])
    return page(request, "whatif.html", **_context(request, **ctx, param_result={
        "param": param, "unchanged": False, "typed": typed["value"].strip()},
        gate_result={"rows": rows, "summary": summary}))


def _gate_run(web, day: dt.date, gate: str, toml: str, directions: dict, lang: str,
              keep: Callable[[str], bool] | None, change: tuple[str, object] | None = None):
    """The gate what-if (``web.gate_what_if``) of ``gate`` (empty: every gate) on ``day``; with
    ``keep`` (a view of some ports) only the view's gates: another port's gate is refused as a gate
    the ledger does not know (``BadInput`` naming ``gate``)."""
    if gate and keep is not None and not keep(gate):
        raise BadInput(f"gate {gate[:64]!r} is not a known gate", where="gate")
    extra = {} if change is None else {"change": change}
    if keep is not None:
        extra["gates"] = keep
    return web.gate_what_if(web.engine, day, gate or None, toml, directions, lang, **extra)


@guarded(*READERS)
@per_port
async def param_post(request: Request):
    """One parameter of the gate rulebook in force at the gate that day changed, the day's
    decisions replayed with it. The parameter is one of those the rulebook in force has
    (``app.whatif.gate_parameters``); a value that is not one (not a number, out of range, not a
    choice) is refused beside its field with the typed value kept (400); a value equal to the one in
    force changes nothing and the page says so without running anything."""
    web = request.app.state.web
    fields, typed = _param_form(await request.form())
    if web.gate_what_if is None or getattr(web.gate_what_if, "parameters", None) is None:
        return page(request, "whatif.html", status_code=400,
                    **_context(request, **fields, error="gate_whatif_unavailable", error_of="gate"))
    try:
        day = _day(fields["day"], "day")
    except BadInput as exc:  # the form again, on the shipped default's parameters, as typed
        today = web.now().astimezone(web.tz).date()
        return page(request, "whatif.html", status_code=400, **_context(
            request, **fields, param_typed=typed, params=_parameters(web, _default_gate_rulebook(), today),
            error=str(exc), error_of="gate"))
    keep = await run_in_threadpool(view_gates, request)
    ctx, param = await _param_context(request, fields, typed, day, keep)
    return await _param_run(request, ctx, param, typed, day, keep)


@guarded(*READERS)
@per_port
async def gate_post(request: Request):
    web = request.app.state.web
    form = await request.form()
    rulebook = str(form.get("rulebook") or "")
    fields = {"day": str(form.get("day") or ""), "gate": str(form.get("gate") or "").strip()[:64],
              "gate_rulebook": rulebook[:MAX_RULEBOOK_CHARS],
              "directions": str(form.get("directions") or "")[:500]}
    if web.gate_what_if is None:
        return page(request, "whatif.html", status_code=400,
                    **_context(request, **fields, error="gate_whatif_unavailable", error_of="gate"))
    try:
        if len(rulebook) > MAX_RULEBOOK_CHARS:
            raise BadInput(f"the rulebook has {len(rulebook)} characters (at most {MAX_RULEBOOK_CHARS})",
                           where="rulebook")
        day = _day(fields["day"], "day")
        directions = _directions(fields["directions"])
        keep = await run_in_threadpool(view_gates, request)
        rows, summary = await run_in_threadpool(_gate_run, web, day, fields["gate"], fields["gate_rulebook"],
                                                directions, lang_of(request), keep)
    except PortgateError as exc:
        return page(request, "whatif.html", status_code=400,
                    **_context(request, **fields, error=str(exc), error_of="gate"))
    for row in rows:  # shown in the port's time, as the watchman saw it (``when``), not UTC
        row["read_at"] = dt.datetime.fromisoformat(row["at"])
    return page(request, "whatif.html", **_context(request, **fields, gate_result={"rows": rows, "summary": summary}))


def _calendar(port_config: str | None) -> HolidayCalendar:
    """The holiday calendar of the port TOML (default: the example port's), as ``portgate pay``
    builds it. ``ConfigError`` for a file that cannot be read."""
    where = str(port_config or DEFAULT_PORT_CONFIG)
    try:
        port = load_port_config(where)
        return calendar_from_config(port, load_rulebook(port.rulebook).timezone)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read the port configuration: {exc}", path=where) from exc


def _of_view(request: Request, result):
    """``result`` (a ``PayWhatIf``) with the rows and held shifts of the view's ports' workers only
    (``regs_in_view``), its statement count theirs; ``result`` itself for a view of every port."""
    ports = partial_view(request)
    if ports is None:
        return result
    web = request.app.state.web
    regs = {r["registration"] for r in result.rows} | {h[0].registration for h in result.held}
    mine = web.read(regs_in_view, regs, ports, web.ports)
    rows = [r for r in result.rows if r["registration"] in mine]
    return dataclasses.replace(result, rows=rows, held=[h for h in result.held if h[0].registration in mine],
                               statements=sum(1 for r in rows if r["rule"] == "TOTAL"))


@guarded(*READERS)
@per_port
async def pay_post(request: Request):
    web = request.app.state.web
    form = await request.form()
    fields = {"pay_from": str(form.get("from") or ""), "pay_to": str(form.get("to") or ""),
              "pay_rulebook": str(form.get("rulebook") or "")}
    try:
        first, last = _day(fields["pay_from"], "from"), _day(fields["pay_to"], "to")
        if last < first:
            raise BadInput("the period ends before it starts", where="to")
        if fields["pay_rulebook"] not in pay_rulebook_ids():
            raise BadInput("choose one of the listed pay rulebooks", where="rulebook")
        calendar = _calendar(web.port_config)
        book = load_rulebook(RULEBOOKS / f"{fields['pay_rulebook']}.toml")
        result = await run_in_threadpool(lambda: pay_what_if(web.engine, first, last, book, calendar, now=web.now(),
                                                             shifts_check=shifts_against_gangs))
        result = await run_in_threadpool(_of_view, request, result)
    except PortgateError as exc:
        return page(request, "whatif.html", status_code=400,
                    **_context(request, **fields, error=str(exc), error_of="pay"))
    return page(request, "whatif.html", **_context(request, **fields, pay_result=result,
                                                   pay_workers=per_worker(result.rows)))


ROUTES = [
    Route("/whatif", whatif_page, methods=["GET"]),
    Route("/whatif/gate", gate_post, methods=["POST"]),
    Route("/whatif/param", param_post, methods=["POST"]),
    Route("/whatif/pay", pay_post, methods=["POST"]),
]
