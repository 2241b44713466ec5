"""``portgate ledger``: migrate the office database; rebuild and list shifts with their flags.

    portgate ledger migrate --config central.toml   (or --db URL, one of them)
    portgate ledger shifts --config central.toml|--db URL --from 2026-03-01 --to 2026-03-31 [--port-config F] [--no-rebuild]
    portgate ledger correct-meal --config central.toml|--db URL --shift ID --actor NAME --reason TEXT [--not-worked]
    portgate ledger home-port --config central.toml [--set PORT --actor NAME [--move-portless]]

``shifts`` prints one JSON line per shift (id, registration, ship, period, times, closed_by, held,
flags).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json

import click

from central.cli_args import actor_arg, database_arg, day_range, db_url_arg, time_arg
from portgate.clitext import cli_lang, tr


def _iso(value):
    return value.isoformat() if value is not None else None


@click.group()
def ledger() -> None:
    """Ledger database: migrate, shifts, reconciliation."""


@ledger.command()
@click.option("--db", "db_url", help="Database URL (or --config).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="central.toml: its database_url.")
def migrate(db_url: str | None, config_path: str | None) -> None:
    """Bring the database to the newest schema (Alembic upgrade head)."""
    from central.ledger.migrate import upgrade  # lazy: CLI start-up

    db_url = database_arg(db_url, config_path, writes=None)  # the schema, not the ports' rows
    db_url_arg(db_url, must_exist=False)
    click.echo(tr("cli.ledger.at_revision", revision=upgrade(db_url)))


@ledger.command()
@click.option("--db", "db_url")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="central.toml (instead of --db).")
@click.option("--from", "date_from", required=True)
@click.option("--to", "date_to", required=True)
@click.option("--port-config", help="Port TOML (time zone). Default: the example.")
@click.option("--no-rebuild", is_flag=True, help="List the stored shifts without rebuilding.")
@click.option("--at", help="Time at which a shift with no exit is judged open (ISO 8601 with offset). Default: now.")
def shifts(db_url, config_path, date_from, date_to, port_config, no_rebuild, at) -> None:
    """Rebuild the shifts of work dates [--from, --to] from the events and list them with flags.

    A shift with no exit read whose period end plus the exit grace (``open_until``) is still after
    ``--at`` is listed ``"state": "open"`` without MISSING_EXIT (its exit may yet come), as ``pay``
    holds it OPEN; one whose admit (period start when no admit) is after ``--at`` is
    ``"not_started"``; both with ``"closed_by": "none"``. Every other shift is ``"closed"``. An
    empty ``--at`` is ``BadInput`` (exit 2)."""
    from central.db import make_engine  # lazy: CLI start-up
    from central.ledger.migrate import upgrade  # lazy: CLI start-up
    from central.ledger.store import read_shifts, rebuild_shifts  # lazy: CLI start-up
    from central.pay.cli import load_setup  # lazy: CLI start-up
    from central.pay.statements_store import open_until  # lazy: CLI start-up

    now = time_arg(at, "--at") if at is not None else dt.datetime.now(dt.UTC)
    _port, _book, calendar = load_setup(port_config)
    first, last = day_range(date_from, date_to)
    db_url = database_arg(db_url, config_path)
    db_url_arg(db_url, must_exist=True)
    upgrade(db_url)
    engine = make_engine(db_url)
    try:
        if not no_rebuild:
            rebuild_shifts(engine, first, last, calendar.zone, now=now)
        with engine.connect() as conn:
            found = read_shifts(conn, first, last)
    finally:
        engine.dispose()
    for s in found:
        until = open_until(s)
        state = shift_state(s, until, now)
        flags = [f for f in s.flags if not (state != "closed" and f.code == "MISSING_EXIT")]
        click.echo(json.dumps({
            "shift_id": s.shift_id, "registration": s.registration, "ship": s.ship,
            "work_date": s.work_date.isoformat(), "period": s.period, "function": s.function,
            "berth": s.berth, "gate_id": s.gate_id, "period_start": _iso(s.period_start),
            "period_end": _iso(s.period_end), "admit_at": _iso(s.admit_at),
            "exit_at": _iso(s.exit_at), "closed_by": s.closed_by if state == "closed" else "none",
            "meal_worked": s.meal_worked, "held": s.held, "state": state,
            "open_until": _iso(until) if state == "open" else None,
            "flags": [{"flag": f.code, "detail": f.detail} for f in flags],
        }, ensure_ascii=False))


def shift_state(s, until: dt.datetime | None, at: dt.datetime) -> str:
    """``"not_started"`` when ``at`` is before the shift's admit (its period start when it has no
    admit), ``"open"`` when it has no exit read and ``until`` (``open_until``) is after ``at``,
    ``"closed"`` otherwise."""
    if at < (s.admit_at or s.period_start):
        return "not_started"
    return "open" if until is not None and until > at else "closed"


@ledger.command("correct-meal")
@click.option("--db", "db_url")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="central.toml (instead of --db).")
@click.option("--shift", "shift_id", required=True, help="Shift id (registration/ship/YYYY-MM-DD/HH-HH).")
@click.option("--actor", envvar="PORTGATE_ACTOR", required=True, callback=actor_arg,
              help="Who records it (chief watchman, office clerk); also $PORTGATE_ACTOR.")
@click.option("--reason", required=True, help="Why: who asked the watchman to stay on post.")
@click.option("--not-worked", is_flag=True, help="Withdraw an earlier correction (meal not worked).")
def correct_meal(db_url, config_path, shift_id, actor, reason, not_worked) -> None:
    """Record that the meal interval of a shift was worked (P6, 83.611 art. 26 d), with an audit-log
    row. Every later rebuild applies it: the shift is flagged MEAL_CORRECTED and pay adds P6."""
    from central.db import make_engine  # lazy: CLI start-up
    from central.ledger.corrections import record_meal  # lazy: CLI start-up
    from central.ledger.migrate import upgrade  # lazy: CLI start-up

    db_url = database_arg(db_url, config_path)
    db_url_arg(db_url, must_exist=True)
    upgrade(db_url)
    engine = make_engine(db_url)
    try:
        record_meal(engine, shift_id, worked=not not_worked, actor=actor, reason=reason,
                    now=dt.datetime.now(dt.UTC))
    finally:
        engine.dispose()
    click.echo(tr("cli.ledger.meal_not_worked", shift=shift_id) if not_worked
               else tr("cli.ledger.meal_worked", shift=shift_id))


@ledger.command("home-port")
@click.option("--config", "config_path", required=True, type=click.Path(dir_okay=False),
              help="central.toml: its database_url and the ports it serves.")
@click.option("--set", "port", default=None, help="Record PORT (a port of --config) as the ledger's home port.")
@click.option("--move-portless", is_flag=True,
              help="With --set: let the workers without a port become PORT's (refused otherwise).")
@click.option("--actor", envvar="PORTGATE_ACTOR", default=None, callback=actor_arg, help="Who sets it (with --set); also $PORTGATE_ACTOR.")
@click.option("--force", is_flag=True,
              help="With --set: change it even while office processes run on the ledger (audited; they keep "
                   "the old home port until restarted).")
def home_port(config_path, port, move_portless, actor, force) -> None:
    """Show the ledger's home port (the port of its workers without a port); --set records another,
    with an audit row. Refused while office processes (central run, office serve) run on the ledger:
    they read it when they start; stop them first (or --force)."""
    from central.config import load_central_config  # lazy: CLI start-up
    from central.ledger.home_port import HomeRefused, read_home, set_home  # lazy: CLI start-up
    from central.ledger.migrate import upgrade  # lazy: CLI start-up

    if (move_portless or force) and port is None:
        raise click.UsageError(tr("cli.ledger.home_flag_needs_set",
                                  flag="--move-portless" if move_portless else "--force"))
    if port is not None and not (actor or "").strip():
        raise click.UsageError(tr("cli.ledger.home_needs_actor"))
    config = load_central_config(config_path)  # not database_arg: a wrong record is what this fixes
    db_url_arg(config.database_url, must_exist=True, name="database_url")
    upgrade(config.database_url)
    try:
        with _ledger(config.database_url, action=None if port is None else "setting the ledger's home port failed",
                     conflict=HOME_CONFLICT) as conn:
            if port is None:
                said = read_home(conn)
            else:
                said = set_home(conn, port, served=config.served_ports, move_portless=move_portless,
                                actor=actor or "", now=dt.datetime.now(dt.UTC), force=force)
    except HomeRefused as exc:
        said = {"not_served": "cli.ledger.home_not_served", "moves_portless": "cli.ledger.home_moves_portless",
                "offices_running": "cli.ledger.home_offices_running", "other_spelling": "cli.ledger.home_other_spelling"}
        raise click.UsageError(tr(said[exc.code], offices=_offices(exc.processes), **exc.fields)) from exc
    if port is None:
        click.echo(_home_said(said, config.port))
    elif said.recorded == port:
        click.echo(tr("cli.ledger.home_unchanged", port=port))
    else:
        click.echo(tr("cli.ledger.home_set", port=port, before=said.recorded or tr("cli.ledger.home_none"),
                      n=said.portless))
        if said.running:
            click.echo(tr("cli.ledger.home_forced", n=len(said.running), offices=_offices(said.running)), err=True)


def _offices(processes) -> str:
    """The office processes as one phrase: "central run em host (pid 12), ..." (the page's language)."""
    return ", ".join(tr("cli.ledger.home_office", kind=p.kind, host=p.host, pid=p.pid) for p in processes)


def _home_said(said, config_port: str) -> str:
    """``read_home``'s answer as a sentence: the recorded port, or none (NULL read as the config's)."""
    if said.recorded is None:
        return tr("cli.ledger.home_not_recorded", n=said.portless, port=config_port)
    from portgate import l10n  # lazy: CLI start-up (Babel)

    return tr("cli.ledger.home_recorded", port=said.recorded, at=l10n.moment(said.recorded_at, cli_lang()) + " UTC",
              n=said.portless)


#: ``home-port --set`` given up on another setter's lock or record (``central.db.store_failure``, exit 1)
HOME_CONFLICT = "another command changed it meanwhile, run again"


@contextlib.contextmanager
def _ledger(url: str, *, action: str | None = None, conflict: str = ""):
    """A transaction on the ledger at ``url``; a database failure is one line (``read_failure``).
    ``action`` (a write): a unique key another run took meanwhile or a lock given up is
    ``store_failure``'s ``StoreConflict`` (``action: conflict``, exit 1) instead."""
    from central.db import make_engine, read_failure, store_failure, unreachable  # lazy: CLI start-up
    from sqlalchemy.engine import make_url  # lazy: CLI start-up
    from sqlalchemy.exc import SQLAlchemyError  # lazy: CLI start-up
    from portgate.errors import StoreConflict  # lazy: CLI start-up

    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            yield conn
    except SQLAlchemyError as exc:
        said = store_failure(action, exc, conflict) if action and not unreachable(exc) else None
        if isinstance(said, StoreConflict):
            raise said from exc
        raise read_failure(make_url(url).render_as_string(hide_password=True), engine.dialect.name, exc) from exc
    finally:
        engine.dispose()
