"""``portgate pay billing``: the billing statements per shipowner (P8 watchmen's transport, E7
stevedores' travel, C5 dock-work waits and meals) for a span of work days, stored P8 first, then
read with production's lines (``central.billing``) and printed as JSON lines or CSV. Changes when
what is billed, or how a billing statement is printed, changes."""

from __future__ import annotations

import datetime as dt
import json
import sys

import click

from central.cli_args import database_arg, day_range, db_url_arg
from central.pay.cli_setup import setup_and_rulebook
from central.pay.lines import money_str
from portgate import csvout


@click.command("billing")
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
    from central.pay.billing_store import read_shipowners  # lazy: CLI start-up

    first, last = day_range(date_from, date_to)
    owners = read_shipowners(shipowners_csv) if shipowners_csv else {}
    port, rulebook, _calendar = setup_and_rulebook(port_config, rulebook_name)
    db_url = database_arg(db_url, config_path)
    db_url_arg(db_url, must_exist=True)
    found = _store_and_read(db_url, rulebook, rulebook_name or port.rulebook, owners, first, last)
    if fmt == "json":
        _print_json(found, first, last)
    else:
        _print_csv(found, first, last)


def _store_and_read(db_url: str, rulebook, rulebook_file: str, owners: dict, first: dt.date,
                    last: dt.date) -> list:
    """Upgrade the ledger, store the watchmen's P8 billing of [first, last] and read every billing
    line of those days back as statements per shipowner (``billing_statements``). Raises
    ``FareNotSet`` naming ``rulebook_file`` when a trip is to be billed and the fare is not set."""
    from central.billing import read_billing  # lazy: CLI start-up
    from central.db import make_engine  # lazy: CLI start-up
    from central.ledger.migrate import upgrade  # lazy: CLI start-up
    from central.pay.billing import FareNotSet, billing_statements  # lazy: CLI start-up
    from central.pay.billing_store import store_watchmen_billing  # lazy: CLI start-up

    upgrade(db_url)
    engine = make_engine(db_url)
    try:
        try:
            store_watchmen_billing(engine, rulebook, first, last, now=dt.datetime.now(dt.UTC))  # P8
        except FareNotSet as exc:
            raise FareNotSet(f"{exc}; rulebook file: {rulebook_file}") from None
        return billing_statements(read_billing(engine, first, last), owners, first, last)
    finally:
        engine.dispose()


def _print_json(found: list, first: dt.date, last: dt.date) -> None:
    """One JSON line per shipowner: ``{shipowner, from, to, lines, total}``, amounts as strings."""
    for st in found:
        click.echo(json.dumps({
            "shipowner": st.shipowner, "from": first.isoformat(), "to": last.isoformat(),
            "lines": [{"rule": x.rule, "article": x.article, "ship": x.ship,
                       "work_day": x.work_day.isoformat(), "ref": x.ref, "registration": x.registration,
                       "description": x.description, "amount": money_str(x.amount)} for x in st.lines],
            "total": money_str(st.total)}, ensure_ascii=False))


def _print_csv(found: list, first: dt.date, last: dt.date) -> None:
    """CSV: a header, one row per billing line and a TOTAL row per shipowner."""
    writer = csvout.writer(sys.stdout, lineterminator="\n")
    writer.writerow(("shipowner", "work_day", "ship", "ref", "rule", "article", "description", "amount"))
    for st in found:
        for x in st.lines:
            writer.writerow((st.shipowner, x.work_day.isoformat(), x.ship, x.ref, x.rule, x.article,
                             x.description, money_str(x.amount)))
        writer.writerow((st.shipowner, "", "", "", "TOTAL", "", f"{first}..{last}", money_str(st.total)))
