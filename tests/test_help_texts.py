"""The commands' and options' own help (``--help``) and Click's plural texts speak the command
line's language (docs/i18n.md "The command line"): the English in the code (docstrings, ``help=``)
is the msgid (``help.`` + the English as Click shows it), pt-BR by default, English with
``PORTGATE_LANG=en`` or a command's ``--lang en``; through the real ``portgate`` console script."""

from __future__ import annotations

import gettext
import inspect
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from portgate.clitext import HELP, command_help, use_lang
from portgate.i18n import part
from testkit.cli import run_here

PORTGATE = str(Path(sys.executable).parent / "portgate")
#: Click's texts a person never reads from portgate: raised for a command written wrong (at import,
#: by its author) or a representation (``Choice(...)``), the standard-stream and editor helpers
NOT_FOR_A_PERSON = {
    "Name '{name}' defined twice", "Boolean option {decl!r} cannot use the same flag for true/false.",
    "Could not determine name for option with declarations {decls!r}",
    "No options defined but a name was passed ({name}). Did you mean to declare an argument instead? "
    "Did you mean to pass '--{name}'?",
    "Arguments take exactly one parameter declaration, got {length}: {decls}.", "Choice({choices})",
    "Unknown standard stream '{name}'", "d",
}


#: the console script's runs of this module's tests: (arguments, ``PORTGATE_LANG`` or None)
REAL_RUNS = (
    (("pay", "mark-paid", "--help"), None), (("pay", "--help"), "pt"), (("--help",), None),
    (("demo", "--lang", "en", "--help"), "pt"), (("evidence", "verify", "a", "b", "c"), None),
    (("evidence", "verify", "a", "b"), "pt"), (("rotation", "list", "--help"), "pt"),
)
_started: dict[tuple, subprocess.Popen] = {}
_done: dict[tuple, subprocess.CompletedProcess] = {}


