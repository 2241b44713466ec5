"""English words a pt-BR page must not show (issue 33 item 9), kept with the tests that walk the pages
(tests/central/web/test_pt_words_browser.py, tests/edge/display/test_pt_words_screen.py)."""

from __future__ import annotations

import re

from wire.flags import Flag, ShiftFlag

#: English a pt-BR page has shown (issue 33 item 9) and its neighbours; matched as whole words,
#: any case, in the page's visible text
ENGLISH = ("tap admit", "tap exit", "tap deny", "reader", "readers", "registration", "suspended", "cancelled",
           "final: appeal waived", "appeal waived", "waived", "(office)", "(inspector)", "case", "appeal",
           "charge", "evidence", "decision", "worker", "workers", "gate", "ship", "shift", "flag", "flags",
           "admitted", "denied", "exit", "none", "unknown", "online", "offline", "since", "paid", "unpaid",
           "on hold", "due", "amount", "reprimand", "suspension", "cancellation", "upheld",
           "overturned", "import", "replaces", "replaced by", "confiscated", "lost", "active", "control",
           "badge", "inspector", "office", "alarm", "alarms", "coverage", "period", "post", "from", "until",
           "search", "save", "back", "login", "logout", "user", "password", "error")
FLAG_CODES = tuple(sorted({f.value for f in Flag} | {f.value for f in ShiftFlag}))
#: a post's function as the escala and the rulebooks keep it (config/rulebooks/gate-default.toml
#: ``[version.g12.categories]``, the pay terms' ``functions``): a page names it ("vigia-chefe"); the
#: codes a person could mistake for a word (``vigia``, ``estivador``, ``feitor``) are not listed
FUNCTION_CODES = ("vigia_chefe", "vigia_lider", "contramestre_geral", "motorista_armazem", "ajudante_feitor",
                  "motorista_guindaste")
#: stored JSON shown as it is (the audit page's detail column showed ``{"flag": "BORROWED_CARD", ...}``)
JSON_OBJECT = re.compile(r"""\{\s*"[^"\n]{1,60}"\s*:""")


def english_in(text: str) -> list[str]:
    """The ``ENGLISH`` words, raw flag and function codes and stored JSON (as ``{"…":``) in ``text``
    (a page's visible text), sorted."""
    found = {w for w in ENGLISH if re.search(r"(?<![\w./-])" + re.escape(w) + r"(?![\w-]|\.\w)", text, re.I)}
    found |= {c for c in FLAG_CODES + FUNCTION_CODES if re.search(r"\b" + re.escape(c) + r"\b", text)}
    if JSON_OBJECT.search(text):
        found.add('{"…":')
    return sorted(found)


#: a page's visible text without what a person types (a ``<textarea>``: a rulebook's TOML; an element
#: marked ``translate="no"``: the what-if's rulebook keys and values as the TOML writes them) and
#: without scripts (JavaScript run in the page); a file name (``workers.csv``) is not a word. Text in
#: a ``<code>`` is read too (the audit page showed its stored JSON in one: issue 33)
VISIBLE_TEXT = """() => {
    const body = document.body.cloneNode(true);
    body.querySelectorAll('textarea, script, style, template, [hidden], [translate="no"]').forEach(e => e.remove());
    return body.innerText; }"""
