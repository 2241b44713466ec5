"""The command line's messages come from the catalogs (portgate/clitext.py, docs/i18n.md): no
human sentence is handed to ``click.echo`` / ``click.secho`` / ``ClickException`` / ``UsageError`` /
``BadParameter`` as a bare literal in a command module, and the language follows one rule."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from portgate import clitext

ROOT = Path(__file__).resolve().parent.parent
#: the command modules: every module of the packages that imports click (a new command module is
#: in by itself), and the demo's console (``app/demo``: its ``out``)
CLI_MODULES = sorted({*(p for package in ("app", "central", "edge", "wire", "portgate")
                        for p in (ROOT / package).rglob("*.py")
                        if re.search(r"^\s*(import click|from click)", p.read_text(encoding="utf-8"), re.M)),
                      *ROOT.glob("app/demo/*.py")})
SINKS = {"echo", "secho", "ClickException", "UsageError", "BadParameter", "out"}
#: a line a script reads (``ok: 3``, ``FAIL: ...``) says so at its call: ``# machine-read``; a
#: document printed in both languages on purpose (the crew's aboard list, read by the Brazilian
#: inspector and the foreign master): ``# both languages``
MARKERS = ("# machine-read", "# both languages")
_WORD = re.compile(r"[A-Za-zÀ-ú]{2,}")


def _literal(node: ast.AST) -> str:
    """The literal words of an argument as written: a string, an f-string's fixed parts, both
    sides of ``+``/``%``, a ``"...".format(...)``, both branches of ``a if c else b``; ``""`` for a
    call of something else (``tr(...)``, ``json.dumps(...)``) or a name."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(_literal(v) for v in node.values)
    if isinstance(node, ast.BinOp):
        return _literal(node.left) + " " + _literal(node.right)
    if isinstance(node, ast.IfExp):
        return _literal(node.body) + " " + _literal(node.orelse)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return _literal(node.func.value)
    return ""


def _human(text: str) -> bool:
    """A sentence: a space between words (``"give --config"``, ``"FAIL: {x}"``); not ``"  {path}"``,
    ``"a,b,c"``, ``"TOTAL"``."""
    return " " in text.strip() and len(_WORD.findall(text)) >= 1 and bool(re.search(r"\w\W* +\W*\w", text))


