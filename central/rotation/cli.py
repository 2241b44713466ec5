"""``portgate rotation``: dispatch the day's requisitions, refusals, substitutions, exports (R1-R6)
and the office reports (escala vs presence, coverage gaps, sanctions, sizing)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json

import click

from central import reports
from central.cli_args import FIRST_DAY, LAST_DAY, time_arg
from central.registry.cli import common, iso_date, transaction
from central.rotation import service
from central.rotation.ports import need_config
from central.rotation.requisitions import load_requisitions
from portgate.clitext import tr


def _out(obj) -> None:
    click.echo(json.dumps(obj, default=str, ensure_ascii=False))


def _now(value: str | None) -> dt.datetime:
    """The command's clock: ``--at``/``--now`` (ISO 8601 with offset, years 2000..2100; ``BadInput``
    otherwise), else the machine's. It stamps the rows and decides which periods have ended."""
    return time_arg(value, "--at") if value else dt.datetime.now(dt.UTC)


#: ``--at``/``--now``: the time the change is made at (the edge's clock, passed to the services)
at_option = click.option("--at", "--now", "at", default=None,
                         help="The time of the change (ISO 8601 with offset). Default: now. A period that "
                              "has ended by then is neither dispatched nor changed.")


def _office_ports(session) -> service.RotationPorts | None:
    """The office's ports for a dispatch or change (``central.rotation.ports``): with ``--config``
    its ``port``/``ports`` and the gates registered under ``keys_dir`` and ``port_keys_dirs``; with
    ``--db`` alone None (one port), after ``need_config`` refused a ledger of several ports (``BadInput``).
    A config that does not serve every port the ledger names, or of another home port, was refused
    where the ledger was opened for it (``common``: ``central.ledger.home.check_config``)."""
    from central.config import load_central_config  # lazy: CLI start-up
    from central.ingest.nats_users import registered_in  # lazy: CLI start-up

    path = click.get_current_context().params.get("config_path")
    if path is None:
        need_config(session)
        return None
    cfg = load_central_config(path)
    return service.RotationPorts(cfg.served_ports, registered_in(cfg.registry_dirs))


#: ``--port`` of the escala list, its export and the R6 reports: the ports shown, as the web pages' selector
port_option = click.option("--port", "ports", multiple=True,
                           help="Only this port's escala rows and workers (repeatable; needs --config, a port "
                                "it serves). Default: every port of the config.")


def _view(given: tuple[str, ...]) -> service.RotationPorts | None:
    """The ports a list or report shows (``RotationPorts.view``, as a web user's selector): with
    ``--config`` its ports, the gates registered under ``registry_dirs`` and the view ``--port``
    (every port when none is given); with ``--db`` alone None (nothing filtered). ``click.UsageError``
    for ``--port`` without ``--config`` or naming a port the config does not serve (exit 2)."""
    from central.config import load_central_config  # lazy: CLI start-up
    from central.ingest.nats_users import registered_in  # lazy: CLI start-up

    path = click.get_current_context().params.get("config_path")
    if path is None:
        if given:
            raise click.UsageError(tr("cli.rotation.port_needs_config"))
        return None
    cfg = load_central_config(path)
    strange = [p for p in given if p not in cfg.served_ports]
    if strange:
        raise click.UsageError(tr("cli.rotation.port_not_served", ports=", ".join(strange),
                                  served=", ".join(cfg.served_ports)))
    view = tuple(dict.fromkeys(given)) or None
    return service.RotationPorts(cfg.served_ports, registered_in(cfg.registry_dirs), view)


#: the escala day's option help (one msgid for every command that takes --date)
DATE_HELP = "The escala's day, YYYY-MM-DD."


@click.group("rotation")
def rotation() -> None:
    """Rotation (rodízio) and the daily escala (R1-R6); reports."""


@rotation.command("dispatch")
@common
@click.option("--date", "day", required=True, callback=iso_date, help=DATE_HELP)
@click.option("--requisitions", "path", required=True, type=click.Path(dir_okay=False))
@click.option("--composition", "composition_toml", type=click.Path(dir_okay=False), default=None,
              help="Gang composition table (default: config/gang-composition.toml).")
@at_option
def dispatch_cmd(url, actor, day, path, composition_toml, at):
    """Fill requisitions.csv for DATE from the rotation; store and publish the escala."""
    from central.rotation.dispatch_file import dispatch_file  # lazy: CLI start-up

    now = _now(at)
    with transaction(url) as session:
        run = dispatch_file(session, day, path, actor=actor, composition_toml=composition_toml, now=now,
                            ports=_office_ports(session))
    reqs, done, flags = run.requisitions, run.done, run.flags
    res = done.result
    _out({"date": day, "requisitions": len(reqs), "dispatched": len(done.entry_ids),
          "skipped": len(res.skips), "ineligible": len(res.ineligible),
          "shortfalls": {s.requisition.ref: s.missing for s in res.shortfalls}, "flags": flags})


@rotation.command("list")
@common(writes=False)
@click.option("--date", "day", required=True, callback=iso_date, help=DATE_HELP)
@port_option
def list_cmd(url, actor, day, ports):
    """The day's active escala, one JSON line per entry (with its id)."""
    view = _view(ports)
    with transaction(url) as session:
        rows = service.day_entries(session, day, view)
    for entry_id, operator, entry in rows:
        _out({"id": entry_id, "operator": operator} | dataclasses.asdict(entry))


