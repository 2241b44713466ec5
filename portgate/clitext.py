"""The command line's own messages in the run's language (docs/i18n.md, "The command line").

One rule for every ``portgate`` command: the messages are in the language of the
``PORTGATE_LANG`` environment variable (``pt`` or ``en``; ``en_US``, ``pt-BR`` read as their
language), pt-BR without it; a command's own ``--lang`` (``demo``, ``replay``, ``edge replay``,
``production``), when given on the command line, overrides it for that command (``use_lang_of``;
the demo's console always speaks its ``--lang``, as its gates: ``use_lang``).
``tr("cli.pay.marked_paid", n=3)`` gives the catalogs' text of the msgid in that language with its
``str.format`` fields filled.

What a script reads stays as it is and never passes through here: JSON, CSV, ids, paths, the
``key=value`` and ``ok:``/``FAIL:`` lines. Amounts, numbers and days a person reads go through
``portgate.l10n`` with ``cli_lang()``.

Click's own texts (``Usage:``, ``No such option '--x'.``, ``Missing argument``, ``Error: ...``,
``Try ... for help.``) are wrapped by Click in Python's ``gettext`` (``gettext.gettext``, the default
domain; its plural texts in ``gettext.ngettext``). ``install_click_texts`` answers them from our
catalogs in ``cli_lang()``: the msgid is ``click.`` + Click's English (``click.Usage:`` -> ``Uso:``,
docs/i18n.md), a plural text's singular and plural are two msgids (``click.Got unexpected extra
argument ({args})``, ``click.Got unexpected extra arguments ({args})``); a text the catalogs do not
have stays Click's English.

The commands' and options' own help (``--help``) keeps its English in the code (docstrings,
``help=``) as the msgid: ``help.`` + the English as Click shows it (``command_help``); ``word_help``
puts a command's texts in ``cli_lang()`` when its help page is shown (``install_click_texts``).
"""

from __future__ import annotations

import gettext as _gettext
import inspect
import os
import weakref

from portgate.i18n import gettext, normal_lang, part

#: the environment variable naming the command line's language
ENV = "PORTGATE_LANG"

_chosen: list[str] = []  # a command's own --lang, set for the rest of the process
#: the msgid prefix of Click's own texts in the catalogs (``click.`` + Click's English)
CLICK = "click."
_std = {"dgettext": _gettext.dgettext, "dngettext": _gettext.dngettext}
#: the msgid prefix of a command's or an option's own help text (``help.`` + its English)
HELP = "help."


def use_lang(lang: str | None) -> None:
    """Make ``lang`` (a command's ``--lang``: ``"pt"``, ``"en"``) the language of every message
    this process prints from now on; ``None`` goes back to ``PORTGATE_LANG``."""
    _chosen[:] = [normal_lang(lang)] if lang else []


def use_lang_of(ctx) -> None:
    """Take the ``lang`` parameter of a click context as the messages' language when the user
    gave it (on the command line or through its ``envvar``); its default leaves ``PORTGATE_LANG``'s."""
    import click  # lazy: portgate.clitext is imported by modules that never parse a command line

    if ctx.params.get("lang") and ctx.get_parameter_source("lang") in (
            click.core.ParameterSource.COMMANDLINE, click.core.ParameterSource.ENVIRONMENT):
        use_lang(ctx.params["lang"])


def cli_lang() -> str:
    """The command line's language now: ``"pt"`` or ``"en"`` (the rule of the module's docstring)."""
    return _chosen[0] if _chosen else normal_lang(os.environ.get(ENV))


def tr(msgid: str, **fields: object) -> str:
    """The text of ``msgid`` (``cli.<area>.<what>``) in ``cli_lang()`` with ``fields`` put into its
    ``{name}`` places: ``tr("cli.registry.lost", uid="04A1")`` -> ``"cartão 04A1 comunicado como
    perdido"``. A msgid no catalog has shows as itself (and fails ``tests/test_i18n_catalogs.py``);
    a field the text names but the caller did not give raises ``KeyError`` (a programming error)."""
    text = gettext(cli_lang(), msgid)
    return text.format(**fields) if fields else text


