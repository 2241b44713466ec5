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


def english_in(text: str) -> list[str]:
    """The ``ENGLISH`` words and raw flag codes in ``text`` (a page's visible text), sorted."""
    found = {w for w in ENGLISH if re.search(r"(?<![\w./-])" + re.escape(w) + r"(?![\w-]|\.\w)", text, re.I)}
    found |= {c for c in FLAG_CODES if re.search(r"\b" + re.escape(c) + r"\b", text)}
    return sorted(found)


#: a page's visible text without what a person types or reads as code (``<code>``: a filter's
#: example; a ``<textarea>``: a rulebook's TOML) and without scripts (JavaScript run in the page);
#: a file name (``workers.csv``) is not a word
VISIBLE_TEXT = """() => {
    const body = document.body.cloneNode(true);
    body.querySelectorAll('code, textarea, script, style, template, [hidden]').forEach(e => e.remove());
    return body.innerText; }"""
