"""``portgate pay``: watchmen's pay statements (rules P1-P7) from the ledger or from shifts.csv.

    portgate pay --config central.toml --from 2026-03-01 --to 2026-03-31 [--port-config port.toml] [--format csv]
                 [--rulebook ID|FILE] [--by WHO] [--reason TEXT]
    portgate pay --config central.toml --from D1 --to D2 --what-if ID|FILE
    portgate pay --db URL ...  (instead of --config; a password belongs in PGPASSFILE, not here)
    portgate pay --shifts shifts.csv --port-config port.toml [--format csv]
    portgate pay overdue --config central.toml|--db URL [--at ISO]
    portgate pay mark-paid --config central.toml|--db URL [--at ISO] [--ref TEXT] STATEMENT_ID...
    portgate pay release --config central.toml|--db URL --note TEXT [--at ISO] STATEMENT_ID...
    portgate pay reverse-paid --config central.toml|--db URL --reason TEXT STATEMENT_ID...
    portgate pay close --config central.toml|--db URL --from DATE --to DATE [--progress] [--by WHO] [--reason TEXT]
    portgate pay billing --config central.toml|--db URL --from DATE --to DATE [--port-config port.toml]
                         [--rulebook ID|FILE] [--shipowners shipowners.csv] [--format csv]

Output: one JSON line per statement line ``{registration, work_day, shift_id, rule, article,
amount}`` and a ``rule: "TOTAL"`` line per shift (with ``due_at`` and ``flags``, and ``hold`` when
the statement is on hold for the office's review: an EARLY_EXIT shift, RULES.md P and G9, paid as
computed once released; once released, ``released: {at, note, hold}`` instead); a held shift prints ``rule: "HELD"`` with ``amount: null`` and its reasons. ``--format csv`` prints the same columns.
Amounts are strings with two decimals. Bad input: a message naming the row, exit status 2.

Storing supersedes the current statement of a shift when the new one differs
(``central.pay.versions``, ``central.pay.versions_save``): stderr says how many were written, superseded and adjusted (paid).
``--what-if`` stores nothing and does not rebuild shifts: one JSON line per worker, shift and rule
``{registration, work_day, shift_id, rule, recorded, what_if, diff, changed}`` comparing the current
stored statements with the ones the other rulebook gives (``central.pay.whatif``).

This module is the group and its own run (pay a shifts.csv, pay from the ledger, what-if); the
sub-commands live beside it, each in its ``*_cli`` module: ``close_cli`` (``close``),
``payments_cli`` (``overdue``, ``mark-paid``, ``reverse-paid``, ``release``), ``billing_cli``
(``billing``), ``slips_cli`` (``verify-slip``). What they read from their options is
``cli_setup`` (``load_setup``, still importable from here), how statements are printed ``cli_rows``.
"""

from __future__ import annotations

import datetime as dt
import json
import sys

import click

from central.cli_args import database_arg, day_range, db_url_arg
from central.pay.billing_cli import billing_cmd
from central.pay.cli_rows import emit, held_row, statement_rows, warn_lost
from central.pay.cli_setup import load_setup  # noqa: F401 (re-exported: ledger, evidence, bench, tests)
from central.pay.cli_setup import by_arg, login, rulebook_arg, setup_and_rulebook
from central.pay.close_cli import close_cmd
from central.pay.payments_cli import mark_paid_cmd, overdue_cmd, release_cmd, reverse_paid_cmd
from central.pay.slips_cli import verify_slip_cmd
from portgate import csvout
from portgate.clitext import tr
from portgate.interrupts import Interrupts


@click.group(invoke_without_command=True)
@click.option("--db", "db_url", help="Ledger database URL (sqlite:///... or postgresql+psycopg://...).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False),
              help="central.toml: the ledger of its database_url (instead of --db).")
@click.option("--from", "date_from", help="First work day (YYYY-MM-DD), with --db.")
@click.option("--to", "date_to", help="Last work day (YYYY-MM-DD), with --db.")
@click.option("--shifts", "shifts_csv", type=click.Path(dir_okay=False),
              help="shifts.csv to pay instead of the ledger.")