_refusal_hook: list = []  # the entry point's wording of a service's refusal (``use_refusal_words``)


def use_refusal_words(words) -> None:
    """Make ``words`` (English refusal text -> the same in ``cli_lang()``) what ``refusal`` uses:
    the ``portgate`` entry point (``app.cli``) installs the office's error codes
    (``central.web.service_texts.localize``), which the gate's own commands cannot import."""
    _refusal_hook[:] = [words]


def refusal(exc: BaseException | str) -> str:
    """A ``PortgateError``'s English message (or the text) as a command prints it after
    ``portgate: ``: in ``cli_lang()`` through the words ``use_refusal_words`` installed (each known
    reason in pt-BR, places kept), as it is when none are installed or the language is English."""
    text = str(exc)
    return _refusal_hook[0](text) if _refusal_hook else text


def _click_dgettext(domain: str, message: str) -> str:
    if domain != _gettext.textdomain():  # another domain, bound by someone else: as before
        return _std["dgettext"](domain, message)
    said = part(cli_lang(), (CLICK,))[0].gettext(CLICK + message)  # Click's texts only: a small parse
    return message if said == CLICK + message else said


def _click_dngettext(domain: str, singular: str, plural: str, n: int) -> str:
    if domain != _gettext.textdomain():
        return _std["dngettext"](domain, singular, plural, n)
    found = part(cli_lang(), (CLICK,))[0]
    one = getattr(found, "plural", lambda k: int(k != 1))(n) == 0  # pt-BR: 0 and 1 are singular
    message = singular if one else plural
    said = found.gettext(CLICK + message)
    return message if said == CLICK + message else said


def lang_in_args(args: list[str]) -> str | None:
    """The value of a ``--lang`` given on a command line (``--lang en``, ``--lang=en``; before a
    ``--``; one of ``LANG_CHOICES``), or None: read before Click parses, so Click's own usage errors of that command line
    already speak it."""
    for i, arg in enumerate(args):
        if arg == "--":
            break
        if arg == "--lang" and i + 1 < len(args):
            return _taken(args[i + 1])
        if arg.startswith("--lang="):
            return _taken(arg.partition("=")[2])
    return None


#: the values a command's ``--lang`` takes (``demo``'s ``pt``/``en``, ``production``'s ``pt-BR``)
LANG_CHOICES = ("pt", "pt-BR", "en")


def _taken(value: str) -> str | None:
    """``value`` if a command's ``--lang`` takes it; None for another (``--lang xx``): its
    refusal speaks ``PORTGATE_LANG``'s language, not the pt-BR a stray value would read as."""
    return value if value in LANG_CHOICES else None


def install_click_texts() -> None:
    """Make Click's own usage and error texts speak ``cli_lang()`` (pt-BR, English), from the
    catalogs' ``click.<English>`` msgids. Python's ``gettext.gettext`` (what Click calls as ``_``)
    looks ``dgettext`` up in the ``gettext`` module at each call: it is wrapped, for the default
    domain only (``dngettext`` too, Click's plural texts). A command's help page (``--help``, a
    group called without a command: Click's ``Command.get_help``) first words the command's help
    texts (``word_help``): the catalogs' help texts are read only when a help page is shown.
    Idempotent; ``app.cli`` calls it when it loads (the ``portgate`` command)."""
    import click  # lazy: as use_lang_of's

    _gettext.dgettext = _click_dgettext
    _gettext.dngettext = _click_dngettext
    shown = _std.setdefault("get_help", click.Command.get_help)
    pieces = _std.setdefault("collect_usage_pieces", click.Command.collect_usage_pieces)
    group_pieces = _std.setdefault("group_usage_pieces", click.Group.collect_usage_pieces)
    made = _std.setdefault("make_metavar", click.Option.make_metavar)

    def get_help(self, ctx):
        word_help(self)
        return shown(self, ctx)

    def collect_usage_pieces(self, ctx):  # "[OPTIONS]", "COMMAND [ARGS]...": Click's own words
        return [click_word(piece) for piece in pieces(self, ctx)]

    def collect_group_pieces(self, ctx):  # a group adds its "COMMAND [ARGS]..." after the above
        return [click_word(piece) for piece in group_pieces(self, ctx)]

    def make_metavar(self, ctx, *args):  # a type's "TEXT", "INTEGER"; an option's own metavar: word_help
        said = made(self, ctx, *args)
        return said if self.metavar is not None else click_word(said)

    click.Command.get_help = get_help
    click.Command.collect_usage_pieces = collect_usage_pieces
    click.Group.collect_usage_pieces = collect_group_pieces
    click.Option.make_metavar = make_metavar


