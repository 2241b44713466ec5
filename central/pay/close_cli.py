"""``portgate pay close``: close work days (rebuild the shifts, store their statements, skip the
unchanged workers; ``central.pay.close``), with a progress bar of its steps on stderr
(``step_bar``) and one JSON line of counts (``close_counts``). Changes when the close's options,
progress or counts line change."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Iterator

import click

from central.cli_args import database_arg, day_range, db_url_arg, sqlite_dir_writable
from central.pay.cli_rows import warn_lost
from central.pay.cli_setup import at_arg, by_arg, login, setup_and_rulebook
from portgate import l10n
from portgate.clitext import cli_lang, tr
from portgate.interrupts import Interrupts, exit_status


@contextlib.contextmanager
def step_bar(label: str, forced: bool) -> Iterator[Callable[[str], None] | None]:
    """A progress bar of the close's steps (``central.pay.close.STEPS``) on stderr
    (``click.progressbar``: position and the step just done, named in the command line's language
    by the caller), yielding the callable to tell it a step is done (``None``: no bar). On a terminal the
    bar is redrawn in place; elsewhere only with ``forced`` (``--progress``): the label, then one
    line per step. Nothing is written to stdout."""
    from central.pay.close import STEPS  # lazy: CLI start-up

    err = sys.stderr
    tty = err.isatty()
    if not (tty or forced):
        yield None
        return
    with click.progressbar(length=len(STEPS), label=label, file=err, show_eta=False, show_pos=True,
                           item_show_func=lambda name: name) as bar:
        def step(name: str) -> None:
            bar.update(1, name)
            if not tty:  # click draws only the label where it is not a terminal
                click.echo(bar.format_progress_line(), file=err)
        yield step


@click.command("close")
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
    from central.pay.close import close_month  # lazy: CLI start-up

    by = by_arg(by)
    _port, rulebook, calendar = setup_and_rulebook(port_config, rulebook_name)
    reference = at_arg(at)
    db_url = database_arg(db_url, config_path)
    first, last = day_range(date_from, date_to)
    db_url_arg(db_url, must_exist=True)
    with Interrupts() as stop:  # SIGTERM as Ctrl-C from here on
        engine = ledger_engine(db_url)
        try:
            try:
                if at is not None:
                    _at_after_taps(engine, reference, first, last, calendar.zone)
                with step_bar(tr("cli.pay.close_bar"), show_progress) as bar:
                    done = close_month(engine, first, last, calendar.zone, rulebook, calendar, now=reference,
                                       by=by or login(), reason=reason, progress=_told(bar, stop))
            finally:  # inside the ``except``: a second interrupt while the pool closes is reported alike
                engine.dispose()
        except KeyboardInterrupt as exc:
            if not stop.committed:  # nothing committed: rolled back, ``app.cli.main`` says "aborted"
                raise
            lang = cli_lang()  # the statements are stored: not "aborted"
            click.echo(tr("cli.pay.close_stored_interrupted", first=l10n.day(first, lang), last=l10n.day(last, lang)),
                       err=True)
            raise click.exceptions.Exit(exit_status(exc)) from exc
        click.echo(json.dumps(close_counts(done, first, last, rulebook.id), ensure_ascii=False))
        warn_lost(done.run.saved)
    if stop.got is not None:
        click.echo(tr("cli.pay.close_interrupt_after"), err=True)


def ledger_engine(db_url: str):
    """The engine of the existing ledger at ``db_url`` (``pay --db``, ``pay close``), upgraded to the
    newest revision: a SQLite file whose directory takes no journal file is refused
    (``sqlite_dir_writable``), and so is a database that holds no portgate ledger (empty, or other
    tables), before anything is written (``migrate.existing_ledger``: make one with ``portgate
    ledger migrate``)."""
    from central.db import make_engine  # lazy: CLI start-up
    from central.ledger.migrate import existing_ledger, upgrade  # lazy: CLI start-up

    sqlite_dir_writable(db_url, name="--db")  # first: a WAL ledger is not even read there
    existing_ledger(db_url)
    upgrade(db_url)
    return make_engine(db_url)


def _at_after_taps(engine, at, first, last, zone) -> None:
    """Refuse (``BadInput`` naming ``--at``, exit 2, before anything is written) an ``--at`` earlier than the last tap stored in the closed work days (from 00:00 of
    ``first`` to 00:00 after ``last`` in the port's zone): a statement is computed after the work
    it pays, not before (docs/pay.md). A database failure: ``central.db.read_failure``."""
    import datetime as dt  # lazy: CLI start-up

    from sqlalchemy import func, select  # lazy: CLI start-up
    from sqlalchemy.exc import SQLAlchemyError  # lazy: CLI start-up

    from central.db import read_failure  # lazy: CLI start-up
    from central.ledger.schema import events  # lazy: CLI start-up
    from portgate.errors import BadInput  # lazy: CLI start-up

    lo = dt.datetime.combine(first, dt.time(), zone).astimezone(dt.UTC)
    hi = dt.datetime.combine(last + dt.timedelta(days=1), dt.time(), zone).astimezone(dt.UTC)
    c = events.c
    try:
        with engine.connect() as conn:
            latest = conn.execute(select(func.max(c.occurred_at)).where(
                c.type == "tap", c.occurred_at >= lo, c.occurred_at < hi)).scalar()
    except SQLAlchemyError as exc:
        raise read_failure(engine.url.render_as_string(hide_password=True), engine.dialect.name, exc) from exc
    if latest is not None and latest.tzinfo is None:  # SQLite hands back naive UTC
        latest = latest.replace(tzinfo=dt.UTC)
    if latest is not None and at < latest:
        raise BadInput(f"{at.isoformat()} is before the last tap of the closed days ({latest.isoformat()}): a "
                       f"statement is computed after the work it pays; give a later --at or leave it out (now)",
                       where="--at")


def _told(bar: Callable[[str], None] | None, stop: Interrupts) -> Callable[[str], None]:
    """``close_month``'s progress callback: the step in the bar in the command line's language; from
    the statements' commit on (``STEPS[6]`` is told just before it) the next interrupt held
    (``Interrupts.hold``) so that the close is stored and reported, not called aborted, and
    ``committed`` set once they are (``STEPS[7]``)."""
    from central.pay.close import STEPS  # lazy: CLI start-up

    texts = dict(zip(STEPS, step_texts(), strict=True))

    def told(name: str) -> None:
        if name == STEPS[6]:  # told just before the statements' COMMIT: an interrupt waits for it
            stop.hold()
        elif name == STEPS[7]:  # after it
            stop.committed = True
        if bar is not None:
            bar(texts[name])
    return told


def step_texts() -> tuple[str, ...]:
    """The names of ``central.pay.close.STEPS`` in the command line's language, in their order."""
    return (tr("cli.pay.close_step_taps"), tr("cli.pay.close_step_inputs"), tr("cli.pay.close_step_checked"),
            tr("cli.pay.close_step_rebuilt"), tr("cli.pay.close_step_shifts"), tr("cli.pay.close_step_pay_inputs"),
            tr("cli.pay.close_step_paid"), tr("cli.pay.close_step_statements"), tr("cli.pay.close_step_digests"))


def close_counts(done, first, last, rulebook_id: str) -> dict:
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
