"""The watchman's words for a decision of the rules core: ``edge.rules.messages.Said`` (keys and
values, no language) rendered from the gettext catalogs (``gate.head.*``, ``gate.reason.*``,
``gate.action.*``, ``gate.status.*``; docs/i18n.md) in pt-BR and English.

The gate journals the pt-BR text (``TapPayload.message``, the wire contract is unchanged), shows
either language on its indicator and the replay prints the run's; all of them get the text here,
right after the rules decide (``decide``), so the rules core stays pure and language-free.
"""

from __future__ import annotations

import dataclasses
import functools

from edge.rules import engine
from edge.rules.messages import Said, render
from edge.rules.model import Decision
from portgate.i18n import gate_words


@functools.lru_cache(maxsize=4096)
def text(message: Said, lang: str) -> str:
    """``message`` in ``lang`` (``"pt"``, ``"en"``): ``NEGADO — cartão desconhecido (0A04). [G1]``."""
    return render(message, gate_words(lang).gettext)


def worded(decision: Decision) -> Decision:
    """``decision`` with ``message_pt`` and ``message_en`` rendered from its ``said``; a decision
    without one (made at the edge with its words, ``edge.loop_records.internal_failure``) as it is."""
    if decision.said is None:
        return decision
    pt, en = words(decision.said)
    return dataclasses.replace(decision, message_pt=pt, message_en=en)


def words(message: Said) -> tuple[str, str]:
    """``(pt-BR, English)`` texts of ``message``; a field value that cannot be hashed (a list) is
    rendered without the cache."""
    try:
        return _both(message)
    except TypeError:
        return render(message, gate_words("pt").gettext), render(message, gate_words("en").gettext)


@functools.lru_cache(maxsize=4096)
def _both(message: Said) -> tuple[str, str]:
    """``words`` of a hashable ``message``: one cache look-up per decision (the ``Said`` hashed and
    compared once, not once per language; the same 4,096 entries as ``text``'s, which the gate
    loop no longer fills)."""
    return render(message, gate_words("pt").gettext), render(message, gate_words("en").gettext)


def decide(*args, **kwargs) -> Decision:
    """``edge.rules.engine.decide`` with the decision's words (the gate loop's and the replay's),
    put in as the engine makes the decision (one ``Decision``, not one and a copy)."""
    return engine.decide(*args, words=words, **kwargs)
