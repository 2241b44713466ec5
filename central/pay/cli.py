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
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import sys
from collections.abc import Callable, Iterator

import click

from central.cli_args import database_arg, day_range, db_url_arg, time_arg
from central.pay.cli_rows import emit, held_row, statement_rows, warn_lost
from central.pay.cli_setup import load_setup  # noqa: F401 (re-exported: ledger, evidence, bench, tests)
from central.pay.cli_setup import at_arg, by_arg, login, on_ledger, rulebook_arg, setup_and_rulebook
from central.pay.lines import money_str
from portgate import csvout
from portgate.clitext import tr
from portgate.errors import ConfigError


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
        from central.pay.shifts_csv import pay_shifts_csv  # lazy: CLI start-up

        run = pay_shifts_csv(shifts_csv, rulebook, calendar, now=dt.datetime.now(dt.UTC))
        rows = [row for st in run.statements for row in statement_rows(st)]
        emit(rows + [held_row(h.shift, h.reasons) for h in run.held], fmt)
        return
    if not ((db_url or config_path) and date_from and date_to):
        raise click.UsageError(tr("cli.pay.give_shifts_or_config"))
    db_url = database_arg(db_url, config_path)
    first, last = day_range(date_from, date_to)
    db_url_arg(db_url, must_exist=True)
    from central.ledger.migrate import require_ledger, upgrade  # lazy: CLI start-up
    from central.ledger.store import rebuild_shifts  # lazy: CLI start-up
    from central.pay.statements_store import pay_from_ledger  # lazy: CLI start-up
    from central.db import make_engine  # lazy: CLI start-up

    if what_if is not None:
        compare = rulebook_arg(what_if, "--what-if")  # a bad rulebook first: nothing opened
        require_ledger(db_url)  # a what-if writes nothing: no ledger made, none upgraded
    else:
        upgrade(db_url)
    engine = make_engine(db_url)
    now = dt.datetime.now(dt.UTC)
    if what_if is not None:
        try:
            _what_if(engine, first, last, compare, calendar, now, fmt)
        finally:
            engine.dispose()
        return
    try:
        if not no_rebuild:
            rebuild_shifts(engine, first, last, calendar.zone, now=now)
        from central.production.fromledger import shifts_against_gangs  # lazy: CLI start-up

        run = pay_from_ledger(engine, first, last, rulebook, calendar, now=now,
                              by=by or login(), reason=reason, shifts_check=shifts_against_gangs)
        from central.pay.statements_store import hold_releases  # lazy: CLI start-up

        held_ids = [st.shift_id for st in run.statements if st.hold_reason]
        releases = hold_releases(engine, held_ids) if held_ids else {}
    finally:
        engine.dispose()
    rows = [row for st in run.statements
            for row in statement_rows(st, releases.get(st.shift_id))]
    rows += [held_row(h.shift, h.reasons) for h in run.held]
    emit(rows, fmt)
    if run.saved is not None:
        s = run.saved
        click.echo(tr("cli.pay.stored", written=s.written, superseded=s.superseded, adjusted=s.adjusted,
                      unchanged=s.unchanged), err=True)
        warn_lost(s)


@contextlib.contextmanager
def step_bar(steps: tuple[str, ...], label: str, forced: bool) -> Iterator[Callable[[str], None] | None]:
    """A progress bar of ``steps`` on stderr (``click.progressbar``: position and the step just
    done), yielding the callable to tell it a step is done (``None``: no bar). On a terminal the
    bar is redrawn in place; elsewhere only with ``forced`` (``--progress``): the label, then one
    line per step. Nothing is written to stdout."""
    err = sys.stderr
    tty = err.isatty()
    if not (tty or forced):
        yield None
        return
    with click.progressbar(length=len(steps), label=label, file=err, show_eta=False, show_pos=True,
                           item_show_func=lambda name: name) as bar:
        def step(name: str) -> None:
            bar.update(1, name)
            if not tty:  # click draws only the label where it is not a terminal
                click.echo(bar.format_progress_line(), file=err)
        yield step


