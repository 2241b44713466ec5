"""The decision's sentence on the watchman's screen in the screen's language.

The journal keeps the pt-BR text the gate showed (``TapPayload.message``: the wire contract and
the evidence keep it as it is, docs/i18n.md "The gate's messages to the watchman"). An English
page reads it back into the keys and values the rules core said (``edge.rules.messages.Said``: each
reason by the pt-BR template of its ``gate.reason.<key>``, the card status, post and function names
by their pt-BR words, the actions, the rules) and words them again from the English catalog,
exactly as the gate's indicator and ``replay --lang en`` do. A sentence it cannot read back (a gate
of an older version worded it otherwise) stays as journaled: the screen names each failed rule in
English beside it. Pure: texts in, text out.
"""

from __future__ import annotations

import functools
import re

from edge.display.texts import PREFIXES, word
from edge.rules.messages import ACTIONS, HEADS, REASONS, STATUS_WORDS, Said, render
from portgate.i18n import part

_RULES = re.compile(r" \[(?P<rules>[^\]]*)\]\Z")
#: the internal failures' whole messages (``edge.loop_records``: no ``Said``), pt-BR -> msgid
_INTERNAL = ("gate.internal.deny", "gate.internal.exit", "gate.internal.no_journal",
             "gate.internal.no_journal_exit")
_NAMED = ("post", "function")  # fields a code's name was put in (``render``)


def reason(lang: str, journaled: str) -> str:
    """``journaled`` (the pt-BR message without its head word, ``board.reason_text``: ``cartão
    bloqueado (perdido). Retenha o cartão e chame o fiscal. [G2]``) in ``lang``: as it is in pt-BR,
    the English sentence (``card blocked (lost). Keep the card and call the inspector. [G2]``) in
    ``"en"``, or the journaled text when it cannot be read back."""
    if lang != "en" or not journaled:
        return journaled
    internal = _internal().get(journaled)
    if internal is not None:
        return _strip_head(word("en", internal))
    said = read_back(journaled)
    return journaled if said is None else _strip_head(render(said, functools.partial(word, "en")))


def read_back(journaled: str) -> Said | None:
    """The ``Said`` whose pt-BR text (without its head word) is ``journaled``, or None."""
    text, rules = journaled, ()
    m = _RULES.search(text)
    if m:
        text, rules = text[:m.start()], tuple(r for r in m["rules"].split(", ") if r)
    actions: list[str] = []
    found = True
    while found:
        found = False
        for key, said in _actions():
            if text.endswith(" " + said):
                text, found = text[:-len(said) - 1], True
                actions.insert(0, key)
                break
    for head, said in _heads():  # a decision without reasons: ``NEGADO. Apresente a chapa.``
        if text == said + ".":
            return Said(head=head, actions=tuple(actions), rules=rules)
    if not text.endswith("."):
        return None
    reasons = _reasons(text[:-1])
    return None if reasons is None else Said(head="deny", reasons=tuple(reasons), actions=tuple(actions),
                                             rules=rules)


def _reasons(text: str) -> list | None:
    """The reasons of ``r1; r2`` (each by its template, fields the shortest that fit), or None."""
    if not text:
        return []
    for key, rx in _templates():
        m = rx.match(text)
        if m is None:
            continue
        rest = text[m.end():]
        if rest and not rest.startswith("; "):
            continue
        more = _reasons(rest[2:]) if rest else []
        if more is not None:
            return [(key, tuple(sorted((k, _code(k, v)) for k, v in m.groupdict().items())))] + more
    return None


def _code(field: str, value: str) -> str:
    """A field's value as the rules core gave it: a card status or a post or function code back
    from its pt-BR word; any other value as it is."""
    if field == "status":
        return _words_back("gate.status.", STATUS_WORDS).get(value, value)
    if field in _NAMED:
        return _words_back(f"{field}.", ()).get(value, value)
    return value


@functools.cache
def _words_back(prefix: str, codes: tuple[str, ...]) -> dict[str, str]:
    """pt-BR word -> code of a family (``gate.status.``: ``STATUS_WORDS``; ``post.``,
    ``function.``: every msgid the screen's part holds)."""
    keys = codes or tuple(m.removeprefix(prefix) for m in part("pt", PREFIXES)[1] if m.startswith(prefix))
    return {word("pt", prefix + code): code for code in keys}


@functools.cache
def _templates() -> tuple[tuple[str, re.Pattern], ...]:
    """Each reason key with the regex of its pt-BR template (a field: the shortest text), longest
    template first (a template that begins another is tried after it)."""
    out = []
    for key in REASONS:
        template = _pt_text("gate.reason.", key)
        parts = re.split(r"\{(\w+)\}", template)
        rx = "".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>.+?)" for i, p in enumerate(parts))
        out.append((key, re.compile(rx + r"(?=; |\Z)", re.S), len(template)))
    return tuple((k, rx) for k, rx, _n in sorted(out, key=lambda x: -x[2]))


@functools.cache
def _actions() -> tuple[tuple[str, str], ...]:
    return tuple(sorted(((a, _pt_text("gate.action.", a)) for a in ACTIONS), key=lambda x: -len(x[1])))


@functools.cache
def _heads() -> tuple[tuple[str, str], ...]:
    return tuple((h, _pt_text("gate.head.", h)) for h in HEADS)


def _pt_text(family: str, key: str) -> str:
    """The pt-BR text of the msgid ``family + key`` (a key made at run time)."""
    msgid = family + key
    return word("pt", msgid)


@functools.cache
def _internal() -> dict[str, str]:
    out = {}
    for msgid in _INTERNAL:
        pt = word("pt", msgid)
        out[pt] = out[_strip_head(pt)] = msgid
    return out


def _strip_head(text: str) -> str:
    head, sep, rest = text.partition(" — ")
    return rest if sep else text
