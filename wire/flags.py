"""The one flag vocabulary of the gate and the office. A member's value is its wire text, equal to
its name (``NO_ENTRY``): it is what events carry (``TapPayload.flags``), what the ledger stores
(``shift_flags.code``) and what statements and reports show.

- ``Flag``: raised by the gate's rules on a tap (RULES.md G1-G12, P6), for the union inspector and
  the office. Its order is the order a decision lists them in.
- ``ShiftFlag``: raised by the office on a shift rebuilt from taps (``central.ledger.shifts``);
  the three also raised at the gate keep the gate's text.
- ``HOLD_FLAGS`` keep a shift from being paid until someone reviews it; ``REVIEW_FLAGS`` let it be
  paid with its statement on hold for review (RULES.md P, G9).
"""

from __future__ import annotations

import enum


class Flag(enum.StrEnum):
    """Flags raised at the gate for the union inspector / the office. Value = wire text."""

    RETAIN_CARD = "RETAIN_CARD"  # G2
    BORROWED_CARD = "BORROWED_CARD"  # G4
    BADGE_MISSING = "BADGE_MISSING"  # G4: no badge within the pairing window where one is required
    DOUBLE_ASSIGNMENT = "DOUBLE_ASSIGNMENT"  # G5
    NOT_DISPATCHED = "NOT_DISPATCHED"  # G6
    ROTATION_JUMP = "ROTATION_JUMP"  # G6
    LATE_ARRIVAL = "LATE_ARRIVAL"  # G6: entry attempt past the late tolerance
    REST_SHORT = "REST_SHORT"  # G7 (warn mode)
    STALE_DATA = "STALE_DATA"  # G8
    CLOCK_UNTRUSTED = "CLOCK_UNTRUSTED"  # G8
    NO_ENTRY = "NO_ENTRY"  # G9
    EARLY_EXIT = "EARLY_EXIT"  # G9: exit before the end of the ordinary period (83.611 arts. 9, 20 b, e)
    CONFISCATE = "CONFISCATE"  # G10: this read confiscated the card
    COVERAGE_GAP = "COVERAGE_GAP"  # G11
    PARTIAL_UID = "PARTIAL_UID"  # G1: matched on 24 bits of the UID only (collision-prone)
    WRONG_CATEGORY = "WRONG_CATEGORY"  # G12
    MEAL_MODE = "MEAL_MODE"  # G10/P6: the inspector's second read switched the session to meal mode
    MEAL_WORKED = "MEAL_WORKED"  # P6 (83.611 art. 26 d): the meal interval of this shift was worked


class ShiftFlag(enum.StrEnum):
    """Flags on a shift rebuilt by the office (``central.ledger.shifts`` explains each)."""

    MISSING_EXIT = "MISSING_EXIT"  # admit with no exit: closed at the period end
    NO_ENTRY = Flag.NO_ENTRY.value  # (hold) exit with no admit, G9
    REPEATED_ADMIT = "REPEATED_ADMIT"  # more than one admit for the same dispatch
    DOUBLE_ASSIGNMENT = Flag.DOUBLE_ASSIGNMENT.value  # (hold) overlapping shifts on two ships, G5
    CLOCK_PLACED = "CLOCK_PLACED"  # an untrusted time placed from a trusted event of the same boot
    CLOCK_UNPLACEABLE = "CLOCK_UNPLACEABLE"  # (hold) untrusted time, nothing to place it by
    CLOCK_BACKWARDS = "CLOCK_BACKWARDS"  # (hold) a trusted time going back, or an exit before its admit
    EARLY_EXIT = Flag.EARLY_EXIT.value  # (review) the exit the gate flagged EARLY_EXIT, G9
    MEAL_AT_GATE = "MEAL_AT_GATE"  # P6: meal interval worked, recorded at the gate (paid, not held)
    MEAL_CORRECTED = "MEAL_CORRECTED"  # P6: an office correction of the meal interval (paid, not held)
    CHAIN_BREAK = "CHAIN_BREAK"  # (review) its admit or exit event has a recorded chain break (a forgery, an edit)


HOLD_FLAGS = frozenset({ShiftFlag.NO_ENTRY, ShiftFlag.DOUBLE_ASSIGNMENT, ShiftFlag.CLOCK_UNPLACEABLE,
                        ShiftFlag.CLOCK_BACKWARDS})
REVIEW_FLAGS = frozenset({ShiftFlag.EARLY_EXIT, ShiftFlag.CHAIN_BREAK})