def _what_if(engine, first, last, rulebook, calendar, now, fmt) -> None:
    from central.pay.whatif import pay_what_if  # lazy: CLI start-up

    from central.production.fromledger import shifts_against_gangs  # lazy: CLI start-up

    result = pay_what_if(engine, first, last, rulebook, calendar, now=now, shifts_check=shifts_against_gangs)
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


@pay.command("close")
@click.option("--db", "db_url", help="Ledger database URL.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="central.toml (instead of --db).")
@click.option("--from", "date_from", required=True, help="First work day (YYYY-MM-DD).")
@click.option("--to", "date_to", required=True, help="Last work day (YYYY-MM-DD).")
@click.option("--port-config", help="Port TOML (state, holidays, rulebook). Default: the example.")
@click.option("--rulebook", "rulebook_name", help="Pay rulebook (file or id) instead of the port's.")
@click.option("--by", "by", help="Who runs the close (kept on the statements). Default: the login.")
@click.option("--reason", help="Why the month is closed again (kept on each statement it supersedes).")
@click.option("--at", help="Reference time (ISO 8601 with offset). Default: now.")
@click.option("--progress", "show_progress", is_flag=True,
              help="Show the progress on stderr even when it is not a terminal (one line per step). "
                   "On a terminal the bar is shown anyway.")
def close_cmd(db_url, config_path, date_from, date_to, port_config, rulebook_name, by, reason, at,
              show_progress):
    """Close work days [--from, --to]: rebuild the shifts and store their statements, skipping the
    workers whose events, corrections, rulebook and stored rows are unchanged since the last close
    of the same days (docs/ledger.md "Incremental month close"). Prints one JSON line of counts;
    a progress bar of the close's steps on stderr when it is a terminal (or with --progress).
    The watchmen's billing (P8) is `portgate pay billing`."""
    from central.db import make_engine  # lazy: CLI start-up
    from central.ledger.migrate import upgrade  # lazy: CLI start-up
    from central.pay.close import STEPS, close_month  # lazy: CLI start-up

    by = by_arg(by)
    _port, rulebook, calendar = setup_and_rulebook(port_config, rulebook_name)
    reference = at_arg(at)
    db_url = database_arg(db_url, config_path)
    first, last = day_range(date_from, date_to)
    db_url_arg(db_url, must_exist=True)
    upgrade(db_url)
    engine = make_engine(db_url)
    try:
        with step_bar(STEPS, "fechando o mês / closing the month", show_progress) as step:
            done = close_month(engine, first, last, calendar.zone, rulebook, calendar, now=reference,
                               by=by or login(), reason=reason, progress=step)
    finally:
        engine.dispose()
    click.echo(json.dumps(_close_counts(done, first, last, rulebook.id), ensure_ascii=False))
    warn_lost(done.run.saved)


def _close_counts(done, first, last, rulebook_id: str) -> dict:
    """The close's JSON line: its days and rulebook, what was rebuilt, paid, skipped, held, stored."""
    saved = done.run.saved
    return {
        "from": first.isoformat(), "to": last.isoformat(), "rulebook": rulebook_id,
        "workers": done.workers, "rebuilt": done.rebuilt, "shifts_skipped": done.shifts_skipped,
        "paid": done.paid, "pay_skipped": done.pay_skipped, "shifts": done.shifts,
        "statements": done.statements, "held": len(done.run.held) + (saved.on_hold if saved else 0),
        "stored_on_hold": saved.on_hold if saved else 0,
        "written": saved.written if saved else 0, "superseded": saved.superseded if saved else 0,
        "read": done.read,
    }


@pay.command("overdue")
@click.option("--db", "db_url")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="central.toml (instead of --db).")
@click.option("--at", help="Reference time (ISO 8601 with offset). Default: now.")
def overdue_cmd(db_url, config_path, at):
    """List unpaid statements past their due time (Lei 9.719 art. 2 §1: 48 h), one JSON line each."""
    from sqlalchemy.exc import SQLAlchemyError  # lazy: CLI start-up

    from central.db import make_engine, read_failure  # lazy: CLI start-up
    from central.pay.statements_store import overdue  # lazy: CLI start-up

    reference = at_arg(at)
    db_url = database_arg(db_url, config_path)
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


