"""Click's own usage and error texts speak the command line's language (docs/i18n.md "The command
line"): pt-BR by default, English with ``PORTGATE_LANG=en`` or a command's ``--lang en``, through
the real ``portgate`` console script (issue 33: ``Usage:``, ``No such option``, ``Missing argument``
were English on a pt-BR command line)."""

from __future__ import annotations

import gettext
import os
import subprocess
import sys
from pathlib import Path

import click
from click.testing import CliRunner

from testkit.cli import run_here

PORTGATE = str(Path(sys.executable).parent / "portgate")


def _run(*args: str, lang: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PORTGATE_LANG"}
    if lang is not None:
        env["PORTGATE_LANG"] = lang
    return subprocess.run([PORTGATE, *args], capture_output=True, text=True, env=env, timeout=120)


def _here(*args: str, lang: str | None) -> subprocess.CompletedProcess:
    """The same command through ``app.cli.main`` in this process (``testkit.cli.run_here``: no Python
    start). Each test below keeps one run of the real console script; its other runs go here."""
    return run_here(list(args), env={"PORTGATE_LANG": lang})


def test_a_usage_error_in_pt_br_by_default_and_in_english_on_request() -> None:
    pt = _run("pay", "--no-such-option", lang=None)
    assert pt.returncode == 2
    assert pt.stderr.strip() == "portgate: pay: A opção '--no-such-option' não existe (veja --help)"
    en = _here("pay", "--no-such-option", lang="en")
    assert en.stderr.strip() == "portgate: pay: No such option '--no-such-option' (see --help)"
    missing = _run("evidence", "verify", lang="pt")
    assert missing.returncode == 2 and "Falta o argumento 'BUNDLE'" in missing.stderr
    assert "Missing argument 'BUNDLE'" in _here("evidence", "verify", lang="en").stderr


def test_a_commands_own_lang_on_the_command_line_is_the_language_of_its_usage_error() -> None:
    en = _run("demo", "--lang", "en", "--no-such-option", lang="pt")
    assert en.stderr.strip() == "portgate: demo: No such option '--no-such-option' (see --help)"
    pt = _here("demo", "--lang=pt", "--no-such-option", lang="en")
    assert pt.stderr.strip() == "portgate: demo: A opção '--no-such-option' não existe (veja --help)"


def test_help_in_pt_br_says_uso_and_opcoes() -> None:
    out = _run("pay", "--help", lang=None).stdout
    assert out.startswith("Uso: portgate pay ") and "\nOpções:\n" in out and "Mostra esta mensagem e sai." in out
    out = _here("--help", lang="en").stdout
    assert out.startswith("Usage: portgate ") and "\nCommands:\n" in out


def test_clicks_own_form_on_the_real_command_group(monkeypatch) -> None:
    """Click's three-line form (``Usage:``, ``Try ... for help.``, ``Error: ...``) as CliRunner
    shows it on the real group: every line in pt-BR; English with PORTGATE_LANG=en."""
    from app.cli import cli
    from portgate.clitext import use_lang

    use_lang(None)  # no earlier in-process command's --lang
    monkeypatch.setenv("PORTGATE_LANG", "pt")
    out = CliRunner().invoke(cli, ["pay", "--no-such-option"]).output
    assert "Uso: portgate pay [OPÇÕES]" in out or "Uso: cli pay [OPÇÕES]" in out
    assert "Tente '" in out and "--help' para ver a ajuda." in out
    assert "Erro: A opção '--no-such-option' não existe." in out
    monkeypatch.setenv("PORTGATE_LANG", "en")
    out = CliRunner().invoke(cli, ["pay", "--no-such-option"]).output
    assert "Usage:" in out and "Error: No such option '--no-such-option'." in out


def test_a_text_the_catalogs_lack_stays_clicks_english_and_other_domains_are_untouched() -> None:
    import app.cli  # noqa: F401 - installs the hook
    from portgate.clitext import use_lang

    use_lang(None)  # no earlier in-process command's --lang
    os.environ["PORTGATE_LANG"] = "pt"
    try:
        assert gettext.gettext("Usage:") == "Uso:"
        assert gettext.gettext("Some text Click added later.") == "Some text Click added later."
        assert gettext.dgettext("another-domain", "Usage:") == "Usage:"  # no .mo bound: as before
        assert click.exceptions.NoSuchOption("--x").format_message() == "A opção '--x' não existe."
    finally:
        os.environ["PORTGATE_LANG"] = "en"


def test_a_lang_value_no_command_takes_is_refused_in_portgate_lang() -> None:
    """The tester's ``PORTGATE_LANG=en portgate demo --lang xx`` answered in Portuguese."""
    en = _here("demo", "--lang", "xx", lang="en")
    assert en.returncode == 2
    assert en.stderr.strip() == "portgate: demo: Invalid value for '--lang': 'xx' is not one of 'pt', 'en' (see --help)"
    pt = _run("demo", "--lang=xx", lang=None)
    assert pt.returncode == 2 and pt.stderr.startswith("portgate: demo: Valor inválido para '--lang': 'xx'")


def test_a_top_level_lang_is_taken_by_every_command_in_both_languages() -> None:
    """``portgate --lang en --help`` answered "No such option '--lang'" (in English, while ``--lang
    pt`` refused it in Portuguese): ``--lang`` before the command is now portgate's own option, the
    language of every command's messages, help and usage errors, whatever ``PORTGATE_LANG`` says."""
    en = _run("--lang", "en", "--help", lang="pt")
    assert en.returncode == 0 and en.stdout.startswith("Usage: portgate [OPTIONS]") and "--lang" in en.stdout
    pt = _here("--lang", "pt", "--help", lang="en")
    assert pt.returncode == 0 and pt.stdout.startswith("Uso: portgate [OPÇÕES]")
    assert "Idioma das mensagens" in pt.stdout
    assert _here("--lang=en", "pay", "--no-such-option", lang="pt").stderr.strip() == (
        "portgate: pay: No such option '--no-such-option' (see --help)")
    assert _here("--lang", "pt", "pay", "--no-such-option", lang="en").stderr.strip() == (
        "portgate: pay: A opção '--no-such-option' não existe (veja --help)")
    wrong = _here("--lang", "xx", "--help", lang="en")
    assert wrong.returncode == 2 and "Invalid value for '--lang': 'xx'" in wrong.stderr


def test_a_top_level_lang_is_the_default_of_a_commands_own_lang() -> None:
    """``portgate --lang en replay ...`` (the demo, ``edge replay`` alike): the command's own
    ``--lang`` (pt by default) takes portgate's, so the watchman's words follow it too."""
    demo = Path(__file__).resolve().parents[1] / "config" / "demo"
    files = [f"--{n}={demo / (n + '.csv')}" for n in ("workers", "cards", "escala", "taps")]
    en = _here("--lang", "en", "replay", *files, lang="pt").stdout
    assert '"message": "ADMITTED — ship MSC Aurora (9300001), post gangway, period 01-07."' in en
    pt = _here("--lang", "pt", "replay", *files, lang="en").stdout
    assert '"message": "LIBERADO — navio MSC Aurora (9300001), posto portaló, período 01-07."' in pt
