"""What the watchman reads, as keys and values: the rules core says which head, reasons, actions
and rules a decision has (``Said``); the words are the gettext catalogs' (docs/i18n.md), put in at
the gate's edge by ``edge.display.said`` (the journal's pt-BR ``message``, the replay's lines, the
indicator). Pure: no I/O, no language.

A message reads ``HEAD — reason; reason. Action. Action. [G2, G4]``, e.g.
``NEGADO — cartão bloqueado (confiscado). Retenha o cartão e chame o fiscal. [G2]``. The msgids:
``gate.head.<head>``, ``gate.reason.<key>`` (a ``str.format`` template over the fields the engine
gives: registrations, ship, period), ``gate.action.<key>``, ``gate.status.<card status>`` (the
``{status}`` field in plain words).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping

#: the heads (a decision's outcome): msgid ``gate.head.<key>``
HEADS: tuple[str, ...] = (
    "admit",
    "exit",
    "deny",
    "inspector",
    "aboard",
)

#: reason key -> the fields its template uses: msgid ``gate.reason.<key>``
REASONS: dict[str, tuple[str, ...]] = {
    "G1.malformed": ("uid",),
    "G1.unknown": ("uid",),
    "G1.ambiguous": ("count", "uid"),
    "G1.enrol": ("uid",),
    "ENROL.read": (),
    "G2.control": ("status",),
    "G2.badge": ("status",),
    "G2.inspector": ("status",),
    "G3.no_registration": ("registration",),
    "G3.cancelled": (),
    "G3.suspended": (),
    "G3.health_missing": (),
    "G3.health_expired": ("exam", "months"),
    "G3.booklet": ("year",),
    "G4.badge_missing": (),
    "G4.badge_unknown": ("uid",),
    "G4.mismatch": ("badge_registration", "registration"),
    "G4.mismatch_after": ("badge_registration", "registration"),
    "G4.badge_alone": (),
    "G5.open_shift": ("gate_id", "ship"),
    "G5.dispatched": ("period", "ship"),
    "G6.not_dispatched": (),
    "G6.rotation_jump": ("other", "period", "post"),
    "G6.late": ("late", "period", "tolerance"),
    "G7.rest": ("hours", "rest"),
    "G8.stale": (),
    "G8.clock": (),
    "G9.no_entry": (),
    "G9.aboard": ("minutes", "since"),
    "G9.aboard_in": ("since",),
    "G9.early_exit": ("early", "period"),
    "G13.other_boot": ("since",),
    "G12.wrong_category": ("category", "function"),
    "G10.confiscate": ("article",),
    "G10.session": (),
    "G10.meal_mode": (),
    "G10.meal_worked": ("period",),
    "G10.meal_no_shift": (),
    "G10.meal_no_dispatch": (),
    "G10.disabled": (),
    "ok.admit": ("period", "post", "ship", "ship_name"),
    "ok.exit": ("period",),
    "ok.exit_unknown": (),
}

#: what the watchman does: msgid ``gate.action.<key>``
ACTIONS: tuple[str, ...] = (
    "retain",
    "call_inspector",
    "present_badge",
    "present_card",
    "send_ahead",
)

#: card statuses named in plain words for the ``{status}`` field: msgid ``gate.status.<status>``
STATUS_WORDS: tuple[str, ...] = (
    "lost",
    "replaced",
    "confiscated",
    "active",
)


@dataclasses.dataclass(frozen=True, slots=True)
class Said:
    """What a decision says, without words: the head (``"deny"``), each reason's key with its
    fields (``("G2.control", (("status", "lost"),))``), the actions and the failed rules."""

    head: str
    reasons: tuple[tuple[str, tuple[tuple[str, object], ...]], ...] = ()
    actions: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()


def said(head: str, reasons: Iterable[tuple[str, Mapping[str, object]]], actions: Iterable[str],
         rules: Iterable[str]) -> Said:
    """The ``Said`` of a decision; an action named twice counts once, and "retain" already says
    "call the inspector"."""
    wanted = list(dict.fromkeys(actions))
    if "retain" in wanted and "call_inspector" in wanted:
        wanted.remove("call_inspector")
    return Said(head=head, reasons=tuple((key, tuple(sorted(params.items()))) for key, params in reasons),
                actions=tuple(wanted), rules=tuple(dict.fromkeys(rules)))


class _Blank(dict):
    def __missing__(self, key: str) -> str:
        return "?"


def render(message: Said, words: Callable[[str], str]) -> str:
    """The text of ``message`` with ``words`` (msgid -> text in one language, the caller's
    catalogs). A field a template names but the engine did not give renders as ``?``; a post or a
    function code the catalogs name (``post.<code>``, ``function.<code>``) reads as its name, any
    other as it is."""
    texts = []
    for key, params in message.reasons:
        values = _Blank(params)
        status = values.get("status")
        if isinstance(status, str) and status in STATUS_WORDS:
            values["status"] = words(f"gate.status.{status}")
        for field in ("post", "function"):  # a code the catalogs name (``portalo`` -> ``portaló``)
            code = values.get(field)
            if isinstance(code, str) and (named := words(f"{field}.{code}")) != f"{field}.{code}":
                values[field] = named
        template = words(f"gate.reason.{key}")
        texts.append(template.format_map(values) if REASONS.get(key) else template)
    text = words(f"gate.head.{message.head}") + (" — " + "; ".join(texts) + "." if texts else ".")
    for action in message.actions:
        text += " " + words(f"gate.action.{action}")
    if message.rules:
        text += " [" + ", ".join(message.rules) + "]"
    return text
