"""The screen's process stays small (DESIGN.md: display <= 40 MB): it parses only its own families
of msgids, one language at a time, and does not import what it never uses (paho-mqtt, the rules
engine, validate-docbr, Babel, the roster's record types); its words are the catalogs' words."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from edge.display.texts import PREFIXES, labels, word
from portgate import i18n
from portgate.i18n import gettext, msgids, part


def _probe(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_the_screen_imports_only_what_it_uses_and_reads_its_own_texts_one_language_at_a_time() -> None:
    found = _probe(
        "import json, sys\n"
        "sys.modules.setdefault('greenlet', None)\n"
        "import app.cli, edge.display.server, drivers.options\n"
        "import types\n"
        "from edge.display.server import _rulebook\n"
        "_rulebook(types.SimpleNamespace(rulebook=None))\n"
        "from edge.display.texts import labels\n"
        "from portgate import i18n\n"
        "labels('pt')\n"
        "pt_only = i18n.part.cache_info().currsize\n"
        "labels('en')\n"
        "print(json.dumps({'mods': sorted(m for m in sys.modules if m.split('.')[0] in "
        "('paho', 'validate_docbr', 'babel') or m in ('edge.rules.engine', 'portgate.records', 'drivers.base')),"
        " 'full': [i18n._catalog.cache_info().currsize, i18n.translations.cache_info().currsize],"
        " 'pt_only': pt_only, 'both': i18n.part.cache_info().currsize}))\n")
    assert found["mods"] == []
    assert found["full"] == [0, 0]  # the whole catalogs are never parsed
    assert found["both"] == found["pt_only"] + 1  # the screen's English read when a page asked for it


def test_the_screens_words_are_the_catalogs() -> None:
    ids = part("pt", PREFIXES)[1]
    assert ids and all(i.startswith(PREFIXES) for i in ids)
    assert len(ids) < len(msgids()) / 5
    for lang in ("pt", "en"):
        assert labels(lang) == {m.removeprefix("screen."): gettext(lang, m) for m in msgids("screen.")}
        for msgid in ids:
            assert word(lang, msgid) == gettext(lang, msgid)
    assert word("pt", "screen_head.deny") != word("en", "screen_head.deny")
    assert word("en", "screen.no-such-label") == "screen.no-such-label"  # as gettext: the key shows


def _po(lang: str, entries: str) -> str:
    plural = "nplurals=2; plural=(n != 1);"
    return ('msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=utf-8\\n"\n'
            f'"Language: {lang}\\n"\n"Plural-Forms: {plural}\\n"\n\n{entries}')


def test_a_part_leaves_out_fuzzy_and_empty_texts_and_a_broken_catalog_raises(tmp_path, monkeypatch) -> None:
    for locale, entries in (
            ("pt_BR", 'msgid "t.a"\nmsgstr "Á"\n\n#, fuzzy\nmsgid "t.b"\nmsgstr "B?"\n\nmsgid "t.c"\nmsgstr ""\n\n'
                      'msgid "u.x"\nmsgstr "X"\n'),
            ("en", 'msgid "t.a"\nmsgstr "A"\n\nmsgid "t.c"\nmsgstr "C"\n')):
        (tmp_path / locale / "LC_MESSAGES").mkdir(parents=True)
        (tmp_path / locale / "LC_MESSAGES" / "portgate.po").write_text(_po(locale, entries), encoding="utf-8")
    monkeypatch.setattr(i18n, "LOCALE_DIR", tmp_path)
    part.cache_clear()
    try:
        pt, pt_ids = part("pt", ("t.",))
        assert pt_ids == ("t.a",)
        assert [pt.gettext(m) for m in ("t.a", "t.b", "t.c", "u.x")] == ["Á", "t.b", "t.c", "u.x"]
        en, en_ids = part("en", ("t.",))
        assert en_ids == ("t.a", "t.c")
        assert [en.gettext(m) for m in ("t.a", "t.b", "t.c")] == ["A", "t.b", "C"]
        part.cache_clear()
        (tmp_path / "pt_BR" / "LC_MESSAGES" / "portgate.po").write_text(_po("pt_BR", 'msgid "t.a"\nmsgstr'))
        with pytest.raises(OSError):
            part("pt", ("t.",))
    finally:
        part.cache_clear()


def test_the_screens_process_loads_no_openssl_digests_archive_codecs_or_form_parser(gate) -> None:
    """``portgate edge display`` keeps out what it never uses (edge.cli.SCREEN_NEVER_IMPORTS): no
    ``_hashlib`` (a photo's sha256 is the built-in one), no bz2/lzma codecs, no multipart parser; the
    page and a photo are still served (the photo's bytes checked against its name)."""
    import urllib.request

    from edge.cli import SCREEN_NEVER_IMPORTS

    assert {"_hashlib", "bz2", "lzma", "python_multipart"} <= set(SCREEN_NEVER_IMPORTS)
    with urllib.request.urlopen(gate.url, timeout=30) as r:
        assert r.status == 200 and b'id="now-wrap"' in r.read()
    maps = open(f"/proc/{gate.display.pid}/maps").read()
    assert "python" in maps and "_sqlite3" in maps  # the screen's own process, its own modules mapped
    for so in ("_hashlib.", "_bz2.", "_lzma.", "libbz2", "liblzma"):
        assert so not in maps, so


def test_the_templates_compile_before_the_web_stack_and_take_no_per_screen_globals() -> None:
    """edge.display.pages compiles the four templates with nothing of the web stack imported (the
    display command does it first: the compile's passing memory is reused by the imports after it);
    the environment holds no per-screen value, so every Display of a process can share it."""
    found = _probe(
        "import json, sys\n"
        "from edge.display.pages import NAMES, environment\n"
        "env = environment()\n"
        "print(json.dumps({'web': sorted(m for m in sys.modules if m.split('.')[0] in "
        "('starlette', 'uvicorn', 'anyio') or m == 'edge.display.server'),"
        " 'compiled': sorted(k[1] for k in env.cache), 'names': list(NAMES),"
        " 'globals': sorted(set(env.globals) & {'age', 'local_hms'})}))\n")
    assert found["web"] == []
    assert found["compiled"] == sorted(found["names"])
    assert found["globals"] == []
