"""The screen's labels, pt-BR first, English (``labels(lang)``), from the gettext catalogs (msgids
``screen.<label>``, ``portgate.i18n``; docs/i18n.md).

``_PT`` and ``_EN`` are the old hand-kept tables, empty: a label another branch still adds there is
shown until ``python -m testkit.i18n absorb`` moves it into the catalogs."""

from __future__ import annotations

import functools

from portgate.i18n import msgids, translations

_PT = {
}
_EN = {
}


@functools.cache
def labels(lang: str) -> dict[str, str]:
    """Labels in ``lang`` ("en", anything else is pt-BR): label -> text, every ``screen.*`` msgid."""
    lang = "en" if lang == "en" else "pt"
    found = translations(lang)
    said = {msgid.removeprefix("screen."): found.gettext(msgid) for msgid in msgids("screen.")}
    return {**(_EN if lang == "en" else _PT), **said}