def bare_sentences(path: Path) -> list[str]:
    """``file:line: text`` of each human sentence passed as a literal to a sink in ``path``."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name not in SINKS:
            continue
        for arg in [*node.args[:1], *(k.value for k in node.keywords if k.arg == "message")]:
            text = _literal(arg)
            at = "\n".join(lines[node.lineno - 1:node.end_lineno])
            if _human(text) and not any(m in at for m in MARKERS):
                found.append(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{node.lineno}: {text.strip()[:60]!r}")
    return found


def test_the_guard_finds_a_bare_sentence_and_lets_catalog_texts_and_machine_lines_pass(tmp_path):
    module = tmp_path / "cli.py"
    module.write_text(
        'import click, json\n'
        'from portgate.clitext import tr\n'
        'click.echo(f"{n} statement(s) marked paid")\n'
        'raise click.UsageError("give --config")\n'
        'click.echo("the broker said " + why, err=True)\n'
        'click.echo(tr("cli.pay.marked_paid", n=n))\n'
        'click.echo(json.dumps({"a b": 1}))\n'
        'click.echo(f"  {path}")\n'
        'click.echo("registration,rule,amount")\n'
        'click.echo(f"ok: {n}")  # machine-read\n', encoding="utf-8")
    found = bare_sentences(module)
    assert [f.split(": ", 1)[0].rsplit(":", 1)[1] for f in found] == ["3", "4", "5"], found


def test_no_command_module_hands_a_bare_sentence_to_click():
    """Every sentence a person reads from the command line is ``tr("cli....")`` (both catalogs)."""
    named = {str(p.relative_to(ROOT)) for p in CLI_MODULES}
    assert named >= {"app/cli.py", "app/whatif.py", "app/checkconfig.py", "app/demo/run.py", "central/cli_args.py",
                     "central/pay/cli.py", "edge/cli.py", "wire/cli.py"}, named
    found = [line for path in CLI_MODULES for line in bare_sentences(path)]
    assert found == [], "\n".join(found)


@pytest.mark.parametrize("env, chosen, lang", [(None, None, "pt"), ("en", None, "en"), ("en_US", None, "en"),
                                               ("pt-BR", None, "pt"), ("en", "pt", "pt"), (None, "en", "en")])
def test_the_language_is_the_commands_lang_else_portgate_lang_else_pt_br(monkeypatch, env, chosen, lang):
    if env is None:
        monkeypatch.delenv(clitext.ENV, raising=False)
    else:
        monkeypatch.setenv(clitext.ENV, env)
    clitext.use_lang(chosen)
    try:
        assert clitext.cli_lang() == lang
    finally:
        clitext.use_lang(None)


def test_a_message_reads_in_the_chosen_language_with_its_fields(monkeypatch):
    monkeypatch.setenv(clitext.ENV, "pt")
    pt = clitext.tr("cli.pay.marked_paid", n=3)
    monkeypatch.setenv(clitext.ENV, "en")
    en = clitext.tr("cli.pay.marked_paid", n=3)
    assert en == "3 statement(s) marked paid"
    assert pt.startswith("3 ") and pt != en and "statement" not in pt


def _run(capsys, monkeypatch, lang: str | None, *argv: str) -> tuple[int, str, str]:
    from app.cli import main

    if lang is None:
        monkeypatch.delenv(clitext.ENV, raising=False)
    else:
        monkeypatch.setenv(clitext.ENV, lang)
    try:
        code = main(list(argv))
    finally:
        clitext.use_lang(None)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_command_speaks_pt_br_without_portgate_lang_and_english_with_it(capsys, monkeypatch, tmp_path):
    """The real entry point: a usage error, a refused option value and a result line."""
    code, _out, err = _run(capsys, monkeypatch, None, "rotation", "fairness", "--db", "sqlite://", "--month", "2026-13")
    assert code == 2 and "'2026-13' não é AAAA-MM" in err, err
    code, _out, err = _run(capsys, monkeypatch, "en", "rotation", "fairness", "--db", "sqlite://", "--month", "2026-13")
    assert code == 2 and "'2026-13' is not YYYY-MM" in err, err
    code, out, _err = _run(capsys, monkeypatch, "pt", "ledger", "migrate", "--db", f"sqlite:///{tmp_path / 'l.db'}")
    assert code == 0 and out.startswith("na revisão "), out
    code, out, _err = _run(capsys, monkeypatch, "en", "ledger", "migrate", "--db", f"sqlite:///{tmp_path / 'l.db'}")
    assert code == 0 and out.startswith("at revision "), out


def test_a_lang_given_on_the_command_line_overrides_portgate_lang(capsys, monkeypatch):
    code, _out, err = _run(capsys, monkeypatch, "en", "replay", "--lang", "pt")
    assert code == 2 and "informe --workers, --cards, --escala e --taps (ou --from-ledger)" in err, err
    code, _out, err = _run(capsys, monkeypatch, "pt", "replay", "--lang", "en")
    assert code == 2 and "give --workers, --cards, --escala and --taps (or --from-ledger)" in err, err
    code, _out, err = _run(capsys, monkeypatch, "en", "replay")  # --lang's default leaves PORTGATE_LANG's
    assert code == 2 and "give --workers" in err, err


def test_a_day_printed_for_a_person_is_in_the_commands_language(monkeypatch):
    """Dates go through portgate.l10n with the command line's language (the registry's lines)."""
    import datetime as dt

    from portgate.l10n import day

    monkeypatch.setenv(clitext.ENV, "pt")
    said = clitext.tr("cli.registry.suspended", registration="V012", start=day(dt.date(2026, 3, 10), clitext.cli_lang()),
                      end=day(dt.date(2026, 3, 29), clitext.cli_lang()))
    assert said == "V012 suspenso de 10/03/2026 a 29/03/2026"
    monkeypatch.setenv(clitext.ENV, "en")
    said = clitext.tr("cli.registry.suspended", registration="V012", start=day(dt.date(2026, 3, 10), clitext.cli_lang()),
                      end=day(dt.date(2026, 3, 29), clitext.cli_lang()))
    assert said == "V012 suspended Mar 10, 2026 .. Mar 29, 2026"


def test_a_services_refusal_reads_in_pt_br_as_the_office_pages_word_it(capsys, monkeypatch, tmp_path):
    """A ``PortgateError`` raised below the command (here the registry import's ``BadInput``) is
    printed through ``central.web.service_texts.localize`` in pt-BR, as written in English."""
    db = f"sqlite:///{tmp_path / 'l.db'}"
    assert _run(capsys, monkeypatch, "en", "ledger", "migrate", "--db", db)[0] == 0
    workers = tmp_path / "w.csv"
    workers.write_text("registration,name,category,status,valid_until\nV001,Ana,vigia,active,2027-01-01\n")
    code, _out, err = _run(capsys, monkeypatch, None, "registry", "import", "--db", db, "--workers", str(workers))
    assert code == 2 and "w.csv:1: coluna(s) desconhecida(s) valid_until (o arquivo aceita registration," in err, err
    code, _out, err = _run(capsys, monkeypatch, "en", "registry", "import", "--db", db, "--workers", str(workers))
    assert code == 2 and "w.csv:1: unknown column(s) valid_until (the file takes registration," in err, err
