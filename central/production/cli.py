"""``portgate production``: pay gangs from the office's CSV files (rules E1-E8, C1-C6), import the
results into the ledger in one transaction, and compute the monthly minimum top-up (C6).

    portgate production pay --rulebook dl-2032-1940 --gang gang.csv --tally tally.csv \\
        --tariffs tariffs.csv [--interruptions interruptions.csv] [--disputes disputes.csv] \\
        [--format json|csv] [--tz America/Sao_Paulo] [--lang pt-BR|en]
    portgate production import --db sqlite:///ledger.db (same inputs as pay)

With a ledger (``--ledger URL``; ``import`` reads its own ``--db``), a member's minutes worked come
from his gate taps when they exist (the typed figure becomes a correction, its difference on the
statement) and a registration on two ships at once is flagged DOUBLE_ASSIGNMENT
(``central.production.gate``).
    portgate production topup --db URL --rulebook dl-3844-1941 --month 2026-03 --minimums minimums.csv

Bad input exits with status 2 and a message naming every bad row; nothing is written.
"""

from __future__ import annotations

import datetime as dt

import click

from central.cli_args import db_url_arg
from central.production import csvio, render
from central.production.engine import monthly_top_up, pay_gangs
from central.production.fromledger import ledger_checks, noted
from central.production.gate import from_gate
from central.production.rulebook import find_rulebook
from portgate.clitext import cli_lang, tr, use_lang_of
from portgate.errors import BadInput
from portgate.timeutil import zone

FORMATS = click.Choice(["json", "csv"])


def _lang_default() -> str:
    """``--lang`` when not given: the command line's language as the other commands read it
    (``portgate --lang en|pt``, else ``PORTGATE_LANG``, else pt-BR), in production's own values."""
    return "en" if cli_lang() == "en" else "pt-BR"


#: production's ``--lang`` (statement lines' descriptions, the CSV's summary and totals, messages)
LANG_OPTION = dict(type=click.Choice(["pt-BR", "en"]), default=_lang_default,
                   show_default="portgate --lang, else PORTGATE_LANG, else pt-BR")


