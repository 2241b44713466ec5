"""The gate decision, rules G1-G10 and G12 (RULES.md section G). Pure: no clock, database, socket or env.

``decide(view, presentation, now, rulebook) -> Decision`` evaluates every rule on every read and
returns every failed rule id in rule order (not just the first), the flags for the inspector and the
office, and the watchman's message in pt-BR and English (``edge.rules.messages``).

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
from collections.abc import Mapping

from edge.rules import messages
from edge.rules.model import (
    Decision, Direction, EnrolMode, Flag, GateView, InspectorSession, Now, OpenShift, Outcome, Presentation,
)
from edge.rules.rulebook import GateRulebook
from portgate.errors import BadInput
from portgate.records import Card, CardKind, CardStatus, EscalaEntry, Worker, WorkerStatus
from portgate.rest import rest_between
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
        head = outcome.value
        return Decision(
            outcome=outcome,
            rules_failed=rules,
            flags=flags,
            said=messages.said(head, self.reasons, self.actions, rules),
            reasons=tuple(key for key, _ in self.reasons),
            card_uid=self.card_uid,
            **fields,
        )


def decide(view: GateView, presentation: Presentation, now: Now, rulebook: GateRulebook, *,
           enrol: EnrolMode | None = None) -> Decision:
    """Decide one presentation at the gate ``view.gate_id`` (rules G1-G10, G12).

    ``now.wall`` must be an aware datetime (``ValueError`` otherwise: a programming error). Any
    state the view returns and any read text give a ``Decision``; nothing else is raised. Returns
    ADMIT (with the matched ``EscalaEntry``), EXIT (closes the open shift, G9; at an ``out`` reader
    with no open shift, EXIT flagged NO_ENTRY), ABOARD (the worker aboard read again before
    ``min_stay_minutes``, or at an ``in`` reader: changes nothing, G9; with an untrusted clock the
    stay is measured on the admitting boot's monotonic clock, and a shift admitted in another boot
    is EXIT flagged CLOCK_UNTRUSTED, G13), DENY (a blocked card is
    always DENY, G2; an entry attempt past the late tolerance is DENY LATE_ARRIVAL, G6) or
    INSPECTOR (G10, ``opens_inspector_session``; the inspector's second read opens meal mode,
    ``opens_meal_mode``); in meal mode a worker aboard is ABOARD with ``meal_worked`` (P6).

    ``enrol``: the office's enrol mode at this gate (issue 34), an input like the store: while it
    is active (``EnrolMode.active(now.mono_ns)``) a card the view does not know, read with a whole
    UID (not a partial or ambiguous read), is DENY with rules ``G1`` and ``ENROL`` ("cartão em
    cadastro"): nobody is admitted with it, and the tap is the office's candidate. A known card
    is decided as always (the gate keeps working; enrol mode waits for an unknown card).
    """
    wall = require_aware(now.wall, "now.wall")
    acc = _Acc()
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
    direction = p.direction if p.direction in _DIRECTIONS else Direction.BOTH.value

    # G2 (83.611 art. 20 §1): lost, replaced or confiscated -> keep the card for the inspector. A
    # blocked card never opens or closes a shift, whoever shows it and wherever its holder is.
    blocked = rb.g2.enabled and card.status is not CardStatus.ACTIVE
    if blocked:
        acc.fail("G2", "G2.control", flag=Flag.RETAIN_CARD, action="retain", status=card.status.value)

    open_shift = view.open_shift(reg)
    aboard = open_shift is not None and open_shift.gate_id == view.gate_id  # G9
    session = view.inspector_session()
    confiscating = rb.g10.enabled and session is not None and session.until_mono_ns > now.mono_ns
    exit_read = aboard or (direction == Direction.OUT.value and rb.g9.enabled)
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
            _entry_rules(view, reg, worker, open_shift, wall, rb, acc)
        return _confiscate(view, p, card, acc, common)
    if aboard:
        if blocked:  # G2: the holder's shift stays open
            return acc.decision(Outcome.DENY, **common)
        return _aboard_read(open_shift, now, wall, direction, rb, acc, common)  # G9, G13
    if direction == Direction.OUT.value and rb.g9.enabled:
        if blocked:  # G2: a blocked card records no exit either
            return acc.decision(Outcome.DENY, **common)
        # G9: an exit reader and no open shift -> EXIT with no recorded entry.
        admit_entry, late_entry = _match_escala(view, reg, wall, rb)
        acc.fail("G9", "G9.no_entry", deny=False, flag=Flag.NO_ENTRY)
        return acc.decision(Outcome.EXIT, dispatch=admit_entry or late_entry, **common)
    matched = _entry_rules(view, reg, worker, open_shift, wall, rb, acc)
    if acc.denying:
        return acc.decision(Outcome.DENY, **common)
    return acc.decision(Outcome.ADMIT, dispatch=matched, **common)


_DIRECTIONS = frozenset(d.value for d in Direction)


def _entry_rules(view: GateView, reg: str, worker: Worker | None, open_shift: OpenShift | None,
                 wall: dt.datetime, rb: GateRulebook, acc: _Acc) -> EscalaEntry | None:
    """An entry attempt (no open shift at this gate): G3, G5, G6 (LATE_ARRIVAL, NOT_DISPATCHED,
    ROTATION_JUMP), G7 and G12, every one evaluated. Returns the escala entry admitted against."""
    admit_entry, late_entry = _match_escala(view, reg, wall, rb)
    _check_registration(worker, reg, wall.astimezone(rb.tz).date(), rb, acc)  # G3
    _check_two_ships(view, reg, open_shift, admit_entry, rb, acc)  # G5
    if admit_entry is None and rb.g6.enabled:
        if late_entry is not None:  # G6: dispatched, but past the late tolerance
            start = _bounds(late_entry, rb)
            acc.fail("G6", "G6.late", flag=Flag.LATE_ARRIVAL, period=late_entry.period,
                     late=_hours_text(wall - start[0]) if start else "?",
                     tolerance=rb.g6.late_tolerance_min)
        else:
            _not_dispatched(view, reg, wall, rb, acc)  # G6
    _check_rest(view, reg, admit_entry, wall, rb, acc)  # G7
    _check_category(worker, admit_entry or late_entry, rb, acc)  # G12
    return admit_entry


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
        if direction == Direction.IN.value:
            acc.reasons.append(("G9.aboard_in", {"since": local_admit}))
            return acc.decision(Outcome.ABOARD, dispatch=open_shift.dispatch, **common)
        stay = dt.timedelta(minutes=rb.g9.min_stay_minutes)
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
        bounds = _bounds(open_shift.dispatch, rb) if open_shift.dispatch is not None else None
        tolerance = dt.timedelta(minutes=rb.g9.early_exit_tolerance_min)
        if bounds is not None and not now.estimated and wall < bounds[1] - tolerance:
            acc.fail("G9", "G9.early_exit", deny=False, flag=Flag.EARLY_EXIT,
                     early=_hours_text(bounds[1] - wall), period=open_shift.dispatch.period)
    return acc.decision(Outcome.EXIT, dispatch=open_shift.dispatch, **common)


def _check_category(worker: Worker | None, entry: EscalaEntry | None, rb: GateRulebook,
                    acc: _Acc) -> None:
    """G12 (83.611 art. 1; DL 2.032 art. 12 §1): the post's function must be one the worker's
    category may fill (``rb.g12.categories``). Checked against the entry the read matched."""
    if not rb.g12.enabled or worker is None or entry is None:
        return
    if not rb.g12.may_fill(worker.category, entry.function):
        acc.fail("G12", "G12.wrong_category", flag=Flag.WRONG_CATEGORY,
                 category=worker.category, function=entry.function)


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
    if updated is None or wall - updated > dt.timedelta(hours=rb.g8.data_max_age_hours):
        acc.fail("G8", "G8.stale", deny=deny, flag=Flag.STALE_DATA)
    if not now.clock_trusted:
        acc.fail("G8", "G8.clock", deny=deny, flag=Flag.CLOCK_UNTRUSTED)


def _check_registration(worker: Worker | None, reg: str, today: dt.date, rb: GateRulebook,
                        acc: _Acc) -> None:
    """G3 (83.611 arts. 1, 17, 21; DL 2.032 arts. 5 §4, 28 §1): registration valid on local
    ``today``; the health exam's validity is the one of the worker's category."""
    if not rb.g3.enabled:
        return
    if worker is None:
        acc.fail("G3", "G3.no_registration", registration=reg)
        return
    if worker.status is WorkerStatus.CANCELLED:
        acc.fail("G3", "G3.cancelled")
    if _suspended(worker, today):
        acc.fail("G3", "G3.suspended")
    months = rb.g3.health_exam_months_by_category.get(worker.category,
                                                      rb.g3.health_exam_max_age_months)
    if worker.health_exam_date is None:
        acc.fail("G3", "G3.health_missing")
    elif _add_months(worker.health_exam_date, months) < today:
        acc.fail("G3", "G3.health_expired", exam=worker.health_exam_date.isoformat(), months=months)
    if worker.category in rb.g3.booklet_categories:
        needed = today.year if today.month > rb.g3.booklet_revalidation_month else today.year - 1
        if worker.booklet_revalidated_year is None or worker.booklet_revalidated_year < needed:
            acc.fail("G3", "G3.booklet", year=needed)


def _suspended(worker: Worker, today: dt.date) -> bool:
    """Inside a suspension: dated suspensions count whatever the status says; a status of
    ``suspended`` with no dates is an open-ended suspension."""
    start, end = worker.suspended_from, worker.suspended_until
    if start is None and end is None:
        return worker.status is WorkerStatus.SUSPENDED
    return (start is None or start <= today) and (end is None or today <= end)


def _check_two_ships(view: GateView, reg: str, open_shift, matched: EscalaEntry | None,
                     rb: GateRulebook, acc: _Acc) -> None:
    """G5 (83.611 art. 22; Lei 9.719 art. 7): not on two ships at once."""
    if not rb.g5.enabled:
        return
    if open_shift is not None and not _same_ship(view, open_shift.gate_id, open_shift.ship):
        acc.fail("G5", "G5.open_shift", flag=Flag.DOUBLE_ASSIGNMENT,
                 ship=open_shift.ship, gate_id=open_shift.gate_id)
    if matched is None:
        return
    here = _bounds(matched, rb)
    if here is None:
        return
    for entry in view.dispatches(reg, here[0]):
        if entry.registration != reg or _same_ship(view, entry.gate_id, entry.ship):
            continue
        other = _bounds(entry, rb)
        if other is not None and other[0] < here[1] and here[0] < other[1]:
            acc.fail("G5", "G5.dispatched", flag=Flag.DOUBLE_ASSIGNMENT,
                     ship=entry.ship, period=entry.period)
            return


def _not_dispatched(view: GateView, reg: str, wall: dt.datetime, rb: GateRulebook,
                    acc: _Acc) -> None:
    """G6 (83.611 arts. 10, 20 i): not on this gate's escala now -> NOT_DISPATCHED; if this gate's
    post for the period covering now is dispatched to someone else, also ROTATION_JUMP."""
    acc.fail("G6", "G6.not_dispatched", flag=Flag.NOT_DISPATCHED)
    early = dt.timedelta(minutes=rb.g6.early_tolerance_min)
    # The first entry of ``gate_dispatches`` (another worker's, at this gate) whose period covers
    # ``wall``: one (date, period) has one pair of bounds, so they are computed once per group.
    found: tuple[int, EscalaEntry] | None = None
    for group in view.gate_periods(wall):
        bounds = _bounds(group[0][1], rb)
        if bounds is None or not bounds[0] - early <= wall < bounds[1]:
            continue
        for pos, entry in group:
            if entry.gate_id != view.gate_id or entry.registration == reg:
                continue
            if found is None or pos < found[0]:
                found = (pos, entry)
            break
    if found is not None:
        entry = found[1]
        acc.fail("G6", "G6.rotation_jump", flag=Flag.ROTATION_JUMP, action="call_inspector",
                 post=entry.post, period=entry.period, other=entry.registration)


def _check_rest(view: GateView, reg: str, matched: EscalaEntry | None, wall: dt.datetime,
                rb: GateRulebook, acc: _Acc) -> None:
    """G7 (Lei 9.719 art. 8): at least ``rest_hours`` between the previous shift's end and the
    start of this period (the read time when no period matched). ``last_shift_end`` is the exit of
    a real shift (an admit followed by an exit, or a NO_ENTRY exit matched to a period; a NO_ENTRY
    exit with no period starts no rest, ``edge.effects``). The rest is never negative: a shift that
    ended after this period started (an early exit and a return in the same period, or an
    extension into it) is a rest of 0h00."""
    if not rb.g7.enabled:
        return
    last = as_utc(view.last_shift_end(reg))
    if last is None:
        return
    bounds = _bounds(matched, rb) if matched is not None else None
    start = bounds[0] if bounds is not None else wall
    rest = rest_between(last, start)
    if rest < dt.timedelta(hours=rb.g7.rest_hours):
        deny = rb.g7.mode == "deny"
        acc.fail("G7", "G7.rest", deny=deny, flag=None if deny else Flag.REST_SHORT,
                 rest=_hours_text(rest), hours=rb.g7.rest_hours)


def _match_escala(view: GateView, reg: str, wall: dt.datetime,
                  rb: GateRulebook) -> tuple[EscalaEntry | None, EscalaEntry | None]:
    """G6/G9: this worker's entry at this gate whose admission window
    ``[start - early, start + late]`` holds ``wall`` (nearest start wins), and, failing that, an
    entry whose window has passed but whose period (plus the exit grace) has not: the LATE_ARRIVAL
    case at an entry reader, the NO_ENTRY case at an exit reader.
    """
    early = dt.timedelta(minutes=rb.g6.early_tolerance_min)
    late = dt.timedelta(minutes=rb.g6.late_tolerance_min)
    grace = dt.timedelta(minutes=rb.g9.exit_grace_min)
    admit: tuple[dt.timedelta, EscalaEntry] | None = None
    past: tuple[dt.datetime, EscalaEntry] | None = None
    for entry in view.dispatches(reg, wall):
        if entry.gate_id != view.gate_id or entry.registration != reg:
            continue
        bounds = _bounds(entry, rb)
        if bounds is None:
            continue
        start, end = bounds
        if start - early <= wall <= start + late:
            distance = abs(wall - start)
            if admit is None or distance < admit[0]:
                admit = (distance, entry)
        elif start + late < wall <= end + grace and (past is None or start > past[0]):
            past = (start, entry)
    return (admit[1] if admit else None), (past[1] if past else None)


def _same_ship(view: GateView, gate_id: str, ship: str) -> bool:
    return gate_id == view.gate_id or (view.ship is not None and ship == view.ship)


def _bounds(entry: EscalaEntry, rb: GateRulebook) -> tuple[dt.datetime, dt.datetime] | None:
    try:
        return entry.bounds(rb.tz)
    except (BadInput, ValueError, OverflowError):
        return None


def _canonical(raw: object) -> str | None:
    """The read's text (canonical UID or partial ``<form>:<hex>``), or None if it is no read."""
    return normal_read(raw)


def _short(raw: object) -> str:
    text = raw if isinstance(raw, str) else repr(raw)
    return text if len(text) <= 24 else text[:21] + "..."


def _add_months(day: dt.date, months: int) -> dt.date:
    year, month0 = divmod(day.month - 1 + months, 12)
    year += day.year
    if year > dt.MAXYEAR:
        return dt.date.max
    month = month0 + 1
    last = [31, 29 if _leap(year) else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month0]
    return dt.date(year, month, min(day.day, last))


def _leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _hours_text(delta: dt.timedelta) -> str:
    minutes = int(delta.total_seconds() // 60)
    sign = "-" if minutes < 0 else ""
    minutes = abs(minutes)
    return f"{sign}{minutes // 60}h{minutes % 60:02d}"
