"""``portgate demo`` command."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

import click

from app.demo.scenario import DEFAULT_DIR, Scenario
from portgate.clitext import tr, use_lang


@click.command("demo")
@click.option("--run-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where the broker, ledger, gate state and logs go (default: run/demo-<time>).")
@click.option("--scenario", "scenario_dir", type=click.Path(file_okay=False, exists=True, path_type=Path),
              default=DEFAULT_DIR, show_default=True, help="Directory with the scripted day.")
@click.option("--lang", type=click.Choice(["pt", "en"]), default="pt", show_default=True,
              help="Language of the watchman's messages.")
@click.option("--no-outage", is_flag=True, help="Do not stop the broker in the middle of the day.")
@click.option("--keep-serving", is_flag=True,
              help="Keep the office web application up after the reconciliation, until Ctrl-C.")
@click.option("--cluster", is_flag=True,
              help="Play the day for two ports at once on 3 NATS nodes and a Patroni ledger "
                   "(3 etcd, 3 PostgreSQL) on loopback instead of mosquitto + SQLite (docs/operations.md).")
def demo(run_dir: Path | None, scenario_dir: Path, lang: str, no_outage: bool, keep_serving: bool,
         cluster: bool) -> None:
    """Play a whole port day on this machine: a private mosquitto, the office (ingest + SQLite
    ledger) and two gates on two ships with real readers (serial RFID on pseudo-terminals; PC/SC via
    pcscd + vpcd with a virtual card). Shows each decision as the watchman sees it, then the
    reconciliation and the day's pay statements. The office web application runs on a free loopback
    port meanwhile (URL and login printed). Exit status 0 only if all of it is right."""
    from app.demo.run import run_demo

    use_lang(lang)  # the console speaks the run's language, as its gates
    scenario = Scenario(scenario_dir)
    if run_dir is None:
        run_dir = Path("run") / f"demo-{dt.datetime.now():%Y%m%d-%H%M%S}"
    if run_dir.exists() and any(run_dir.iterdir()):
        # A day is played on fresh gates and a fresh ledger: old state would decide differently.
        raise click.BadParameter(tr("cli.demo.run_dir_not_empty", path=run_dir), param_hint="--run-dir")
    if cluster:
        from app.demo.cluster import ClusterUnavailable, run_cluster_demo

        try:
            status = run_cluster_demo(run_dir.resolve(), scenario, lang=lang, out=lambda text: click.echo(text),
                                      keep_serving=keep_serving)
        except ClusterUnavailable as exc:
            raise click.ClickException(str(exc)) from None
        sys.exit(status)
    status = run_demo(run_dir.resolve(), scenario, lang=lang, outage=not no_outage,
                      out=lambda text: click.echo(text), keep_serving=keep_serving)
    sys.exit(status)
