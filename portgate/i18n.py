"""The words a person reads, from the gettext catalogs: ``portgate/locale/<locale>/LC_MESSAGES/portgate.po``.

One catalog per language (``pt_BR`` first, ``en``), one domain (``portgate``), key-style msgids
(``nav_cases``, ``flag.BORROWED_CARD``, ``svc.no_case``): the msgid names the text, each ``.po`` holds
its words. ``docs/i18n.md`` says how a developer adds a text; ``python -m testkit.i18n extract``
refreshes ``portgate/locale/portgate.pot`` (Babel's extraction over ``babel.cfg``).

The ``.po`` files are read as they are (``babel.messages.pofile``) and turned into gettext
translations in memory, once per process: a fresh clone runs without a build step, and no compiled
``.mo`` can fall behind its ``.po``. Babel is imported only when the whole catalogs are read: a
``part`` is read with ``polib`` (Babel's catalog module imports ``babel.dates`` and ``babel.core``: 1.4 MB
of the screen's 40, issue 33). A msgid missing from English falls back to pt-BR; missing from
both, the msgid itself is shown (visible in a page and failing ``tests/test_i18n_catalogs.py``,
never an exception). A process that shows only a few families of texts (the watchman's screen)
reads just those, one language at a time: ``part``.
"""

from __future__ import annotations

import functools
import gettext as _gettext
import io
import itertools
from pathlib import Path
from typing import TYPE_CHECKING

import polib

if TYPE_CHECKING:
    from babel.messages.catalog import Catalog
    from babel.support import Translations

#: the page languages (a session's ``lang``, ``?lang=``, a config's ``lang``): pt-BR first
LANGS = ("pt", "en")
#: page language -> catalog locale
LOCALES = {"pt": "pt_BR", "en": "en"}
DOMAIN = "portgate"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"


def po_path(locale: str) -> Path:
    """The ``.po`` file of ``locale`` (``pt_BR``, ``en``)."""
    return LOCALE_DIR / locale / "LC_MESSAGES" / f"{DOMAIN}.po"


def normal_lang(value: str | None) -> str:
    """A page language from a setting or request value: ``"en"`` for English (``en``, ``en_US``),
    anything else pt-BR (``"pt"``)."""
    return "en" if (value or "").lower().replace("-", "_").split("_")[0] == "en" else "pt"


@functools.cache
def _catalog(locale: str) -> Catalog:
    from babel.messages.pofile import read_po  # lazy: babel.core and babel.dates, not needed by a part (the screen)

    with po_path(locale).open("rb") as f:
        return read_po(f, locale=locale, domain=DOMAIN)


def _load(locale: str) -> Translations:
    from babel.messages.mofile import write_mo  # lazy: as _catalog's
    from babel.support import Translations  # lazy: babel.dates and numbers, not needed by a part (the screen)

    buf = io.BytesIO()
    write_mo(buf, _catalog(locale))  # untranslated and fuzzy entries are left out: they fall back
    buf.seek(0)
    return Translations(buf, domain=DOMAIN)


@functools.cache
def translations(lang: str) -> Translations:
    """The gettext translations of a page language (``"pt"``, ``"en"``; anything else is pt-BR),
    English falling back to pt-BR. Read once per process; raises ``OSError`` or Babel's
    ``PoFileError`` only when the installed catalogs are missing or broken (a packaging fault)."""
    lang = normal_lang(lang)
    pt = _load(LOCALES["pt"])
    if lang == "pt":
        return pt
    found = _load(LOCALES[lang])
    found.add_fallback(pt)
    return found


def gettext(lang: str, msgid: str) -> str:
    """The text of ``msgid`` in ``lang``: ``gettext("pt", "nav_cases")`` -> ``"Processos"``; the
    msgid itself when no catalog has it."""
    return translations(lang).gettext(msgid)


def ngettext(lang: str, singular: str, plural: str, n: int) -> str:
    """The plural form of ``n`` in ``lang`` (gettext's ``ngettext``)."""
    return translations(lang).ngettext(singular, plural, n)


def _part_po(locale: str, prefixes: tuple[str, ...]) -> polib.POFile:
    """The catalog of ``locale`` holding only its header and the msgids that start with one of
    ``prefixes``: the ``.po`` text is cut at its blank lines (one entry each, as ``extract`` writes
    them) and only those entries go to ``polib``."""
    text = po_path(locale).read_text(encoding="utf-8")
    entries = text.split("\n\n")
    keep = [entries[0]] + [e for e in entries[1:] if _msgid_of(e).startswith(prefixes)]
    return polib.pofile("\n\n".join(keep) + "\n", encoding="utf-8", wrapwidth=0)


def _msgid_of(entry: str) -> str:
    """The msgid of one entry as written (escapes kept: enough to compare its start); a long one
    (``msgid ""`` and its lines, as Babel wraps it: a command's help) joined."""
    lines = iter(entry.splitlines())
    for line in lines:
        if line == 'msgid ""':
            return "".join(more[1:-1] for more in itertools.takewhile(lambda x: x.startswith('"'), lines))
        if line.startswith('msgid "'):
            return line[7:-1]
    return ""  # a comment block, an obsolete entry (``#~``): not kept


@functools.cache
def part(lang: str, prefixes: tuple[str, ...]) -> tuple[_gettext.GNUTranslations, tuple[str, ...]]:
    """``(translations, msgids)`` of a page language with only the msgids starting with one of
    ``prefixes`` (English falling back to pt-BR's part): for a process that reads a few families,
    the watchman's screen (``edge.display.texts``: 83 of 1,479 msgids), instead of parsing every
    text of the office at start. ``msgids``: the part's msgids with a text, sorted. Untranslated
    and fuzzy entries are left out (they fall back), as in ``translations``. Each language is read
    the first time it is asked for. Raises ``OSError`` (polib's for a broken ``.po`` too) only when
    the installed catalogs are missing or broken (a packaging fault)."""
    lang = normal_lang(lang)
    catalog = _part_po(LOCALES[lang], prefixes)
    found = _gettext.GNUTranslations(io.BytesIO(catalog.to_binary()))
    if lang != "pt":
        found.add_fallback(part("pt", prefixes)[0])
    ids = tuple(sorted(e.msgid for e in catalog.translated_entries() if e.msgid))
    return found, ids


@functools.cache
def msgids(prefix: str = "") -> tuple[str, ...]:
    """The msgids of the pt-BR catalog that start with ``prefix`` (``"screen."``), sorted."""
    return tuple(sorted(m.id for m in _catalog(LOCALES["pt"]) if isinstance(m.id, str) and m.id
                        and m.id.startswith(prefix) and m.string))


#: the msgid families the gate's process shows or journals (the decision's words, the indicator's
#: head words, its own failure texts): read as one ``part``, never the office's whole catalogs
GATE_PREFIXES = ("gate.", "indicator.", "post.", "function.")


def gate_words(lang: str) -> _gettext.GNUTranslations:
    """The gate's texts of ``lang`` (``GATE_PREFIXES``; English falling back to pt-BR): a ``part``,
    so the gate does not import Babel nor parse 1,500 office texts (4-5 MB of its 60 MB peak RSS
    target, issue 32 item 4). ``.gettext(msgid)`` returns the msgid itself when no catalog has it."""
    return part(lang, GATE_PREFIXES)[0]
