"""The office web application's words, pt-BR first, English available (``t(lang, key)``), from the
gettext catalogs (``portgate/locale/<locale>/LC_MESSAGES/portgate.po``, ``portgate.i18n``;
docs/i18n.md says how a developer adds a text).

A key missing from a language falls back to pt-BR, and a key missing from both is shown as the key
itself (visible in a test, never an exception in a page)."""

from __future__ import annotations

from portgate.i18n import LANGS, gettext

__all__ = ["LANGS", "MESSAGES", "t"]

# The old hand-kept table: empty. A text another branch still adds here (key: (pt-BR, English)) is
# shown until ``python -m testkit.i18n absorb`` moves it into the catalogs (tests/test_i18n_catalogs.py
# fails while it is here).
MESSAGES: dict[str, tuple[str, str]] = {
    # key: (pt-BR, English)
    # the public payslip verification page (central/web/routes/verify.py)
    # the read log and the audit log (central/web/routes/logs.py)
    # the worker list, the add-worker form and the card actions (issue 34)
    # the pay run (issue 34): one row per worker, mark paid in two steps, the reversal
    # why a worker whose turn came was passed over (central.rotation.eligibility.Ineligible)
    # a gate read's outcome (edge.rules.model.Outcome) as the what-if page names it
    # the error page of an address or method the application does not serve (Starlette's 404, 405)
    # a gate's card readers (its status message) and the reader alarm
    # an office of several ports (central/web/ports.py): the port selector and a page not split by port
    # the escala page: a row whose period is over has no refusal or substitution
    # the audit log of a user who sees some of the ports (audit_log.port, 0031)
    # a commit the ledger holds for its synchronous replicas (central.web.commit_wait.CommitPending)
    # the ledger lost while a change was being committed (central.web.errors.ledger_unreachable)
}


def t(lang: str, key: str) -> str:
    """The text of ``key`` in ``lang`` (``pt`` or ``en``)."""
    text = gettext(lang, key)
    if text == key and key in MESSAGES:  # not absorbed yet
        return MESSAGES[key][1 if lang == "en" else 0]
    return text
