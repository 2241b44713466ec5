"""The screen's process stays small (DESIGN.md: display <= 40 MB): it parses only its own families
of msgids, one language at a time, and does not import what it never uses (paho-mqtt, the rules
engine, validate-docbr, Babel's date and number support); its words are the catalogs' words."""

from __future__ import annotations

import json
import subprocess
import sys

from edge.display.texts import PREFIXES, labels, word
from portgate.i18n import gettext, msgids, part


def _probe(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_the_screen_imports_only_what_it_uses_and_reads_its_own_texts_one_language_at_a_time() -> None:
    found = _probe(
        "import json, sys\n"
        "sys.modules.setdefault('greenlet', None)\n"
        "import app.cli, edge.display.server\n"
        "import types\n"
        "from edge.display.server import _rulebook\n"
        "_rulebook(types.SimpleNamespace(rulebook=None))\n"
        "from edge.display.texts import labels\n"
        "from portgate import i18n\n"
        "labels('pt')\n"
        "pt_only = i18n.part.cache_info().currsize\n"
        "labels('en')\n"
        "print(json.dumps({'mods': sorted(m for m in sys.modules if m.split('.')[0] in "
        "('paho', 'validate_docbr') or m in ('edge.rules.engine', 'babel.support')),"
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
