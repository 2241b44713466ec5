"""The ``portgate`` command. Sub-commands live in their own modules and are imported lazily, so a
gate does not import the office's database code and vice versa.

To add a command: write a ``click.Command`` or ``click.Group`` in its module and add one line to
``COMMANDS`` (name -> "module:attribute"). ``GROUP_COMMANDS`` adds commands of this layer to a group
of a lower one (``edge check-config``), since a lower layer never imports ``app``.
"""

from __future__ import annotations

import sys

from portgate import startup_stop

startup_stop.catch(sys.argv[1:])  # `edge run`: a stop during the imports below is a clean stop (exit 0)

import importlib  # noqa: E402
from gettext import gettext as click_text  # noqa: E402  what Click calls: its texts are msgids click.<English>

import click  # noqa: E402

from portgate.clitext import (LANG_CHOICES, cli_lang, help_words, install_click_texts, lang_in_args, tr, use_lang,
                               use_refusal_words)
from portgate.errors import PortgateError
from portgate.interrupts import exit_status, keep_held_to_the_end

install_click_texts()  # Click's own "Usage:", "No such option", "Missing argument", and --help in cli_lang()

COMMANDS: dict[str, tuple[str, str]] = {
    # name: ("module:attribute", one-line help shown in `portgate --help`)
    "demo": ("app.demo.cli:demo", "Run a whole port day on this machine (real broker, readers)."),
    "edge": ("edge.cli:edge", "Run or inspect a gate (the gangway device)."),
    "replay": ("app.whatif:replay", "Replay taps.csv, or a past day from the ledger (what-if), through the gate rules."),
    "central": ("central.cli:central", "Run the office: MQTT ingest into the ledger."),
    "ledger": ("central.ledger.cli:ledger", "Ledger database: migrate, shifts, reconciliation."),
    "pay": ("central.pay.cli:pay", "Compute watchmen's pay statements (rules P1-P7)."),
    "production": ("central.production.cli:production", "Stevedore / dock-work production pay (E, C)."),
    "registry": ("central.registry.cli:registry", "Workers, cards, sanctions (R4)."),
    "rotation": ("central.rotation.cli:rotation", "Rotation (rodízio) and the daily escala (R1-R6)."),
    "crew": ("central.inspection.cli:crew", "Crew hours book (K1-K5) and foreign-crew share (N1-N6)."),
    "office": ("central.web.cli:office", "Office web application: serve it, its users, ship calls."),
    "wire": ("wire.cli:wire", "Wire contract: regenerate JSON Schemas and the AsyncAPI document."),
    "evidence": ("central.evidence.cli:evidence", "Evidence bundles for a labour court: export, verify."),
}

GROUP_COMMANDS: dict[str, tuple[str, ...]] = {
    # group name: ("module:attribute", ...) commands added to that group when it is loaded
    "edge": ("app.checkconfig:gate_check_config",),
    "central": ("app.checkconfig:central_check_config",),
}


def _load(target: str):
    module_name, attr = target.split(":")
    return getattr(importlib.import_module(module_name), attr)


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        target, _help = COMMANDS[name]
        module_name, attr = target.split(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and module_name.startswith(exc.name):
                return _unavailable(name, target)
            raise
        command = getattr(module, attr)
        for extra in GROUP_COMMANDS.get(name, ()):
            sub = _load(extra)
            command.add_command(sub, sub.name)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, help_words(COMMANDS[name][1])) for name in sorted(COMMANDS)]
        with formatter.section(click_text("Commands")):  # Click's own word, in cli_lang()
            formatter.write_dl(rows)


def _unavailable(name: str, target: str) -> click.Command:
    @click.command(name=name, context_settings={"ignore_unknown_options": True})
    @click.argument("args", nargs=-1, type=click.UNPROCESSED)
    def cmd(args: tuple[str, ...]) -> None:
        raise click.ClickException(tr("cli.unavailable", name=name, target=target))

    return cmd