def click_word(english: str) -> str:
    """A word Click shows without ``gettext`` (a usage line's ``[OPTIONS]``, ``COMMAND [ARGS]...``,
    a type's metavar ``TEXT``, ``INTEGER``, ``TEXT...``) in ``cli_lang()``: the catalogs'
    ``click.<English>`` (a trailing ``...`` kept), else the English itself."""
    base, dots = (english[:-3], "...") if english.endswith("...") and english != "..." else (english, "")
    return _click_dgettext(_gettext.textdomain(), base) + dots


def command_help(english: str) -> str:
    """The msgid of a help text: ``help.`` + the text as Click shows it (``inspect.cleandoc``,
    cut at a form feed ``\\f``): ``"Mark statements paid."`` -> ``"help.Mark statements paid."``."""
    return HELP + inspect.cleandoc(english).partition("\f")[0].strip()


def help_words(english: str | None) -> str | None:
    """A command's or an option's help text in ``cli_lang()``: the catalogs' pt-BR of
    ``command_help(english)``; the English itself in English, when it is empty or None, or when the
    catalogs lack it (``tests/test_help_texts.py`` lists the commands whose every text they must have)."""
    if not english or cli_lang() == "en":
        return english
    msgid = command_help(english)
    said = part("pt", (HELP,))[0].gettext(msgid)
    return english if said == msgid else said


#: each command's and option's English help, kept the first time ``word_help`` sees it
_english: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def word_help(command) -> None:
    """Put the help texts of a click command (its ``help``, ``short_help``, its options' ``help``
    and those of its sub-commands, a group's) in ``cli_lang()``, from their English: called again
    in another language, it words them again from the English it kept."""
    seen: set[int] = set()
    stack = [command]
    while stack:
        cmd = stack.pop()
        if id(cmd) in seen:
            continue
        seen.add(id(cmd))
        for obj, attr in [(cmd, "help"), (cmd, "short_help"), *_param_texts(cmd)]:
            kept = _english.setdefault(obj, {})
            english = kept.setdefault(attr, getattr(obj, attr))
            setattr(obj, attr, help_words(english))
        stack.extend(getattr(cmd, "commands", {}).values())


def _param_texts(cmd) -> list[tuple[object, str]]:
    """``(option, attribute)`` of an option's texts a person reads on a help page: its ``help``, an
    English ``show_default`` (``"login name"`` -> ``[padrão: (nome de login)]``) and its own
    ``metavar`` (``FINGERPRINT``); an argument's metavar is also its name in Click's errors: kept."""
    texts = []
    for p in cmd.params:
        if hasattr(p, "help"):
            texts.append((p, "help"))
        if isinstance(getattr(p, "show_default", None), str):
            texts.append((p, "show_default"))
        if getattr(p, "param_type_name", "") == "option" and isinstance(p.metavar, str):
            texts.append((p, "metavar"))
    return texts
