"""``portgate registry``: workers, cards, sanctions (R4) and confiscation cases (G10).

Every command takes ``--config central.toml`` (its ``database_url``, password from
``database_password_file`` or PGPASSFILE) or ``--db URL``, one of them (no default database), and
``--actor NAME`` (who
makes the change, default the login name or ``$PORTGATE_ACTOR``: written on the audit log and on
every change row sent to the gates). A command either
commits everything it changed or nothing.
"""

from __future__ import annotations

import contextlib
import functools
import datetime as dt
import json

import click
from sqlalchemy.orm import Session

from central import db
from central.cli_args import FIRST_DAY, LAST_DAY, actor_arg, config_served, database_arg, db_url_arg, say_waiting  # noqa: F401 (importable here)
from central.registry import confiscation, store
from central.registry.changes import body
from portgate.clitext import cli_lang, tr
from portgate.l10n import day as day_text
from portgate.errors import BadInput
from portgate.uid import canonical_uid
from wire.topics import check_id

@contextlib.contextmanager
def transaction(url: str, *, existing: bool = True, served: tuple[str, ...] = ()):
    """A session in one transaction on ``url`` (migrated to the newest schema first); commit or roll
    back. ``existing``: the database must exist (a SQLite file that is missing is refused with
    ``BadInput`` naming ``--db``, not created empty and read as "no worker"); only the commands that
    register people (``import``, ``register``) may start a new one. ``served``: the ports of
    ``--config`` (home first): the ledger is checked against them in this transaction, before
    anything is written (``central.ledger.home.need_served``: a ledger this command has just made
    or migrated to 0034 gets its home port recorded too; ``PortsRefused`` rolls back)."""
    db_url_arg(url, must_exist=existing, refuse_empty=True)
    engine = db.make_engine(url)  # under a portgate command: stderr says why it waits (a failover)
    from central.ledger.migrate import upgrade_engine  # lazy: CLI start-up

    upgrade_engine(engine)
    try:
        with Session(engine) as session, session.begin():
            if served:
                from central.ledger.home import need_served  # lazy: CLI start-up (only with --config)

                need_served(session, served)
            yield session
    finally:
        engine.dispose()


def _login_name() -> str:
    import getpass  # lazy: CLI start-up

    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name (a container without passwd entry)
        return "unknown"


def common(fn=None, *, writes: bool = True, served: bool = False):
    """Add ``--actor``, ``--config`` and ``--db``; the command receives ``url`` (``database_arg``).
    ``@common`` for a command that changes the ledger: with ``--config``, a config that does not fit
    the ledger's ports refuses it; ``@common(writes=False)`` for one that only reads: told on stderr
    (``central.ledger.home.check_config``). ``served``: the command also receives ``served``, the
    ports of ``--config`` (home first; ``()`` with ``--db``: ``central.cli_args.config_served``)."""
    if fn is None:
        return functools.partial(common, writes=writes, served=served)

    @functools.wraps(fn)
    def with_database(*args, url, config_path, **kwargs):
        url = database_arg(url, config_path, writes=writes)
        if served:
            kwargs["served"] = config_served(config_path)
        return fn(*args, url=url, **kwargs)

    cmd = click.option("--actor", envvar="PORTGATE_ACTOR", default=_login_name, show_default="login name",
                       callback=actor_arg, help="Who makes the change (audit log); also $PORTGATE_ACTOR.")(with_database)
    cmd = click.option("--config", "config_path", type=click.Path(dir_okay=False),
                       help="central.toml: the office database of its database_url.")(cmd)
    return click.option("--db", "url", default=None,
                        help="Database URL (or --config). No password here: use PGPASSFILE.")(cmd)


def _port(_ctx, _param, value):
    """Click callback: a port id (``wire.topics.check_id``), or None."""
    if value is None:
        return None
    try:
        return check_id(value, "--port")
    except BadInput as exc:
        raise click.BadParameter(exc.reason) from None


def iso_date(_ctx, _param, value):
    """Click callback: ``YYYY-MM-DD`` -> date within the office's days ``FIRST_DAY..LAST_DAY``
    (2000-01-01..2100-12-31, as ``portgate pay``): 0001-01-01 and 9999-12-31 have no period bounds
    in UTC and no next month. Anything else is a one-line usage error naming the option."""
    if value is None:
        return None
    try:
        day = dt.date.fromisoformat(value)
    except ValueError as exc:
        raise click.BadParameter(tr("cli.args.not_a_day", value=repr(value))) from exc
    if not FIRST_DAY <= day <= LAST_DAY:
        raise click.BadParameter(tr("cli.args.day_outside", value=repr(value), first=FIRST_DAY, last=LAST_DAY))
    return day


