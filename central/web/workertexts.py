"""The words of the worker's own pages (issue 35), pt-BR first, English available, from the gettext
catalogs (msgids ``w_*`` and ``pay_rule.P1``..; docs/i18n.md).

``word(lang, key)``: a worker page's word, or an office word (one catalog), so a missing key shows
itself (never an exception). ``pay_rule(lang, rule)``: a statement line's rule id in plain words
(RULES.md P1–P8, Decreto 83.611 arts. 25–27)."""

from __future__ import annotations

from central.web.i18n import t

# the old hand-kept tables: empty; an entry another branch adds is shown until ``python -m
# testkit.i18n absorb`` moves it into the catalogs
WORDS: dict[str, tuple[str, str]] = {
}

# a statement line's rule in plain words (RULES.md P; Decreto 83.611 arts. 25-27)
PAY_RULES: dict[str, tuple[str, str]] = {
    # production pay (RULES.md E, stevedores, DL 2.032/1940; C, dock workers, DL 3.844/1941)
}


def word(lang: str, key: str) -> str:
    """``key`` in ``lang`` (``pt`` or ``en``)."""
    if key in WORDS:  # not absorbed yet
        return WORDS[key][1 if lang == "en" else 0]
    return t(lang, key)


def pay_rule(lang: str, rule: str, description: str) -> str:
    """A line's rule in plain words, else its stored ``description``."""
    msgid = f"pay_rule.{rule}"
    text = t(lang, msgid)
    if text != msgid:
        return text
    found = PAY_RULES.get(rule)  # not absorbed yet
    return found[1 if lang == "en" else 0] if found else description