@click.option("--port-config", help="Port TOML (state, holidays, rulebook). Default: the example.")
@click.option("--format", "fmt", type=click.Choice(["json", "csv"]), default="json")
@click.option("--no-rebuild", is_flag=True, help="Pay the stored shifts without rebuilding them.")
@click.option("--rulebook", "rulebook_name", help="Pay rulebook (file or id) instead of the port's.")
@click.option("--by", "by", help="Who runs the pay (kept on the statements). Default: the login.")
@click.option("--reason", help="Why pay is re-run (kept on each statement it supersedes).")
@click.option("--what-if", "what_if", help="Compare with this rulebook (file or id); store nothing.")
@click.pass_context
def pay(ctx, db_url, config_path, date_from, date_to, shifts_csv, port_config, fmt, no_rebuild,
        rulebook_name, by, reason, what_if):
    """Compute watchmen's pay statements (rules P1-P7) from the ledger or a shifts.csv."""
    if ctx.invoked_subcommand is not None:
        return
    by = by_arg(by)
    _port, rulebook, calendar = setup_and_rulebook(port_config, rulebook_name)
    if shifts_csv and what_if is not None:
        raise click.UsageError(tr("cli.pay.what_if_not_with_shifts"))
    if shifts_csv:
        _pay_shifts_csv(shifts_csv, rulebook, calendar, fmt)
        return
    if not ((db_url or config_path) and date_from and date_to):
        raise click.UsageError(tr("cli.pay.give_shifts_or_config"))
    db_url = database_arg(db_url, config_path)
    first, last = day_range(date_from, date_to)
    db_url_arg(db_url, must_exist=True)
    if what_if is not None:
        _what_if(db_url, first, last, what_if, calendar, fmt)
        return
    with Interrupts():  # SIGTERM rolls back as Ctrl-C does, with its line (exit 143)
        run, releases = _pay_ledger(db_url, first, last, rulebook, calendar, not no_rebuild, by or login(), reason)
    rows = [row for st in run.statements
            for row in statement_rows(st, releases.get(st.shift_id))]
    rows += [held_row(h.shift, h.reasons) for h in run.held]
    emit(rows, fmt)
    if run.saved is not None:
        s = run.saved
        click.echo(tr("cli.pay.stored", written=s.written, superseded=s.superseded, adjusted=s.adjusted,
                      unchanged=s.unchanged), err=True)
        warn_lost(s)


for _command in (billing_cmd, close_cmd, mark_paid_cmd, overdue_cmd, release_cmd, reverse_paid_cmd,
                 verify_slip_cmd):
    pay.add_command(_command)


def _pay_shifts_csv(shifts_csv: str, rulebook, calendar, fmt: str) -> None:
    """Pay the shifts of a shifts.csv (nothing stored) and print their statements and held shifts."""
    from central.pay.shifts_csv import pay_shifts_csv  # lazy: CLI start-up

    run = pay_shifts_csv(shifts_csv, rulebook, calendar, now=dt.datetime.now(dt.UTC))
    rows = [row for st in run.statements for row in statement_rows(st)]
    emit(rows + [held_row(h.shift, h.reasons) for h in run.held], fmt)


def _pay_ledger(db_url: str, first: dt.date, last: dt.date, rulebook, calendar, rebuild: bool, by: str,
                reason: str | None):
    """Upgrade the existing ledger (``close_cli.ledger_engine``: none made), rebuild the shifts of
    [first, last] (unless ``rebuild`` is false) and pay and store them (``pay_from_ledger``); returns the run and the office's releases of the holds
    of its held statements (``hold_releases``: shift id -> release)."""
    from central.ledger.store import rebuild_shifts  # lazy: CLI start-up
    from central.pay.close_cli import ledger_engine  # lazy: CLI start-up
    from central.pay.statements_store import hold_releases, pay_from_ledger  # lazy: CLI start-up
    from central.production.fromledger import shifts_against_gangs  # lazy: CLI start-up

    engine = ledger_engine(db_url)  # an existing ledger only, upgraded
    now = dt.datetime.now(dt.UTC)
    try:
        if rebuild:
            rebuild_shifts(engine, first, last, calendar.zone, now=now)
        run = pay_from_ledger(engine, first, last, rulebook, calendar, now=now,
                              by=by, reason=reason, shifts_check=shifts_against_gangs)
        held_ids = [st.shift_id for st in run.statements if st.hold_reason]
        releases = hold_releases(engine, held_ids) if held_ids else {}
    finally:
        engine.dispose()
    return run, releases


def _what_if(db_url: str, first, last, what_if: str, calendar, fmt) -> None:
    """Compare the stored statements of [first, last] with the ones the rulebook ``what_if`` gives
    (``pay_what_if``), storing nothing: one row per worker, shift and rule, the held shifts, and a
    stderr line of counts. A bad rulebook is refused before the ledger is opened; the ledger must
    exist at its current version (``require_ledger``: none made, none upgraded)."""
    from central.db import make_engine  # lazy: CLI start-up
    from central.ledger.migrate import require_ledger  # lazy: CLI start-up
    from central.pay.whatif import pay_what_if  # lazy: CLI start-up
    from central.production.fromledger import shifts_against_gangs  # lazy: CLI start-up

    rulebook = rulebook_arg(what_if, "--what-if")  # a bad rulebook first: nothing opened
    require_ledger(db_url)  # a what-if writes nothing: no ledger made, none upgraded
    engine = make_engine(db_url)
    now = dt.datetime.now(dt.UTC)
    try:
        result = pay_what_if(engine, first, last, rulebook, calendar, now=now, shifts_check=shifts_against_gangs)
    finally:
        engine.dispose()
    rows = result.rows
    if fmt == "json":
        for row in rows:
            click.echo(json.dumps(row, ensure_ascii=False))
    else:
        fields = ("registration", "work_day", "shift_id", "rule", "recorded", "what_if", "diff",
                  "changed")
        writer = csvout.dict_writer(sys.stdout, fields, lineterminator="\n",
                                extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    for shift, reasons in result.held:
        click.echo(json.dumps(held_row(shift, reasons), ensure_ascii=False))
    click.echo(tr("cli.pay.what_if", rulebook=rulebook.id, changed=result.changed, statements=result.statements),
               err=True)