@click.group("registry")
def registry() -> None:
    """Workers, cards, sanctions (R4) and confiscation cases (G10)."""


@registry.command("import")
@common(served=True)
@click.option("--workers", "workers_csv", type=click.Path(dir_okay=False), help="workers.csv")
@click.option("--cards", "cards_csv", type=click.Path(dir_okay=False), help="cards.csv")
@click.option("--port", default=None, callback=_port,
              help="Port of the workers.csv rows without a port cell (default: a new worker the home port).")
@click.option("--new-category", "new_categories", multiple=True,
              help="A category this import may open besides the known and registered ones, read as a category "
                   "cell (repeatable, at most 20; no comma, no formula character first).")
def import_cmd(url, actor, workers_csv, cards_csv, port, new_categories, served):
    """Import workers.csv and/or cards.csv, all or nothing (bad rows named by line). A worker's port
    (issue 37): his row's port cell, else --port, else his own (a new one: the home port,
    stored as such under a config of several ports)."""
    if not workers_csv and not cards_csv:
        raise click.UsageError(tr("cli.registry.give_workers_or_cards"))
    with transaction(url, existing=False, served=served) as session:
        counts = store.import_files(session, workers_csv=workers_csv, cards_csv=cards_csv,
                                    actor=actor, port=port, ports=store.PortScope(served=served),
                                    new_categories=tuple(new_categories))
    click.echo(store.import_summary(counts))


@registry.command()
@common
@click.argument("registration")
@click.option("--from", "start", required=True, callback=iso_date, help="First day (YYYY-MM-DD).")
@click.option("--days", type=int, required=True, help="Within the rulebook's limits (R4).")
@click.option("--reason", required=True)
@click.option("--article", default=None, help="Default: the rulebook's suspension article.")
@click.option("--case", "case_id", type=int, default=None, help="Confiscation case it decides.")
@click.option("--rulebook", "rulebook", type=click.Path(dir_okay=False), default=None,
              help="Rulebook TOML whose [suspension] limits apply. Default: the port config's rulebook.")
@click.option("--port-config", default=None, help="Port TOML naming the rulebook. Default: the example.")
def suspend(url, actor, registration, start, days, reason, article, case_id, rulebook, port_config):
    """Suspend a registration for N days from a date (effective at the gates on that date). The
    allowed length is the rulebook's (R4): up to 30 days under decreto-83611-1979 (art. 21 a), 1-30
    under dl-2032-1940 (art. 30), 10-30 for a rulebook with none (Lei 12.815 art. 33)."""
    from central.registry.sanctions import load_suspension_limits  # lazy: CLI start-up

    if rulebook is None:
        from central.pay.loading import DEFAULT_PORT_CONFIG, load_port_config  # lazy: CLI start-up

        rulebook = load_port_config(port_config or DEFAULT_PORT_CONFIG).rulebook
    _book, limits = load_suspension_limits(rulebook)
    with transaction(url) as session:
        w = store.suspend(session, registration, start=start, days=days, reason=reason,
                          article=article or limits.article, actor=actor, case_id=case_id,
                          limits=limits)
    lang = cli_lang()
    click.echo(tr("cli.registry.suspended", registration=w.registration, start=day_text(w.suspended_from, lang),
                  end=day_text(w.suspended_until, lang)))


@registry.command()
@common
@click.argument("registration")
@click.option("--on", "on", required=True, callback=iso_date, help="Effective date.")
@click.option("--reason", required=True)
@click.option("--article", default="83.611 art. 21 b", show_default=True)
@click.option("--case", "case_id", type=int, default=None)
def cancel(url, actor, registration, on, reason, article, case_id):
    """Cancel a registration (R4)."""
    with transaction(url) as session:
        store.cancel(session, registration, on=on, reason=reason, article=article, actor=actor,
                     case_id=case_id)
    click.echo(tr("cli.registry.cancelled", registration=registration, day=day_text(on, cli_lang())))


@registry.command("replace-card")
@common
@click.argument("uid")
@click.option("--new-uid", required=True)
def replace_card(url, actor, uid, new_uid):
    """Replace a card (active, lost or confiscated) by a new one of the same kind and holder."""
    with transaction(url) as session:
        new = store.replace_card(session, canonical_uid(uid), new_uid, actor=actor)
    click.echo(tr("cli.registry.replaced", uid=uid, new=new.uid, kind=new.kind.value, registration=new.registration))


