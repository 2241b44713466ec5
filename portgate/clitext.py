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
"""

from __future__ import annotations

import os

from portgate.i18n import gettext, normal_lang

#: the environment variable naming the command line's language
ENV = "PORTGATE_LANG"

_chosen: list[str] = []  # a command's own --lang, set for the rest of the process


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
