"""``portgate pay verify-slip``: check a payslip PDF against the ledger (``central.pay.verify_slip``).
Changes when how a slip is verified from the command line, or where its key is read, changes."""

from __future__ import annotations

import click

from central.cli_args import db_url_arg
from portgate.clitext import refusal, tr
from portgate.errors import ConfigError


@click.command("verify-slip")
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
        from central.web.cli import central_config, slip_key  # lazy: CLI start-up

        config = central_config(config_path)
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
        click.echo(tr("cli.pay.slip_failed", pdf=pdf, problem=refusal(problem)), err=True)
    if not verdict.ok:
        return 1
    click.echo(tr("cli.pay.slips_verified", pdf=pdf, n=verdict.slips))
    return 0