@rotation.command("export")
@common(writes=False)
@click.option("--date", "day", required=True, callback=iso_date, help=DATE_HELP)
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False))
@port_option
def export_cmd(url, actor, day, out_dir, ports):
    """Write the day's escala per operator and per ship as escala.csv files (R5)."""
    view = _view(ports)
    with transaction(url) as session:
        paths = service.export(session, day, out_dir, view)
    for p in paths:
        click.echo(str(p))


@rotation.command("refuse")
@common
@click.option("--entry", "entry_id", type=int, required=True)
@click.option("--reason", required=True)
@click.option("--health-proof", default=None, help="Reference of the medical proof (no infraction).")
@at_option
def refuse_cmd(url, actor, entry_id, reason, health_proof, at):
    """Record a refusal of a dispatch (R3) and dispatch the next worker in the rotation."""
    now = _now(at)
    with transaction(url) as session:
        refusal, new_id = service.refuse(session, entry_id, reason=reason, actor=actor,
                                         health_proof=health_proof, now=now, ports=_office_ports(session))
    _out({"refusal": refusal, "infraction": not health_proof, "new_entry": new_id})


@rotation.command("substitute")
@common
@click.option("--entry", "entry_id", type=int, required=True)
@click.option("--reason", required=True)
@click.option("--registration", default=None, help="Named substitute (checked for eligibility).")
@at_option
def substitute_cmd(url, actor, entry_id, reason, registration, at):
    """Late substitution: replace an entry by the next eligible worker, re-published at once."""
    now = _now(at)
    with transaction(url) as session:
        new_id = service.substitute(session, entry_id, reason=reason, actor=actor,
                                    registration=registration, now=now, ports=_office_ports(session))
    _out({"removed": entry_id, "new_entry": new_id})


@rotation.command("fairness")
@common(writes=False)
@click.option("--month", required=True, help="YYYY-MM")
@click.option("--category", default="vigia", show_default=True)
@port_option
def fairness_cmd(url, actor, month, category, ports):
    """Shifts per worker in a month, average, spread and distance from 25 (R6)."""
    try:
        first = dt.date.fromisoformat(f"{month}-01")
    except ValueError as exc:
        raise click.BadParameter(tr("cli.args.not_a_month", value=repr(month)), param_hint="--month") from exc
    if not FIRST_DAY <= first <= LAST_DAY:
        bounds = {"first": FIRST_DAY.strftime("%Y-%m"), "last": LAST_DAY.strftime("%Y-%m")}
        raise click.BadParameter(tr("cli.args.month_outside", value=repr(month), **bounds), param_hint="--month")
    view = _view(ports)
    with transaction(url) as session:
        f = service.month_fairness(session, first.year, first.month, category, ports=view)
    for reg, n in sorted(f.shifts.items()):
        _out({"registration": reg, "shifts": n, "distance_from_target": f.distance(reg)})
    _out({"average": round(f.average, 2), "spread": f.spread, "fairest_spread": f.fairest_spread,
          "target": f.target})


@rotation.command("presence")
@common(writes=False)
@click.option("--date", "day", required=True, callback=iso_date, help=DATE_HELP)
def presence_cmd(url, actor, day):
    """Escala vs presence: dispatched and not boarded, boarded without dispatch (R5)."""
    with transaction(url) as session:
        rep = reports.presence(session, day)
    for row in rep.dispatched_not_boarded:
        _out({"kind": "dispatched_not_boarded"} | row)
    for row in rep.boarded_without_dispatch:
        _out({"kind": "boarded_without_dispatch"} | row)


@rotation.command("coverage")
@common(writes=False)
@click.option("--date", "day", required=True, callback=iso_date, help=DATE_HELP)
def coverage_cmd(url, actor, day):
    """Gangway coverage gaps of long-haul ships (G11)."""
    with transaction(url) as session:
        for row in reports.coverage_gaps(session, day):
            _out(row)


@rotation.command("sanctions")
@common(writes=False)
@click.option("--from", "start", required=True, callback=iso_date)
@click.option("--to", "end", required=True, callback=iso_date)
def sanctions_cmd(url, actor, start, end):
    """Confiscations and penalties recorded in a date range."""
    with transaction(url) as session:
        rep = reports.sanctions(session, start, end)
    for kind, rows in rep.items():
        for row in rows:
            _out({"section": kind} | row)


@rotation.command("sizing")
@common(writes=False)
@click.option("--month", "day", required=True, callback=iso_date, help="First day of the month.")
@click.option("--category", default="vigia", show_default=True)
@port_option
def sizing_cmd(url, actor, day, category, ports):
    """R6: average shifts per registered watchman per month over the previous 12 months."""
    view = _view(ports)
    with transaction(url) as session:
        _out(reports.sizing(session, day, category, ports=view))


@rotation.command("hours", short_help="R8 (DL 2.032, art. 6): hours per stevedore, by month or semester.")
@common(writes=False)
@click.option("--month", default=None, help="YYYY-MM: the monthly return of hours per stevedore.")
@click.option("--semester", default=None, help="YYYY-1 or YYYY-2: the semester average and verdict.")
def hours_cmd(url, actor, month, semester):
    """R8 (DL 2.032 art. 6): hours worked per stevedore in a month, or the semester average per
    registered stevedore with its verdict (above 1,000 h: enlarge; otherwise: close the registry)."""
    from central.production.hours import monthly_return, semester_return  # lazy: CLI start-up

    if bool(month) == bool(semester):
        raise click.UsageError(tr("cli.rotation.give_month_or_semester"))
    with transaction(url) as session:
        _out(monthly_return(session, month) if month else semester_return(session, semester))
