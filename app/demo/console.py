"""The demo console's words (``portgate demo``): its titles and column headers in the run's
language, and the lines of the reconciliation table.
"""

from __future__ import annotations

import re

from portgate.i18n import gettext

#: The reconciliation table: one word per column (the header is read by people and by scripts
#: alike; a script reads the English words of ``--lang en``): the gate, events in its journal,
#: decisions in its decisions file, events of it in the ledger, journal events missing from the
#: ledger, seqs the office still waits for.
RECONCILIATION_COLUMNS = ("gate", "journaled", "decisions", "ledger", "missing", "gaps")
_RECONCILIATION_WIDTHS = (10, 9, 9, 9, 7, 5)

#: The demo console's own titles and column headers in the run's language (``--lang``; the
#: watchman's messages come from the gates, configured with the same language): msgids
#: ``demo.<key>`` of the catalogs (docs/i18n.md); the English column words are the script-read
#: ``RECONCILIATION_COLUMNS``.
TEXT_KEYS = ("reconciliation", "pay", "billing", "evidence", "no_decision", "on_hold", "held", "badge_shown")


def texts(lang: str) -> dict:
    """The console texts of ``lang`` (``pt`` or ``en``; anything else reads as ``pt``, the default)."""
    lang = "en" if lang == "en" else "pt"
    words = {key: gettext(lang, "demo." + key) for key in TEXT_KEYS}
    words["columns"] = RECONCILIATION_COLUMNS if lang == "en" else tuple(gettext(lang, "demo.columns").split())
    return words


def reconciliation_line(cells, lang: str = "en") -> str:
    """One line of the reconciliation table: the gate left-aligned, the counts right-aligned under
    their header word (``texts(lang)["columns"]``; a column is as wide as its header word)."""
    widths = [max(w, len(word)) for w, word in zip(_RECONCILIATION_WIDTHS, texts(lang)["columns"], strict=True)]
    gate, *counts = cells
    return "  " + " ".join([f"{gate:<{widths[0]}}"]
                           + [f"{c:>{w}}" for c, w in zip(counts, widths[1:], strict=True)])


#: ``central.pay.billing``'s P8 line as the billing document (pt-BR, the shipowner's) writes it
_P8 = re.compile(r"Transporte cais ↔ navio ao largo (?P<ship>\S+) \(ida e volta\), vigia (?P<registration>\S+), "
                 r"período (?P<periods>.+)\Z")


def billing_words(lang: str, owner: str, ship: str, description: str) -> tuple[str, str]:
    """A billing line's shipowner and description as the console shows them in ``lang``: the
    document's own pt-BR words (``navio <ship>`` for a ship whose owner is not listed, the P8 trip)
    in English under ``--lang en`` (``demo.billing_ship``, ``demo.billing_p8``); others as written."""
    if lang != "en":
        return owner, description
    if owner == f"navio {ship}":
        owner = gettext(lang, "demo.billing_ship").format(ship=ship)
    m = _P8.match(description)
    return owner, gettext(lang, "demo.billing_p8").format(**m.groupdict()) if m else description