def _start(args: tuple[str, ...], lang: str | None) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "PORTGATE_LANG"}
    if lang is not None:
        env["PORTGATE_LANG"] = lang
    return subprocess.Popen([PORTGATE, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


@pytest.fixture(scope="module", autouse=True)
def _real_runs():
    """Every run of ``REAL_RUNS`` started at once when the module's first test starts: their Python
    starts (~0.5 s of CPU each, seconds of wall each under load) overlap instead of following one
    another; ``_run`` collects each (a command run twice with the same language: once)."""
    _started.update({(args, lang): _start(args, lang) for args, lang in REAL_RUNS})
    yield
    for proc in _started.values():  # not collected (a test deselected or failed first)
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    _started.clear()
    _done.clear()


def _run(*args: str, lang: str | None) -> subprocess.CompletedProcess:
    """``portgate ARGS`` through the real console script, ``PORTGATE_LANG=lang`` (None: unset)."""
    key = (args, lang)
    if key not in _done:
        proc = _started.pop(key, None) or _start(args, lang)
        out, err = proc.communicate(timeout=120)
        _done[key] = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    return _done[key]


def _here(*args: str, lang: str | None) -> subprocess.CompletedProcess:
    """The same command through ``app.cli.main`` in this process (``testkit.cli.run_here``: no Python
    start): the English runs below; the pt-BR ones stay the real console script's."""
    return run_here(list(args), env={"PORTGATE_LANG": lang})


def _commands():
    """``(path, command)`` of every command and sub-command of ``portgate``, loaded as it loads them."""
    from app.cli import COMMANDS, cli

    for name in sorted(COMMANDS):
        stack = [(name, cli.get_command(click.Context(cli), name))]
        while stack:
            path, cmd = stack.pop()
            yield path, cmd
            stack += [(f"{path} {k}", sub) for k, sub in getattr(cmd, "commands", {}).items()]


def _english_texts(cmd: click.Command) -> list[str]:
    """The English help texts of ``cmd`` (as the code has them, whatever a help page put in their place)."""
    from portgate.clitext import _english, word_help

    word_help(cmd)  # keeps each text's English
    kept = [_english.get(cmd, {}).get(a) for a in ("help", "short_help")]
    kept += [_english.get(p, {}).get(a) for p in cmd.params for a in ("help", "show_default", "metavar")]
    return [t for t in kept if t and isinstance(t, str)]


def _own_options(cli: click.Group) -> list[str]:
    """The help texts of ``portgate``'s own options (``--lang``; ``--version``'s is Click's own text)."""
    _english_texts(cli)
    from portgate.clitext import _english

    return [_english[p]["help"] for p in cli.params if p.name != "version" and _english.get(p, {}).get("help")]


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_a_commands_help_in_pt_br_by_default_and_in_english_on_request() -> None:
    pt = _run("pay", "mark-paid", "--help", lang=None)
    assert pt.returncode == 0
    out = _flat(pt.stdout)
    assert "Marca demonstrativos como pagos. Ids desconhecidos, já pagos, substituídos ou retidos: erro, nada muda." in out
    assert "--ref TEXTO Referência do pagamento (id da transferência bancária, lote da folha)." in out
    assert "Mark statements paid" not in out
    en = _flat(_here("pay", "mark-paid", "--help", lang="en").stdout)
    assert "Mark statements paid. Unknown, already-paid, superseded or on-hold ids: error, nothing changed." in en
    assert "--ref TEXT Payment reference (bank transfer id, payroll batch)." in en
    group = _flat(_run("pay", "--help", lang="pt").stdout)  # a group's list of its commands
    assert "mark-paid Marca demonstrativos como pagos." in group
    top = _flat(_run("--help", lang=None).stdout)  # portgate's own list and line
    assert "evidence Pacotes de provas para a Justiça do Trabalho: exportar, conferir." in top
    assert "controle de acesso ao portaló" in top
    assert "evidence Evidence bundles for a labour court: export, verify." in _flat(_here("--help", lang="en").stdout)


def test_a_commands_own_lang_is_the_language_of_its_help() -> None:
    en = _flat(_run("demo", "--lang", "en", "--help", lang="pt").stdout)
    assert "Play a whole port day on this machine" in en and "Language of the watchman's messages." in en
    pt = _flat(_here("demo", "--lang=pt", "--help", lang="en").stdout)
    assert "Joga um dia inteiro de porto nesta máquina" in pt and "Idioma das mensagens do vigia." in pt


def test_help_is_worded_again_in_another_language_in_the_same_process(monkeypatch) -> None:
    """In-process (``CliRunner`` on the real group): each run words the help from the English it
    kept, not from the previous run's pt-BR."""
    from app.cli import cli

    use_lang(None)
    for lang, want in (("pt", "Libera demonstrativos retidos"), ("en", "Release statements on hold"),
                       ("pt", "Libera demonstrativos retidos")):
        monkeypatch.setenv("PORTGATE_LANG", lang)
        out = CliRunner().invoke(cli, ["pay", "release", "--help"]).output
        assert want in _flat(out), (lang, out)


def test_every_help_text_of_every_command_has_its_pt_br() -> None:
    """A docstring or ``help=`` reworded in English is a new msgid: this names it until its pt-BR
    is in both ``.po`` files (``help.`` + the English, docs/i18n.md)."""
    from app.cli import COMMANDS, cli

    have = set(part("pt", (HELP,))[1])
    missing = [f"{path}: {command_help(text)!r}" for path, cmd in _commands()
               for text in _english_texts(cmd) if command_help(text) not in have]
    missing += [f"portgate: {command_help(text)!r}" for text in _own_options(cli) if command_help(text) not in have]
    missing += [repr(command_help(line)) for _module, line in [*COMMANDS.values(), ("", inspect.getdoc(cli.callback))]
                if command_help(line) not in have]
    assert not missing, "\n".join(missing)


def test_no_help_text_in_the_catalogs_is_left_over_from_a_reworded_command() -> None:
    from app.cli import COMMANDS, cli

    used = {command_help(t) for _path, cmd in _commands() for t in _english_texts(cmd)}
    used |= {command_help(line) for _module, line in COMMANDS.values()} | {command_help(inspect.getdoc(cli.callback))}
    used |= {command_help(t) for t in _own_options(cli)}
    stale = sorted(set(part("pt", (HELP,))[1]) - used)
    assert not stale, stale


def test_clicks_plural_texts_in_pt_br() -> None:
    many = _run("evidence", "verify", "a", "b", "c", lang=None)
    assert many.returncode == 2
    assert many.stderr.strip() == "portgate: evidence verify: Argumentos a mais, inesperados (b c) (veja --help)"
    one = _run("evidence", "verify", "a", "b", lang="pt")
    assert one.stderr.strip() == "portgate: evidence verify: Argumento a mais, inesperado (b) (veja --help)"
    en = _here("evidence", "verify", "a", "b", "c", lang="en")
    assert en.stderr.strip() == "portgate: evidence verify: Got unexpected extra arguments (b c) (see --help)"


def test_every_text_click_shows_a_person_has_its_pt_br() -> None:
    """Click's msgids (``_()``, both forms of ``ngettext``), as Babel extracts them from the installed
    Click: a newer Click's new text fails here until ``click.<English>`` is in both ``.po`` files."""
    from babel.messages.extract import extract_from_file

    have = set(part("pt", ("click.",))[1])
    folder = Path(inspect.getfile(click)).parent
    missing = []
    for source in sorted(folder.glob("*.py")):
        if source.name in ("testing.py", "_winconsole.py", "_compat.py"):  # tests' runner, Windows
            continue
        for lineno, message, _c, _ctx in extract_from_file("python", str(source),
                                                           keywords={"_": None, "ngettext": (1, 2)}):
            for msgid in message if isinstance(message, tuple) else (message,):
                if msgid not in NOT_FOR_A_PERSON and "click." + msgid not in have:
                    missing.append(f"{source.name}:{lineno}: {msgid!r}")
    assert not missing, "\n".join(missing)


def test_a_plural_text_of_another_domain_is_untouched() -> None:
    import app.cli  # noqa: F401 - installs the hook

    assert gettext.dngettext("another-domain", "one {n}", "many {n}", 2) == "many {n}"
    assert gettext.dngettext("another-domain", "one {n}", "many {n}", 1) == "one {n}"


def test_clicks_rendered_words_and_a_commands_own_metavar_in_pt_br() -> None:
    """The fresh tester's leftovers (issue of 2026-12-06): ``[required]``, ``Usage: portgate [OPTIONS]
    COMMAND [ARGS]...``, the types' ``TEXT``, an English ``show_default`` ``(login name)`` and an
    option's own ``FINGERPRINT`` stayed English on a pt-BR help page; ``rotation list``'s ``--date`` had
    no description and ``rotation hours``' line was cut at "R8 (DL 2.032 art."."""
    top = _run("--help", lang=None).stdout
    assert top.startswith("Uso: portgate [OPÇÕES] COMANDO [ARGUMENTOS]...")
    listed = _flat(_run("rotation", "list", "--help", lang="pt").stdout)
    assert listed.startswith("Uso: portgate rotation list [OPÇÕES]")
    assert "--date TEXTO O dia da escala, AAAA-MM-DD. [obrigatório]" in listed
    assert "[padrão: (nome de login)]" in listed and "--db TEXTO" in listed
    for english in ("[required]", "[OPTIONS]", "login name", " TEXT "):
        assert english not in listed, english
    group = _flat(_here("rotation", "--help", lang="pt").stdout)
    assert "hours R8 (DL 2.032, art. 6): horas por estivador, por mês ou semestre." in group
    keys = _flat(_here("evidence", "verify", "--help", lang="pt").stdout)
    assert "--office-key IMPRESSÃO-DIGITAL" in keys and "--gate-key PORTALÓ=IMPRESSÃO-DIGITAL" in keys
    en = _flat(_here("rotation", "list", "--help", lang="en").stdout)
    assert en.startswith("Usage: portgate rotation list [OPTIONS]")
    assert "--date TEXT The escala's day, YYYY-MM-DD. [required]" in en and "[default: (login name)]" in en
    en_group = _flat(_here("rotation", "--help", lang="en").stdout)
    assert "hours R8 (DL 2.032, art. 6): hours per stevedore, by month or semester." in en_group
    assert _here("--help", lang="en").stdout.startswith("Usage: portgate [OPTIONS] COMMAND [ARGS]...")
