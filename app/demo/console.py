"""The demo console's words (``portgate demo``): its titles and column headers in the run's
language, and the lines of the reconciliation table.
"""

from __future__ import annotations

#: The reconciliation table: one word per column (the header is read by people and by scripts
#: alike; a script reads the English words of ``--lang en``): the gate, events in its journal,
#: decisions in its decisions file, events of it in the ledger, journal events missing from the
#: ledger, seqs the office still waits for.
RECONCILIATION_COLUMNS = ("gate", "journaled", "decisions", "ledger", "missing", "gaps")
_RECONCILIATION_WIDTHS = (10, 9, 9, 9, 7, 5)

#: The demo console's own titles and column headers in the run's language (``--lang``; the
#: watchman's messages come from the gates, configured with the same language).
TEXTS = {
    "pt": {
        "columns": ("portaló", "diário", "decisões", "livro", "faltam", "lacunas"),
        "reconciliation": "Conciliação (diário de cada portaló × livro do escritório)",
        "pay": "Demonstrativos de pagamento (RULES.md P1-P7), do livro do escritório",
        "billing": "Cobrança ao armador (P8), do livro do escritório",
        "evidence": "Pacote de provas de {registration} (portgate evidence verify {bundle})",
        "no_decision": "(nenhuma decisão)",
    },
    "en": {
        "columns": RECONCILIATION_COLUMNS,
        "reconciliation": "Reconciliation (gate journals vs office ledger)",
        "pay": "Pay statements (RULES.md P1-P7), from the ledger",
        "billing": "Billing to the shipowner (P8), from the ledger",
        "evidence": "Evidence bundle of {registration} (portgate evidence verify {bundle})",
        "no_decision": "(no decision)",
    },
}


def texts(lang: str) -> dict:
    """The console texts of ``lang`` (``pt`` or ``en``; anything else reads as ``pt``, the default)."""
    return TEXTS.get(lang, TEXTS["pt"])


def reconciliation_line(cells, lang: str = "en") -> str:
    """One line of the reconciliation table: the gate left-aligned, the counts right-aligned under
    their header word (``texts(lang)["columns"]``; a column is as wide as its header word)."""
    widths = [max(w, len(word)) for w, word in zip(_RECONCILIATION_WIDTHS, texts(lang)["columns"], strict=True)]
    gate, *counts = cells
    return "  " + " ".join([f"{gate:<{widths[0]}}"]
                           + [f"{c:>{w}}" for c, w in zip(counts, widths[1:], strict=True)])
