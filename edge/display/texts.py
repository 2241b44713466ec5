"""The screen's labels, pt-BR first, English (``labels(lang)``), from the gettext catalogs (msgids
``screen.<label>``, ``portgate.i18n``; docs/i18n.md), and every other word of the screen (``word``).

The screen's process reads only its own families of msgids (``PREFIXES``, ``portgate.i18n.part``),
one language at a time, the other when a page asks for it: the whole catalogs (1,479 texts of the
office, the worker's pages and the command line) cost it 3.3 MB of its 40 MB (issue 33).

``_PT`` and ``_EN`` are the old hand-kept tables, empty: a label another branch still adds there is
shown until ``python -m testkit.i18n absorb`` moves it into the catalogs."""

from __future__ import annotations

import functools

from portgate.i18n import part

#: the msgid families the screen shows (``board``, the templates through ``labels``; the gate's
#: own words and the post and function names: the decision's sentence, ``reason_words``)
PREFIXES = ("screen.", "screen_head.", "screen_action.", "screen_unjournaled.", "rule_title.", "gate.", "post.",
            "function.")

_PT = {
}
_EN = {
}


@functools.cache
def labels(lang: str) -> dict[str, str]:
    """Labels in ``lang`` ("en", anything else is pt-BR): label -> text, every ``screen.*`` msgid."""
    lang = "en" if lang == "en" else "pt"
    found = part(lang, PREFIXES)[0]
    said = {msgid.removeprefix("screen."): found.gettext(msgid) for msgid in part("pt", PREFIXES)[1]
            if msgid.startswith("screen.")}
    return {**(_EN if lang == "en" else _PT), **said}


def word(lang: str, msgid: str) -> str:
    """The text of ``msgid`` (one of ``PREFIXES``) in ``lang``; the msgid itself when no catalog has
    it (as ``portgate.i18n.gettext``)."""
    return part("en" if lang == "en" else "pt", PREFIXES)[0].gettext(msgid)