@pay.command("mark-paid")
@click.option("--db", "db_url")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="central.toml (instead of --db).")
@click.option("--at", help="When it was paid (ISO 8601 with offset). Default: now.")
@click.option("--ref", help="Payment reference (bank transfer id, payroll batch).")
@click.argument("statement_ids", nargs=-1, required=True)
def mark_paid_cmd(db_url, config_path, at, ref, statement_ids):
    """Mark statements paid. Unknown, already-paid or on-hold ids: error, nothing changed."""
    from central.pay.statements_store import mark_paid  # lazy: CLI start-up

    now = dt.datetime.now(dt.UTC)  # the office's clock, read here at the edge
    paid_at = time_arg(at, "--at") if at else now
    on_ledger(db_url, config_path, lambda engine: mark_paid(engine, list(statement_ids), paid_at, ref,
                                                             now=now, actor=f"cli:{login()}"))
    click.echo(tr("cli.pay.marked_paid", n=len(statement_ids)))


@pay.command("reverse-paid")
@click.option("--db", "db_url")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="central.toml (instead of --db).")
@click.option("--reason", required=True, help="Why the mark was a mistake, and who decided (1-255 characters).")
@click.argument("statement_ids", nargs=-1, required=True)
def reverse_paid_cmd(db_url, config_path, reason, statement_ids):
    """Reverse a mistaken mark-paid: the statements are unpaid again, and the audit log keeps the
    mark reversed and the reason (pay.reverse_paid). Unknown or unpaid ids: error, nothing changed."""
    from central.pay.statements_store import reverse_paid  # lazy: CLI start-up

    now = dt.datetime.now(dt.UTC)  # the office's clock, read here at the edge
    on_ledger(db_url, config_path, lambda engine: reverse_paid(engine, list(statement_ids), reason, at=now,
                                                                actor=f"cli:{login()}"))
    click.echo(tr("cli.pay.reversed", n=len(statement_ids)))


@pay.command("release")
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
    on_ledger(db_url, config_path, lambda engine: release_holds(engine, list(statement_ids), released_at, note))
    click.echo(tr("cli.pay.released", n=len(statement_ids)))


@pay.command("verify-slip")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, exists=True),
              help="central.toml: the ledger (database_url) and the payslip key ([web] slip_key_file).")
@click.option("--db", "db_url", help="Ledger database URL (instead of --config).")
@click.option("--key-file", type=click.Path(dir_okay=False, exists=True), help="Payslip key (instead of --config).")
@click.argument("pdf", type=click.Path(dir_okay=False, exists=True))
def verify_slip_cmd(config_path, db_url, key_file, pdf):
    """Check a payslip PDF (one slip or a batch) against the ledger: exit 0 when every slip's code
    and every page's printed text match the slips the ledger renders and the file holds nothing
    the renderer does not write (a second revision, annotations, actions, XObjects, drawings: docs/
    pay.md), 1 when one does not (each named), 2 for a file that is not a portgate payslip, one naming no slip (an empty period), a key
    file that is not a payslip key (32 bytes), or options other than exactly one of --config and
    --db with --key-file."""
    from central.db import make_engine  # lazy: CLI start-up
    from central.pay.verify_slip import read_key, verify  # lazy: CLI start-up

    if config_path and (db_url or key_file):
        raise ConfigError("give either --config central.toml or --db URL --key-file FILE, not both")
    if config_path:
        from central.web.cli import _config, slip_key  # lazy: CLI start-up

        config = _config(config_path)
        db_url, key = config.database_url, slip_key(config)
    elif db_url and key_file:
        key = read_key(key_file)
    else:
        raise ConfigError("give --config central.toml, or --db URL --key-file FILE")
    db_url_arg(db_url, must_exist=True)
    engine = make_engine(db_url)
    try:
        verdict = verify(pdf, engine, key)
    finally:
        engine.dispose()
    for problem in verdict.problems:
        click.echo(tr("cli.pay.slip_failed", pdf=pdf, problem=problem), err=True)
    if not verdict.ok:
        return 1
    click.echo(tr("cli.pay.slips_verified", pdf=pdf, n=verdict.slips))
    return 0


