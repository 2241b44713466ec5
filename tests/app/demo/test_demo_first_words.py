"""The demo's start-up lines (``broker   ...``, ``ports    ...``: a word, then the column's blanks)
begin with the same word in pt-BR and English, and README lists those words (its "start-up
lines' first word" sentence): ``cli.demo.cluster_users`` began ``portos`` in pt-BR, ``ports`` in
English, and README named neither it nor ``ledger``."""

from __future__ import annotations

import re
from pathlib import Path

from portgate.i18n import part

README = Path(__file__).resolve().parents[3] / "README.md"
START = re.compile(r"(\w+) {2,}\S")


def test_start_up_first_words_agree_between_languages_and_readme():
    pt, ids = part("pt", ("cli.demo.",))
    en, _ = part("en", ("cli.demo.",))
    words = {}
    for msgid in ids:
        found = START.match(en.gettext(msgid))
        if found:
            words[msgid] = found.group(1)
            assert pt.gettext(msgid).split()[0] == found.group(1), (msgid, pt.gettext(msgid))
    assert {"broker", "ledger", "ports"} <= set(words.values()), words
    said = " ".join(README.read_text(encoding="utf-8").split())
    listed = re.search(r"start-up lines' first word \(([^)]*)\)", said).group(1)
    assert set(words.values()) <= set(re.findall(r"`(\w+)`", listed)), (listed, words)