@registry.command()
@common
@click.argument("uid")
def lost(url, actor, uid):
    """Report a card lost: it is blocked at every gate."""
    with transaction(url) as session:
        store.transition_card(session, canonical_uid(uid), "lost", actor=actor,
                              now=store.utcnow())
    click.echo(tr("cli.registry.lost", uid=uid))


@registry.command("return-card")
@common
@click.argument("uid")
@click.option("--decision", required=True, help="The labour office's decision, for the case.")
def return_card(url, actor, uid, decision):
    """Return a confiscated card: active again at every gate, its cases closed."""
    with transaction(url) as session:
        confiscation.return_card(session, canonical_uid(uid), decision=decision, actor=actor)
    click.echo(tr("cli.registry.returned", uid=uid))


@registry.command("list")
@common(writes=False)
@click.option("--what", type=click.Choice(["workers", "cards", "record"]), default="workers",
              show_default=True)
@click.option("--registration", default=None, help="One worker (workers), their cards, their record.")
@click.option("--category", default=None)
def list_cmd(url, actor, what, registration, category):
    """List workers, cards, or one worker's registration record (JSON lines)."""
    with transaction(url) as session:
        if what == "workers":
            rows = [body(w) for w in store.list_workers(session, category, registration)]
        elif what == "cards":
            rows = [body(c) for c in store.list_cards(session, registration)]
        else:
            if not registration:
                raise click.UsageError(tr("cli.registry.record_needs_registration"))
            rows = store.record_of(session, registration)
    for row in rows:
        click.echo(json.dumps(row, default=str, ensure_ascii=False))


@registry.command()
@common(writes=False)
@click.option("--status", type=click.Choice(["open", "closed"]), default=None)
def cases(url, actor, status):
    """List confiscation cases (JSON lines)."""
    with transaction(url) as session:
        rows = confiscation.list_cases(session, status)
    for row in rows:
        click.echo(json.dumps(row, default=str, ensure_ascii=False))


@registry.command("case-report")
@common(writes=False)
@click.argument("case_id", type=int)
def case_report(url, actor, case_id):
    """Print the report of one case for the labour office (DTM)."""
    with transaction(url) as session:
        click.echo(confiscation.case_report(session, case_id), nl=False)


@registry.command()
@common
@click.argument("registration")
@click.option("--date", "exam_date", required=True, callback=iso_date)
def exam(url, actor, registration, exam_date):
    """Record a health exam (G3: valid 24 months)."""
    with transaction(url) as session:
        store.record_health_exam(session, registration, exam_date=exam_date, actor=actor)
    click.echo(tr("cli.registry.health_exam", registration=registration, day=day_text(exam_date, cli_lang())))


@registry.command()
@common
@click.argument("registration")
@click.option("--year", type=int, required=True)
def booklet(url, actor, registration, year):
    """Record the yearly booklet revalidation (G3)."""
    with transaction(url) as session:
        store.revalidate_booklet(session, registration, year=year, actor=actor)
    click.echo(tr("cli.registry.booklet", registration=registration, year=year))


@registry.command()
@common(served=True)
@click.option("--workers", "workers_csv", required=True, type=click.Path(dir_okay=False),
              help="workers.csv of the new registrations")
@click.option("--admissions", "admissions_csv", required=True, type=click.Path(dir_okay=False),
              help="admissions.csv: birth date, nationality, registration date, evidence per condition")
@click.option("--port", default=None, callback=_port,
              help="Port of the workers.csv rows without a port cell (default: the home port).")
def register(url, actor, workers_csv, admissions_csv, port, served):
    """Register new workers with their admission evidence (83.611 art. 15; DL 2.032 art. 5 §1-§3).
    A registration missing a condition is refused with the article; nothing is written."""
    from central.registry.admission_store import register as do_register  # lazy: CLI start-up

    with transaction(url, existing=False, served=served) as session:
        n = do_register(session, workers_csv=workers_csv, admissions_csv=admissions_csv, actor=actor, port=port,
                        served=served)
    click.echo(tr("cli.registry.registered", n=n))


@registry.command("admissions")
@common(writes=False)
def admissions_cmd(url, actor):
    """Report the foreigners' share of the stevedore registry (DL 2.032 art. 5 §3: at most one
    third) and the admission records per category (JSON)."""
    from central.registry.admission_store import admissions_report  # lazy: CLI start-up

    with transaction(url) as session:
        click.echo(json.dumps(admissions_report(session), ensure_ascii=False))