def _inputs(fn):
    options = [
        click.option("--rulebook", required=True, help="Rulebook id (dl-2032-1940, dl-3844-1941) or a .toml path."),
        click.option("--rulebook-dir", type=click.Path(file_okay=False), default=None,
                     help="Directory of rulebooks (default: config/rulebooks)."),
        click.option("--gang", "gang_csv", required=True, type=click.Path(dir_okay=False), help="gang.csv"),
        click.option("--tally", "tally_csv", required=True, type=click.Path(dir_okay=False), help="tally.csv"),
        click.option("--tariffs", "tariffs_csv", required=True, type=click.Path(dir_okay=False), help="tariffs.csv"),
        click.option("--interruptions", "interruptions_csv", type=click.Path(dir_okay=False), default=None),
        click.option("--disputes", "disputes_csv", type=click.Path(dir_okay=False), default=None),
        click.option("--tz", default="America/Sao_Paulo", show_default=True, help="The port's time zone."),
        click.option("--lang", **LANG_OPTION),
        click.option("--composition", "composition_toml", type=click.Path(dir_okay=False), default=None,
                     help="Gang composition table (default: config/gang-composition.toml)."),
        click.option("--ledger", "ledger_url", default=None,
                     help="Ledger database URL whose gate taps give the members' minutes worked and "
                          "the DOUBLE_ASSIGNMENT check (import: default --db)."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def _compute(rulebook, rulebook_dir, gang_csv, tally_csv, tariffs_csv, interruptions_csv, disputes_csv, tz, lang,
             composition_toml=None, ledger_url=None):
    from central.production.composition import load_composition  # lazy: CLI start-up

    use_lang_of(click.get_current_context())

    tz = zone(tz, key="--tz")
    book = find_rulebook(rulebook, rulebook_dir)
    composition = load_composition(composition_toml)
    errors = []
    tariffs = works = None
    try:
        tariffs = csvio.read_tariffs(tariffs_csv)
    except BadInput as exc:
        errors.append(str(exc))
    try:
        works = csvio.read_gang_work(gang_csv, tally_csv, interruptions_csv, disputes_csv, tz=tz)
    except BadInput as exc:
        errors.append(str(exc))
    if errors:
        raise BadInput("\n".join(errors))
    on_stored: list[tuple[int, str]] = []
    if ledger_url:
        from central.db import make_engine  # lazy: CLI start-up

        db_url_arg(ledger_url, must_exist=True, name="--ledger")
        engine = make_engine(ledger_url)
        try:
            checks = ledger_checks(engine, works, tz)
        finally:
            engine.dispose()
        works, notes, on_stored = checks.works, checks.notes, checks.on_stored
    else:
        works, notes = from_gate(works, [], tz)  # R10 within the files: no gate shifts
    results = pay_gangs(works, book, tariffs, lang=lang, composition=composition)
    return works, [noted(r, notes.get(r.summary.gang_id, ())) for r in results], on_stored





@click.group()
def production() -> None:
    """Production pay of stevedores (E1-E8, DL 2.032/1940) and dock workers (C1-C6, DL 3.844/1941)."""


@production.command("pay")
@_inputs
@click.option("--format", "fmt", type=FORMATS, default="json", show_default=True)
def pay_cmd(fmt: str, **kwargs) -> None:
    """Print per-member statement lines, the gang summary and the shipowner's billing lines."""
    _works, results, _on_stored = _compute(**kwargs)
    text = (render.to_json(results) if fmt == "json"
            else render.to_csv(results, lang=kwargs["lang"], tz=zone(kwargs["tz"], key="--tz")))
    click.echo(text, nl=fmt == "json")


@production.command("import")
@_inputs
@click.option("--db", required=True, help="Ledger database URL (sqlite:///ledger.db, postgresql+psycopg://...).")
def import_cmd(db: str, **kwargs) -> None:
    """Compute and store every gang of the files in one transaction (all or nothing)."""
    from central.db import make_engine  # lazy: CLI start-up
    from central.production.store import ensure_tables, import_results  # lazy: CLI start-up

    db_url_arg(db, must_exist=True)  # a wrong --db must not start a stray ledger
    kwargs["ledger_url"] = kwargs.get("ledger_url") or db
    works, results, on_stored = _compute(**kwargs)
    engine = make_engine(db)
    try:
        ensure_tables(engine)
        ids = import_results(engine, list(zip(works, results, strict=True)),
                             imported_at=dt.datetime.now(dt.UTC), source="csv", on_stored=on_stored)
    finally:
        engine.dispose()
    click.echo(tr("cli.production.imported", n=len(ids), gangs=", ".join(w.gang_id for w in works)))


@production.command("topup")
@click.option("--db", required=True)
@click.option("--rulebook", required=True)
@click.option("--rulebook-dir", type=click.Path(file_okay=False), default=None)
@click.option("--month", required=True, help="YYYY-MM")
@click.option("--minimums", "minimums_csv", required=True, type=click.Path(dir_okay=False),
              help="CSV: registration, monthly_minimum (BRL)")
@click.option("--lang", **LANG_OPTION)
def topup_cmd(db, rulebook, rulebook_dir, month, minimums_csv, lang) -> None:
    """C6: print the monthly-minimum top-up line of each worker whose month fell short (CSV)."""
    from central.db import make_engine  # lazy: CLI start-up
    from central.production.store import ensure_tables, month_lines  # lazy: CLI start-up

    book = find_rulebook(rulebook, rulebook_dir)
    try:
        first = dt.date.fromisoformat(f"{month}-01")
    except ValueError as exc:
        raise BadInput(f"month {month!r} is not YYYY-MM") from exc
    version = book.version_for(first)
    minimums = csvio.read_minimums(minimums_csv)
    db_url_arg(db, must_exist=True)  # a new, empty ledger would top every worker up to the whole minimum
    engine = make_engine(db)
    try:
        ensure_tables(engine)
        lines = month_lines(engine, book.id, month)
    finally:
        engine.dispose()
    click.echo("registration,rule,article,description,amount")
    for registration, minimum in minimums:
        line = monthly_top_up(registration, month, lines.get(registration, []), minimum, version, lang=lang)
        if line is not None:
            click.echo(f'{registration},{line.rule},"{line.article}","{line.description}",{line.amount}')


