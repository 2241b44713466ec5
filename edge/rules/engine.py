"""The gate decision, rules G1-G10 and G12 (RULES.md section G). Pure: no clock, database, socket or env.

``decide(view, presentation, now, rulebook) -> Decision`` evaluates every rule on every read and
returns every failed rule id in rule order (not just the first), the flags for the inspector and the
office, and the watchman's message in pt-BR and English (``edge.rules.messages``). Here: which read it
is (G1, G2, the badge G4, the stale copies G8, the worker aboard G9/G13, the inspector G10); the rules
of an entry attempt (G3, G5, G6, G7, G12) are in ``edge.rules.entry``.

What the gate loop does before and after (not here): it drops a second read of the same card inside
the debounce window and pairs a badge read with the control card read before or after it
(``edge.rules.pairing``) BEFORE calling ``decide``; after it, it journals the decision, opens or
closes the shift, records the flags on the card (``pending_flags``), opens the inspector session when
``opens_inspector_session`` and, on ``confiscate``, blocks the card locally and closes the session.
The readings chosen where RULES.md is silent are documented in ``docs/rules.md``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Mapping

from edge.rules import messages
from edge.rules.entry import entry_bounds, entry_rules, hours, hours_text, match_escala, minutes
from edge.rules.model import (
    Decision, Direction, EnrolMode, Flag, GateView, InspectorSession, Now, OpenShift, Outcome, Presentation,
)
from edge.rules.rulebook import GateRulebook
from portgate.records import Card, CardKind, CardStatus, EscalaEntry, Worker
from portgate.timeutil import as_utc, require_aware
from portgate.uid import collision_prone, normal_read

# G10: the confiscation reason is the flag pending on the card; its article of Decreto 83.611.
CONFISCATION_ARTICLES: dict[str, str] = {
    Flag.BORROWED_CARD.value: "83.611 art. 20 j/l",
    Flag.ROTATION_JUMP.value: "83.611 art. 20 i",
}
INSPECTOR_DECISION = "INSPECTOR_DECISION"
INSPECTOR_DECISION_ARTICLE = "83.611 art. 20 §1"

_FLAG_ORDER = {flag: i for i, flag in enumerate(Flag)}
Words = Callable[[messages.Said], tuple[str, str]]  # a Said's pt-BR and English texts (``decide``)


def _rule_order(rule: str) -> tuple[int, int, str]:
    """G rules in number order (G1 < G2 < G10), then the others (``ENROL``) by name."""
    if rule[:1] == "G" and rule[1:].isdigit():
        return (0, int(rule[1:]), "")
    return (1, 0, rule)


def is_whole_uid(uid: str) -> bool:
    """A canonical UID read whole (hex only), not a partial read (``<form>:<hex>``, DEZ10/DEZ8/W26):
    only a whole UID can be bound to a worker from enrol mode (issue 34)."""
    return bool(uid) and all(c in "0123456789ABCDEF" for c in uid)


@dataclasses.dataclass
class _Acc:
    """Collects failed rules, reasons, flags and actions while the rules are evaluated."""

    denying: set[str] = dataclasses.field(default_factory=set)
    failed: set[str] = dataclasses.field(default_factory=set)
    reasons: list[tuple[str, Mapping[str, object]]] = dataclasses.field(default_factory=list)
    flags: set[Flag] = dataclasses.field(default_factory=set)
    actions: list[str] = dataclasses.field(default_factory=list)
    card_uid: str | None = None
    words: Words | None = None  # ``decide``'s ``words``

    def fail(self, rule: str, key: str, *, deny: bool = True, flag: Flag | None = None,
             action: str | None = None, **params: object) -> None:
        self.failed.add(rule)
        if deny:
            self.denying.add(rule)
        self.reasons.append((key, params))
        if flag is not None:
            self.flags.add(flag)
        if action is not None:
            self.actions.append(action)

    def decision(self, outcome: Outcome, **fields: object) -> Decision:
        dispatch = fields.get("dispatch")
        if isinstance(dispatch, EscalaEntry) and outcome in (Outcome.ADMIT, Outcome.EXIT):
            key = "ok.admit" if outcome is Outcome.ADMIT else "ok.exit"
            self.reasons.insert(0, (key, {
                "ship": dispatch.ship, "ship_name": dispatch.ship_name or dispatch.ship,
                "post": dispatch.post, "period": dispatch.period,
            }))
        elif outcome is Outcome.EXIT:
            self.reasons.insert(0, ("ok.exit_unknown", {}))
        rules = tuple(sorted(self.failed, key=_rule_order))
        flags = tuple(sorted(self.flags, key=_FLAG_ORDER.__getitem__))
        said = messages.said(outcome.value, self.reasons, self.actions, rules)
        pt, en = self.words(said) if self.words is not None else ("", "")
        return Decision(
            outcome=outcome,
            rules_failed=rules,
            flags=flags,
            message_pt=pt,
            message_en=en,
            said=said,
            reasons=tuple(key for key, _ in self.reasons),
            card_uid=self.card_uid,
            **fields,
        )


def decide(view: GateView, presentation: Presentation, now: Now, rulebook: GateRulebook, *,
           enrol: EnrolMode | None = None, words: Words | None = None) -> Decision:
    """Decide one presentation at the gate ``view.gate_id`` (rules G1-G10, G12).

    ``now.wall`` must be an aware datetime (``ValueError`` otherwise: a programming error). Any
    state the view returns and any read text give a ``Decision``; nothing else is raised. Returns
    ADMIT (with the matched ``EscalaEntry``), EXIT (closes the open shift, G9; at an ``out`` reader
    with no open shift, EXIT flagged NO_ENTRY), ABOARD (the worker aboard read again before
    ``min_stay_minutes``, or at an ``in`` reader: changes nothing, G9; with an untrusted clock the
    stay is measured on the admitting boot's monotonic clock, and a shift admitted in another boot
    is EXIT flagged CLOCK_UNTRUSTED, G13), DENY (a blocked card is always DENY, G2; an entry
    attempt past the late tolerance is DENY LATE_ARRIVAL, G6) or INSPECTOR (G10, ``opens_inspector_session``; the inspector's second read opens meal mode,
    ``opens_meal_mode``); in meal mode a worker aboard is ABOARD with ``meal_worked`` (P6).

    ``enrol``: the office's enrol mode at this gate (issue 34), an input like the store: while it
    is active (``EnrolMode.active(now.mono_ns)``) a card the view does not know, read with a whole
    UID (not a partial or ambiguous read), is DENY with rules ``G1`` and ``ENROL`` ("cartão em
    cadastro"): nobody is admitted with it, and the tap is the office's candidate. A known card
    is decided as always (the gate keeps working; enrol mode waits for an unknown card).

    ``words``: a pure ``Said -> (pt-BR, English)`` (``edge.display.said.words``) filling
    ``message_pt``/``message_en`` as the decision is made; without it they stay empty.
    """
    wall = require_aware(now.wall, "now.wall")
    acc = _Acc(words=words)
    uid = _canonical(presentation.uid)
    if uid is None:  # G1, 83.611 art. 1: the reader produced no valid UID
        acc.fail("G1", "G1.malformed", uid=_short(presentation.uid))
        return acc.decision(Outcome.DENY)
    card = view.card(uid)
    if card is None:  # G1, 83.611 art. 1; a partial read two cards share names neither
        twins = view.cards_sharing(uid)
        if enrol is not None and enrol.active(now.mono_ns) and twins == 0 and is_whole_uid(uid):
            acc.fail("G1", "G1.enrol", uid=uid)
            acc.fail("ENROL", "ENROL.read", uid=uid)
            acc.card_uid = uid
            return acc.decision(Outcome.DENY)
        acc.fail("G1", "G1.ambiguous" if twins > 1 else "G1.unknown", uid=uid, count=twins)
        # G8: the copy that does not know the card may be stale or empty (a quarantined store
        # before the office resends it): the watchman and the office are told so
        _check_data(view, now, wall, rulebook, acc)
        return acc.decision(Outcome.DENY)
    acc.card_uid = card.uid
    if collision_prone(uid):  # G1 reading: matched on 24 bits only
        acc.flags.add(Flag.PARTIAL_UID)
    if card.kind is CardKind.INSPECTOR:
        return _inspector_card(card, rulebook, acc, view.inspector_session(), now)
    if card.kind is CardKind.BADGE:
        return _badge_alone(view, presentation, card, rulebook, acc)
    return _control_card(view, presentation, now, wall, rulebook, card, acc)


def _inspector_card(card: Card, rb: GateRulebook, acc: _Acc, session: InspectorSession | None,
                    now: Now) -> Decision:
    """G10 (83.611 art. 20 §1): an active inspector card opens inspector mode. The same card read
    again while its session is open toggles the session between confiscation and meal mode (P6,
    83.611 art. 26 d: the next control card's meal interval was worked)."""
    common = {"registration": card.registration, "card_kind": card.kind.value}
    if rb.g2.enabled and card.status is not CardStatus.ACTIVE:
        acc.fail("G2", "G2.inspector", flag=Flag.RETAIN_CARD, action="retain", status=card.status.value)
        return acc.decision(Outcome.DENY, **common)
    if not rb.g10.enabled:
        acc.fail("G10", "G10.disabled")
        return acc.decision(Outcome.DENY, **common)
    own = (session is not None and session.inspector_uid == card.uid
           and session.until_mono_ns > now.mono_ns)
    if own and session.mode != "meal":  # P6: the second read of the inspector's card
        acc.flags.add(Flag.MEAL_MODE)
        acc.reasons.append(("G10.meal_mode", {}))
        return acc.decision(Outcome.INSPECTOR, opens_inspector_session=True, opens_meal_mode=True,
                            **common)
    acc.reasons.append(("G10.session", {}))
    return acc.decision(Outcome.INSPECTOR, opens_inspector_session=True, **common)


def _badge_alone(view: GateView, p: Presentation, card: Card, rb: GateRulebook,
                 acc: _Acc) -> Decision:
    """A badge (chapa) not paired with a control card (G4, 83.611 art. 20 j, l): DENY under G4.

    Read just after a control card of another registration that was already decided (an optional
    badge, or an exit; ``p.follows_uid``): the mismatch "in either order" -> DENY of this badge read,
    flag BORROWED_CARD naming both registrations (``registration`` = the control card's,
    ``badge_registration`` = the badge's), call the inspector; the card's decision stands. Else the
    badge came without a control card: present the control card."""
    if rb.g2.enabled and card.status is not CardStatus.ACTIVE:
        acc.fail("G2", "G2.badge", flag=Flag.RETAIN_CARD, action="retain", status=card.status.value)
    follows_uid = _canonical(p.follows_uid) if p.follows_uid is not None else None
    follows = view.card(follows_uid) if follows_uid is not None else None
    if (rb.g4.enabled and follows is not None and follows.kind is CardKind.CONTROL
            and follows.registration != card.registration):
        acc.fail("G4", "G4.mismatch_after", flag=Flag.BORROWED_CARD, action="call_inspector",
                 registration=follows.registration, badge_registration=card.registration)
        return acc.decision(Outcome.DENY, registration=follows.registration,
                            badge_registration=card.registration, card_kind=card.kind.value)
    acc.fail("G4", "G4.badge_alone", action="present_card")
    return acc.decision(Outcome.DENY, registration=card.registration, card_kind=card.kind.value)


def _control_card(view: GateView, p: Presentation, now: Now, wall: dt.datetime,
                  rb: GateRulebook, card: Card, acc: _Acc) -> Decision:
    reg = card.registration
    tz = rb.tz
    common: dict[str, object] = {"registration": reg, "card_kind": card.kind.value}
    direction = p.direction if p.direction in _DIRECTIONS else _BOTH

    # G2 (83.611 art. 20 §1): lost, replaced or confiscated -> keep the card for the inspector. A
    # blocked card never opens or closes a shift, whoever shows it and wherever its holder is.
    blocked = rb.g2.enabled and card.status is not CardStatus.ACTIVE
    if blocked:
        acc.fail("G2", "G2.control", flag=Flag.RETAIN_CARD, action="retain", status=card.status.value)

    open_shift = view.open_shift(reg)
    aboard = open_shift is not None and open_shift.gate_id == view.gate_id  # G9
    session = view.inspector_session()
    confiscating = rb.g10.enabled and session is not None and session.until_mono_ns > now.mono_ns
    exit_read = aboard or (direction == _OUT and rb.g9.enabled)
    worker = view.worker(reg) if not aboard else None  # read once: G3, G4 per category, G12
    # The inspector presents the card to confiscate: no badge is asked for (G4 reading).
    badge_reg = _check_badge(view, p, rb, reg, acc, exiting=exit_read or confiscating, worker=worker)
    if badge_reg is not None:
        common["badge_registration"] = badge_reg
    _check_data(view, now, wall, rb, acc)  # G8

    if confiscating and session.mode == "meal":  # P6 (83.611 art. 26 d) recorded at the gate
        return _meal_worked(open_shift if aboard else None, blocked, acc, common)
    if confiscating:
        if not aboard:
            entry_rules(view, reg, worker, open_shift, wall, rb, acc)
        return _confiscate(view, p, card, acc, common)
    if aboard:
        if blocked:  # G2: the holder's shift stays open
            return acc.decision(Outcome.DENY, **common)
        return _aboard_read(open_shift, now, wall, direction, rb, acc, common)  # G9, G13
    if direction == _OUT and rb.g9.enabled:
        if blocked:  # G2: a blocked card records no exit either
            return acc.decision(Outcome.DENY, **common)
        # G9: an exit reader and no open shift -> EXIT with no recorded entry.
        admit_entry, late_entry = match_escala(view, reg, wall, rb)
        acc.fail("G9", "G9.no_entry", deny=False, flag=Flag.NO_ENTRY)
        return acc.decision(Outcome.EXIT, dispatch=admit_entry or late_entry, **common)
    matched = entry_rules(view, reg, worker, open_shift, wall, rb, acc)
    if acc.denying:
        return acc.decision(Outcome.DENY, **common)
    return acc.decision(Outcome.ADMIT, dispatch=matched, **common)


_DIRECTIONS = frozenset(d.value for d in Direction)
# read on every tap: an enum member's ``.value`` is a Python-level property call
_IN, _OUT, _BOTH = Direction.IN.value, Direction.OUT.value, Direction.BOTH.value


def _aboard_read(open_shift: OpenShift, now: Now, wall: dt.datetime, direction: str,
                 rb: GateRulebook, acc: _Acc, common: dict[str, object]) -> Decision:
    """G9 (83.611 arts. 9, 20 b, e): a read by the worker aboard. Sooner than ``min_stay_minutes``
    after the admit, or at an entry-only reader: ABOARD (changes nothing). Otherwise EXIT, flagged
    EARLY_EXIT when more than ``early_exit_tolerance_min`` before the ordinary period's end.

    G13 (operational): while the clock is untrusted (``now.clock_trusted`` False) the stay is
    measured only on the monotonic clock of the boot that admitted him (``open_shift.boot_id`` ==
    ``now.boot_id``: ``now.mono_ns - open_shift.admit_mono_ns``); a shift admitted in another boot
    (or one whose boot is not known) has no measured stay: the read is EXIT flagged
    CLOCK_UNTRUSTED, never ABOARD. An estimated wall time (``now.estimated``) never flags
    EARLY_EXIT either: the office places the exit by boot, seq and monotonic time (CLOCK_PLACED)."""
    admitted = as_utc(open_shift.admitted_at)
    if rb.g9.enabled:
        local_admit = admitted.astimezone(rb.tz).strftime("%H:%M") if admitted else "?"
        if direction == _IN:
            acc.reasons.append(("G9.aboard_in", {"since": local_admit}))
            return acc.decision(Outcome.ABOARD, dispatch=open_shift.dispatch, **common)
        stay = minutes(rb.g9.min_stay_minutes)
        if not now.clock_trusted:
            same_boot = (open_shift.boot_id is not None and open_shift.boot_id == now.boot_id
                         and open_shift.admit_mono_ns is not None)
            if not same_boot:  # G13: no clock measures this stay; an estimate never swallows an exit
                acc.flags.add(Flag.CLOCK_UNTRUSTED)
                acc.reasons.append(("G13.other_boot", {"since": local_admit}))
            elif 0 <= now.mono_ns - open_shift.admit_mono_ns < rb.g9.min_stay_minutes * 60_000_000_000:
                acc.reasons.append(("G9.aboard", {"since": local_admit,
                                                  "minutes": rb.g9.min_stay_minutes}))
                return acc.decision(Outcome.ABOARD, dispatch=open_shift.dispatch, **common)
            else:
                acc.flags.add(Flag.CLOCK_UNTRUSTED)
        # A wall clock now before the admit is a clock fault: the exit is not refused (G13).
        elif admitted is not None and dt.timedelta(0) <= wall - admitted < stay:
            acc.reasons.append(("G9.aboard", {"since": local_admit,
                                              "minutes": rb.g9.min_stay_minutes}))
            return acc.decision(Outcome.ABOARD, dispatch=open_shift.dispatch, **common)
        bounds = entry_bounds(open_shift.dispatch, rb) if open_shift.dispatch is not None else None
        tolerance = minutes(rb.g9.early_exit_tolerance_min)
        if bounds is not None and not now.estimated and wall < bounds[1] - tolerance:
            acc.fail("G9", "G9.early_exit", deny=False, flag=Flag.EARLY_EXIT,
                     early=hours_text(bounds[1] - wall), period=open_shift.dispatch.period)
    return acc.decision(Outcome.EXIT, dispatch=open_shift.dispatch, **common)


def _meal_worked(open_shift: OpenShift | None, blocked: bool, acc: _Acc,
                 common: dict[str, object]) -> Decision:
    """P6 (83.611 art. 26 d) in the inspector's meal mode: the worker aboard through this gate had
    his meal interval worked. ABOARD (the shift stays open) with ``meal_worked`` and the flag
    MEAL_WORKED; a worker with no open shift here, or one admitted with no escala entry, is DENY
    under G10 (a blocked card: DENY under G2)."""
    if blocked:
        return acc.decision(Outcome.DENY, **common)
    if open_shift is None:
        acc.fail("G10", "G10.meal_no_shift")
        return acc.decision(Outcome.DENY, **common)
    if open_shift.dispatch is None:  # the office keys the meal by the shift's escala entry
        acc.fail("G10", "G10.meal_no_dispatch")
        return acc.decision(Outcome.DENY, **common)
    acc.flags.add(Flag.MEAL_WORKED)
    acc.reasons.append(("G10.meal_worked", {"period": open_shift.dispatch.period}))
    return acc.decision(Outcome.ABOARD, meal_worked=True, dispatch=open_shift.dispatch, **common)


def _confiscate(view: GateView, p: Presentation, card: Card, acc: _Acc,
                common: dict[str, object]) -> Decision:
    """G10 (83.611 art. 20 §1): in inspector mode the control card is confiscated; the reason is
    the flag raised on this read or pending on the card (ROTATION_JUMP -> art. 20 i, BORROWED_CARD
    -> art. 20 j/l), else the inspector's own decision (art. 20 §1)."""
    raised = [f.value for f in sorted(acc.flags, key=_FLAG_ORDER.__getitem__)]
    pending = [str(f) for f in view.pending_flags(card.uid)]
    reason = next((f for f in raised + pending if f in CONFISCATION_ARTICLES), INSPECTOR_DECISION)
    article = CONFISCATION_ARTICLES.get(reason, INSPECTOR_DECISION_ARTICLE)
    acc.failed.add("G10")
    acc.flags.add(Flag.CONFISCATE)
    acc.reasons.insert(0, ("G10.confiscate", {"article": article}))
    acc.actions.append("send_ahead")
    return acc.decision(Outcome.DENY, confiscate=True, confiscation_reason=reason,
                        confiscation_article=article, **common)


def _check_badge(view: GateView, p: Presentation, rb: GateRulebook, reg: str, acc: _Acc,
                 *, exiting: bool, worker: Worker | None = None) -> str | None:
    """G4 (83.611 art. 20 j, l): the badge paired with the control card (read before or after it,
    within the window) must be of the same registration. Returns the badge's registration when a
    badge was paired."""
    if not rb.g4.enabled:
        return None
    window_ns = rb.g4.pairing_window_s * 1_000_000_000
    paired = (
        p.badge_uid is not None
        and (p.badge_mono_ns is None or abs(p.mono_ns - p.badge_mono_ns) <= window_ns)  # either order
    )
    if not paired:
        if not exiting and _badge_required(rb, worker):
            acc.fail("G4", "G4.badge_missing", flag=Flag.BADGE_MISSING, action="present_badge")
        return None
    badge_uid = _canonical(p.badge_uid)
    badge = view.card(badge_uid) if badge_uid is not None else None
    if badge is None or badge.kind is not CardKind.BADGE:
        acc.fail("G4", "G4.badge_unknown", action="call_inspector", uid=_short(p.badge_uid))
        return None
    if badge.registration != reg:
        acc.fail("G4", "G4.mismatch", flag=Flag.BORROWED_CARD, action="call_inspector",
                 registration=reg, badge_registration=badge.registration)
    if rb.g2.enabled and badge.status is not CardStatus.ACTIVE:
        acc.fail("G2", "G2.badge", flag=Flag.RETAIN_CARD, action="retain", status=badge.status.value)
    return badge.registration


def _badge_required(rb: GateRulebook, worker: Worker | None) -> bool:
    """G4 (DL 2.032 arts. 17, 29): card + badge required at this gate, or for the worker's category."""
    if rb.g4.card_and_badge_required:
        return True
    return worker is not None and worker.category in rb.g4.card_and_badge_categories


def _check_data(view: GateView, now: Now, wall: dt.datetime, rb: GateRulebook, acc: _Acc) -> None:
    """G8 (operational): stale roster/escala copy or unsynchronised clock -> flags; deny mode."""
    if not rb.g8.enabled:
        return
    deny = rb.g8.stale_mode == "deny"
    updated = as_utc(view.data_updated_at())
    if updated is None or wall - updated > hours(rb.g8.data_max_age_hours):
        acc.fail("G8", "G8.stale", deny=deny, flag=Flag.STALE_DATA)
    if not now.clock_trusted:
        acc.fail("G8", "G8.clock", deny=deny, flag=Flag.CLOCK_UNTRUSTED)


def _canonical(raw: object) -> str | None:
    """The read's text (canonical UID or partial ``<form>:<hex>``), or None if it is no read."""
    return normal_read(raw)


def _short(raw: object) -> str:
    text = raw if isinstance(raw, str) else repr(raw)
    return text if len(text) <= 24 else text[:21] + "..."