@pay.command("billing")
@click.option("--db", "db_url")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="central.toml (instead of --db).")
@click.option("--from", "date_from", required=True, help="First work day (YYYY-MM-DD).")
@click.option("--to", "date_to", required=True, help="Last work day (YYYY-MM-DD).")
@click.option("--shipowners", "shipowners_csv", type=click.Path(dir_okay=False),
              help="CSV ship,shipowner: who is billed for each ship (default: billed per ship).")
@click.option("--port-config", help="Port TOML (its rulebook sets the P8 fare). Default: the example.")
@click.option("--rulebook", "rulebook_name", help="Pay rulebook (file or id) instead of the port's.")
@click.option("--format", "fmt", type=click.Choice(["json", "csv"]), default="json")
def billing_cmd(db_url, config_path, date_from, date_to, shipowners_csv, port_config, rulebook_name, fmt):
    """Billing statements per shipowner for work days [--from, --to]: P8 watchmen's transport to an
    anchored ship (83.611 art. 27 sole paragraph), E7 stevedores' travel wages and transport (DL 2.032
    art. 16), C5 dock-work waits and meals + 10% (DL 3.844 art. 8), from the statements `portgate pay
    --db` and `portgate production import` stored. P8: one round trip per continuous stay aboard, at
    the rulebook's `anchorage_transport_fare`; a trip to bill with no fare set is refused (exit 2,
    naming the setting). JSON: one line per shipowner {shipowner, from, to, lines, total}; CSV: one
    row per line and a TOTAL row per shipowner."""
    from central.db import make_engine  # lazy: CLI start-up
    from central.ledger.migrate import upgrade  # lazy: CLI start-up
    from central.billing import read_billing  # lazy: CLI start-up
    from central.pay.billing import FareNotSet, billing_statements  # lazy: CLI start-up
    from central.pay.billing_store import read_shipowners, store_watchmen_billing  # lazy: CLI start-up

    first, last = day_range(date_from, date_to)
    owners = read_shipowners(shipowners_csv) if shipowners_csv else {}
    _port, rulebook, _calendar = setup_and_rulebook(port_config, rulebook_name)
    db_url = database_arg(db_url, config_path)
    db_url_arg(db_url, must_exist=True)
    upgrade(db_url)
    engine = make_engine(db_url)
    try:
        try:
            store_watchmen_billing(engine, rulebook, first, last, now=dt.datetime.now(dt.UTC))  # P8
        except FareNotSet as exc:
            raise FareNotSet(f"{exc}; rulebook file: {rulebook_name or _port.rulebook}") from None
        found = billing_statements(read_billing(engine, first, last), owners, first, last)
    finally:
        engine.dispose()
    if fmt == "json":
        for st in found:
            click.echo(json.dumps({
                "shipowner": st.shipowner, "from": first.isoformat(), "to": last.isoformat(),
                "lines": [{"rule": x.rule, "article": x.article, "ship": x.ship,
                           "work_day": x.work_day.isoformat(), "ref": x.ref, "registration": x.registration,
                           "description": x.description, "amount": money_str(x.amount)} for x in st.lines],
                "total": money_str(st.total)}, ensure_ascii=False))
        return
    writer = csvout.writer(sys.stdout, lineterminator="\n")
    writer.writerow(("shipowner", "work_day", "ship", "ref", "rule", "article", "description", "amount"))
    for st in found:
        for x in st.lines:
            writer.writerow((st.shipowner, x.work_day.isoformat(), x.ship, x.ref, x.rule, x.article,
                             x.description, money_str(x.amount)))
        writer.writerow((st.shipowner, "", "", "", "TOTAL", "", f"{first}..{last}", money_str(st.total)))
