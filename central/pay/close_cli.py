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

from central.cli_args import database_arg, day_range, db_url_arg
from central.pay.cli_rows import warn_lost
from central.pay.cli_setup import at_arg, by_arg, login, setup_and_rulebook


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
    click.echo(json.dumps(close_counts(done, first, last, rulebook.id), ensure_ascii=False))
    warn_lost(done.run.saved)


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
