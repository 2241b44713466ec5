"""The office's bookkeeping of stored statements from the command line: ``portgate pay overdue``
(unpaid past their due time, Lei 9.719 art. 2 §1), ``mark-paid``, ``reverse-paid`` and ``release``
(a hold reviewed). Changes when how a payment or a hold is recorded changes
(``central.pay.statements_store``), not when pay is computed."""

from __future__ import annotations

import datetime as dt
import json

import click

from central.cli_args import database_arg, db_url_arg, time_arg
from central.pay.cli_setup import at_arg, login, on_ledger
from central.pay.lines import money_str
from portgate.clitext import tr


def unique_ids(given) -> list[str]:
    """``given`` statement ids with each repeated one kept once (first place); when some were
    repeated, says so on stderr (``cli.pay.repeated_ids``) so the count printed after the change is
    the statements really changed, not the arguments typed."""
    ids = list(dict.fromkeys(given))
    if len(ids) < len(given):
        twice = [i for i in ids if list(given).count(i) > 1]
        click.echo(tr("cli.pay.repeated_ids", n=len(given) - len(ids), ids=", ".join(twice)), err=True)
    return ids


@click.command("overdue")
@click.option("--db", "db_url")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="central.toml (instead of --db).")
@click.option("--at", help="Reference time (ISO 8601 with offset). Default: now.")
def overdue_cmd(db_url, config_path, at):
    """List unpaid statements past their due time (Lei 9.719 art. 2 §1: 48 h), one JSON line each."""
    from sqlalchemy.exc import SQLAlchemyError  # lazy: CLI start-up

    from central.db import make_engine, read_failure  # lazy: CLI start-up
    from central.pay.statements_store import overdue  # lazy: CLI start-up

    reference = at_arg(at)
    db_url = database_arg(db_url, config_path, writes=False)
    db_url_arg(db_url, must_exist=True)
    engine = make_engine(db_url)
    try:
        with engine.connect() as conn:
            found = overdue(conn, reference)
    except SQLAlchemyError as exc:  # not a database, not a ledger, not reachable: one line
        raise read_failure(engine.url.render_as_string(hide_password=True), engine.dialect.name, exc) from exc
    finally:
        engine.dispose()
    for s in found:
        row = {"statement_id": s.statement_id, "registration": s.registration,
               "work_day": s.work_day.isoformat(), "shift_id": s.shift_id,
               "amount": money_str(s.total), "due_at": s.due_at.isoformat()}
        if s.hold_reason:
            row["hold"] = s.hold_reason
        click.echo(json.dumps(row, ensure_ascii=False))


@click.command("mark-paid")
@click.option("--db", "db_url")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="central.toml (instead of --db).")
@click.option("--at", help="When it was paid (ISO 8601 with offset). Default: now.")
@click.option("--ref", help="Payment reference (bank transfer id, payroll batch).")
@click.argument("statement_ids", nargs=-1, required=True)
def mark_paid_cmd(db_url, config_path, at, ref, statement_ids):
    """Mark statements paid. Unknown, already-paid, superseded or on-hold ids: error, nothing
    changed. An id given twice is marked once (and said so)."""
    from central.pay.statements_store import mark_paid  # lazy: CLI start-up

    now = dt.datetime.now(dt.UTC)  # the office's clock, read here at the edge
    paid_at = time_arg(at, "--at") if at else now
    ids = unique_ids(statement_ids)
    on_ledger(db_url, config_path, lambda engine: mark_paid(engine, ids, paid_at, ref,
                                                            now=now, actor=f"cli:{login()}"))
    click.echo(tr("cli.pay.marked_paid", n=len(ids)))


@click.command("reverse-paid")
@click.option("--db", "db_url")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="central.toml (instead of --db).")
@click.option("--reason", required=True, help="Why the mark was a mistake, and who decided (1-255 characters).")
@click.argument("statement_ids", nargs=-1, required=True)
def reverse_paid_cmd(db_url, config_path, reason, statement_ids):
    """Reverse a mistaken mark-paid: the statements are unpaid again, and the audit log keeps the
    mark reversed and the reason (pay.reverse_paid). Unknown or unpaid ids: error, nothing changed."""
    from central.pay.statements_store import reverse_paid  # lazy: CLI start-up

    now = dt.datetime.now(dt.UTC)  # the office's clock, read here at the edge
    ids = unique_ids(statement_ids)
    on_ledger(db_url, config_path, lambda engine: reverse_paid(engine, ids, reason, at=now,
                                                               actor=f"cli:{login()}"))
    click.echo(tr("cli.pay.reversed", n=len(ids)))


@click.command("release")
@click.option("--db", "db_url")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="central.toml (instead of --db).")
@click.option("--at", help="When the office decided (ISO 8601 with offset). Default: now.")
@click.option("--note", required=True, help="Who reviewed it and why (1-255 characters).")
@click.argument("statement_ids", nargs=-1, required=True)
def release_cmd(db_url, config_path, at, note, statement_ids):
    """Release statements on hold (EARLY_EXIT, RULES.md P): paid as computed. Unknown, paid or
    not-held ids: error, nothing changed."""
    from central.pay.statements_store import release_holds  # lazy: CLI start-up

    released_at = at_arg(at)
    ids = unique_ids(statement_ids)
    on_ledger(db_url, config_path, lambda engine: release_holds(engine, ids, released_at, note))
    click.echo(tr("cli.pay.released", n=len(ids)))