def _top_lang(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    """``portgate --lang en pay ...``: every command's messages (``main`` read it already); the
    commands with their own ``--lang`` (the demo's console and gates, the replays) take it as default."""
    if value:
        use_lang(value)
        short = "en" if value == "en" else "pt"
        ctx.default_map = {"demo": {"lang": short}, "replay": {"lang": short}, "edge": {"replay": {"lang": short}}}


@click.group(cls=LazyGroup)
@click.version_option(package_name="portgate")
@click.option("--lang", type=click.Choice(LANG_CHOICES), default=None, expose_value=False, is_eager=True,
              callback=_top_lang, help="Language of the messages: pt (pt-BR) or en (default: PORTGATE_LANG, "
              "else pt-BR).")
def cli() -> None:
    """portgate: gangway access control and port-labour ledger."""
    # the office web application's gate what-if (central never imports the gate rules), imported
    # only when ``office serve`` builds it
    meta = click.get_current_context().meta
    meta["portgate.web.gate_what_if"] = _gate_what_if
    # every command that opens the ledger says on stderr why it waits for it (central.db.make_engine
    # reads it: central.db.WAIT_NOTICE_META; not imported here, the gate's commands skip SQLAlchemy)
    meta["portgate.db.say_waiting"] = _say_waiting


def _gate_what_if(publish):
    return _load("app.whatif:web_gate_what_if")(publish)


def _say_waiting(kind: str, hosts: str) -> None:
    _load("central.cli_args:say_waiting")(kind, hosts)


def _user_errors() -> tuple[type[BaseException], ...]:
    import csv
    import decimal

    errors: list[type[BaseException]] = [OSError, OverflowError, csv.Error, decimal.InvalidOperation]
    # SQLAlchemy's ArgumentError (a database URL that is not one) can only have been raised by a
    # command that imported SQLAlchemy: it is not imported here (it would cost every command, the
    # gate's screen included, about 12 MB).
    sa_exc = sys.modules.get("sqlalchemy.exc")
    if sa_exc is not None:
        errors += [sa_exc.ArgumentError, sa_exc.DataError]
    return tuple(errors)


def _describe(exc: BaseException) -> str:
    """One line for an error met at the boundary. The commands check sizes and ranges where values
    enter (``central.bounds``, the day ranges); a value that still escapes them reads as out of range
    with the driver's first line, and the transaction it was in has been rolled back."""
    if isinstance(exc, OSError) and exc.filename:
        return f"{exc.filename}: {exc.strerror or exc}"
    if isinstance(exc, OverflowError):
        return tr("cli.out_of_range", why=exc)
    if type(exc).__name__ == "DataError":  # sqlalchemy.exc.DataError: the database refused a value
        first = str(getattr(exc, "orig", exc) or exc).strip().splitlines()[0]
        return tr("cli.database_refused", why=first)
    return f"{type(exc).__name__}: {exc}"


def _usage_line(exc: click.UsageError) -> str:
    """A usage error as one line naming the command, the option and the problem:
    ``portgate: evidence audit: Invalid value for '--after-id': -1 is not in the range x>=0 (see
    --help)`` (Click's own form is three lines: usage, a hint, the error)."""
    path = exc.ctx.command_path if exc.ctx is not None else ""
    sub = path.partition(" ")[2]
    where = f"{sub}: " if sub else ""
    message = " ".join(exc.format_message().split()).rstrip(".")
    return f"portgate: {where}{message} ({tr('cli.see_help')})"


def _refusal_words(text: str) -> str:
    """A service's refusal (a ``PortgateError``'s English message) in the command line's language:
    as written in English; in pt-BR each known reason worded as the office's pages word it
    (``central.web.service_texts.localize``: places and values kept, ISO days as dd/mm/aaaa)."""
    lang = cli_lang()
    if lang == "en":
        return text
    from central.web.service_texts import localize  # lazy: only when a refusal is printed

    return localize(lang, text)


use_refusal_words(_refusal_words)  # the lower layers' commands print refusals through it (clitext.refusal)


def _utf8(arg: str) -> bool:
    """False for a command-line argument whose bytes were not UTF-8 (``os.fsdecode`` keeps them as
    lone surrogates, which no file, database or message can hold as text)."""
    try:
        arg.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    """Console entry point. A ``PortgateError`` becomes a one-line message and exit status 2 (1 for
    ``StoreUnavailable``: a database server not reachable yet, worth a restart); so does a usage
    error (an option's value, a missing option: one line, exit 2; ``--help`` is unchanged), and an
    argument whose bytes are not UTF-8 (one line naming it, exit 2, before any command runs)."""
    args = sys.argv[1:] if argv is None else argv
    if argv is None:  # the portgate program itself, not a command run in-process: held work stays
        keep_held_to_the_end()  # held to the process's end (portgate.interrupts)
    given = lang_in_args(args)
    if given:  # a command's --lang: its usage errors in that language too (docs/i18n.md)
        use_lang(given)
    bad = next((a for a in args if not _utf8(a)), None)
    if bad is not None:  # bytes that are not UTF-8 (Python keeps them as lone surrogates): no text to store
        click.echo(tr("cli.arg_not_utf8", arg=ascii(bad.encode("utf-8", "surrogateescape").decode("latin-1"))),
                   err=True)
        return 2
    try:
        rv = cli.main(args=argv, prog_name="portgate", standalone_mode=False)
    except click.exceptions.Abort as exc:  # Ctrl-C: 130; SIGTERM where a command raises it: 143
        click.echo(tr("cli.aborted"), err=True)
        return exit_status(exc)
    except click.exceptions.NoArgsIsHelpError as exc:  # `portgate pay` alone: the group's help
        exc.show()
        return exc.exit_code
    except click.UsageError as exc:
        click.echo(_usage_line(exc), err=True)
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except PortgateError as exc:
        click.echo(f"portgate: {_refusal_words(str(exc))}", err=True)
        return getattr(exc, "exit_code", 2)
    except _user_errors() as exc:
        # At the boundary only: a file that cannot be read or written, a value out of range, a
        # database URL that is not one. The message names it; no traceback for the user.
        click.echo(f"portgate: {_describe(exc)}", err=True)
        return 2
    return rv if isinstance(rv, int) else 0


if __name__ == "__main__":
    sys.exit(main())
