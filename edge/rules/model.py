"""The seam between the gate's pure rules engine and everything around it.

``edge.rules.decide(view, presentation, now, rulebook) -> Decision`` (implemented in
``edge.rules.engine``) is a pure function: everything it needs comes in through these types. The
local SQLite store (``edge.store``) and the in-memory replay view (``edge.replay``) both implement
``GateView``. Nothing here reads a clock, a database or a socket (STYLE.md 1).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
from collections.abc import Sequence
from typing import Protocol

from edge.rules.messages import Said
from portgate.records import Card, EscalaEntry, Worker
from wire.flags import Flag  # noqa: F401  (the gate raises the wire's flags; edge.rules.model.Flag)


class Outcome(enum.StrEnum):
    ADMIT = "admit"
    EXIT = "exit"
    DENY = "deny"
    INSPECTOR = "inspector"  # an inspector card opened inspector mode (G10); not a boarding
    # G9: a read by the worker aboard before ``min_stay_minutes`` (or at an entry-only reader):
    # shown "already aboard", changes nothing (no shift opened or closed, not a refusal).
    ABOARD = "aboard"


class Direction(enum.StrEnum):
    """How a reader is declared in the gate configuration (G6, G9). Value = config text."""

    IN = "in"  # entry reader: a read by a worker aboard does not close the shift
    OUT = "out"  # exit reader: a read with no open shift is an EXIT flagged NO_ENTRY
    BOTH = "both"  # the default: the worker's state says entry or exit


@dataclasses.dataclass(frozen=True, slots=True)
class OpenShift:
    """A shift that is open (admitted, not exited): at this gate, or elsewhere as relayed by the
    office's presence messages. Times are aware UTC.

    ``boot_id`` / ``admit_mono_ns``: the gate boot (process start) that journaled the admit and its
    monotonic clock at the admit, in ns; None when not known (a shift read back from the store file
    at start-up, or relayed by the office): then it counts as admitted in another boot. While the
    clock is untrusted a stay is measured only on the same boot's monotonic clock (G13)."""

    registration: str
    gate_id: str
    ship: str
    admitted_at: dt.datetime
    dispatch: EscalaEntry | None = None
    boot_id: str | None = None
    admit_mono_ns: int | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class InspectorSession:
    """Inspector mode (G10) opened by an inspector card; valid until ``until_mono_ns``. ``mode`` is
    ``confiscate`` (G10) or ``meal`` (P6: the next control card's meal interval was worked)."""

    inspector_uid: str
    inspector_registration: str
    until_mono_ns: int
    mode: str = "confiscate"


@dataclasses.dataclass(frozen=True, slots=True)
class EnrolMode:
    """Enrol mode at this gate (issue 34), started by the office for ``registration``: the next
    unknown card read with a whole UID is refused with rule ``ENROL`` ("cartão em cadastro") and
    offered to the clerk. Active while ``now.mono_ns < until_mono_ns`` (the gate's monotonic
    clock, ns). ``session``: the office's id of the session."""

    session: str
    registration: str
    until_mono_ns: int

    def active(self, mono_ns: int) -> bool:
        return mono_ns < self.until_mono_ns


@dataclasses.dataclass(frozen=True, slots=True)
class Presentation:
    """What the gate loop hands the engine for one decision, after debounce and pairing.

    ``uid`` and ``reader_kind`` are the read being decided (canonical UID text, or the raw text if
    the reader produced something that is not a valid UID). ``badge_uid``/``badge_mono_ns`` is the
    badge read paired with a control card inside the pairing window, if any (G4). ``mono_ns`` is the
    monotonic clock at the read. ``direction`` is the reader's declared direction (``Direction``
    text, from the gate configuration; G6, G9); an unknown text is read as ``both``.
    """

    uid: str
    reader_id: str
    reader_kind: str  # "control" | "badge"
    mono_ns: int
    badge_uid: str | None = None
    badge_mono_ns: int | None = None
    direction: str = Direction.BOTH.value
    # G4: for a badge read, the control card decided alone (not held for a badge) at most the
    # pairing window before it; a badge of another registration is a borrowed card (either order).
    follows_uid: str | None = None
    follows_mono_ns: int | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class Now:
    """The clock as the gate knows it: aware UTC wall time, monotonic ns, and whether the wall
    clock is NTP-synchronised and plausible (G8). ``estimated``: the wall clock read was
    implausible (G13: before 2000, before the gate's last trusted time or its rulebook's first
    version) and ``wall`` is the gate's estimate (``edge.clock.GuardedClock``); then
    ``clock_trusted`` is False and the newest rulebook version decides. ``boot_id``: the boot
    (process start) whose monotonic clock ``mono_ns`` is (the gate loop sets the journal's); None
    when not known. G13 compares it with ``OpenShift.boot_id``."""

    wall: dt.datetime
    mono_ns: int
    clock_trusted: bool = True
    estimated: bool = False
    boot_id: str | None = None


class GateView(Protocol):
    """Read-only view of the gate's local state used by the rules. All times aware UTC."""

    gate_id: str
    ship: str | None  # IMO of the ship this gate serves today, if configured

    def card(self, uid: str) -> Card | None:
        """The card a read names: ``uid`` is the text of a read (``portgate.uid.parse_read``: a
        canonical UID, or ``<form>:<hex>`` for a reader that gives only the low bits). A partial
        read names the one card whose UID carries those bits; None when no card or several do."""
        ...

    def cards_sharing(self, uid: str) -> int:
        """How many cards carry the bits of the read ``uid`` (more than 1: the read is ambiguous)."""
        ...

    def worker(self, registration: str) -> Worker | None: ...

    def dispatches(self, registration: str, around: dt.datetime) -> Sequence[EscalaEntry]:
        """Escala entries of this worker (any gate/ship) whose local date is within a day of
        ``around``."""
        ...

    def gate_dispatches(self, around: dt.datetime) -> Sequence[EscalaEntry]:
        """Escala entries for this gate within a day of ``around`` (for ROTATION_JUMP, G11)."""
        ...

    def gate_periods(self, around: dt.datetime) -> Sequence[Sequence[tuple[int, EscalaEntry]]]:
        """``gate_dispatches(around)`` grouped by (date, period) (``group_by_period``), so a rule
        that asks which period covers a time computes one period's bounds per group, not per entry."""
        ...

    def open_shift(self, registration: str) -> OpenShift | None:
        """This worker's open shift at any gate (local, or from relayed presence), or None."""
        ...

    def last_shift_end(self, registration: str) -> dt.datetime | None:
        """End of this worker's previous shift (exit time), for the rest rule G7."""
        ...

    def pending_flags(self, uid: str) -> Sequence[str]:
        """Flags raised on this card by earlier decisions today (for the G10 confiscation reason)."""
        ...

    def data_updated_at(self) -> dt.datetime | None:
        """When the older of the roster and escala copies was last updated (G8)."""
        ...

    def inspector_session(self) -> InspectorSession | None: ...


def group_by_period(entries: Sequence[EscalaEntry]) -> list[list[tuple[int, EscalaEntry]]]:
    """``entries`` grouped by (date, period): each group lists ``(position in entries, entry)`` in
    the order of ``entries``; the groups in the order of their first entry. Pure."""
    groups: dict[tuple[dt.date, str], list[tuple[int, EscalaEntry]]] = {}
    for pos, entry in enumerate(entries):
        groups.setdefault((entry.date, entry.period), []).append((pos, entry))
    return list(groups.values())


@dataclasses.dataclass(frozen=True, slots=True)
class Decision:
    """The engine's answer. ``rules_failed`` lists every failed rule id (not just the first), in
    rule order; ``said`` what the watchman is told, as keys and values (``edge.rules.messages``).
    ``message_pt``/``message_en`` are its words, put in at the gate's edge from the catalogs
    (``edge.display.said.worded``; empty as the engine returns it)."""

    outcome: Outcome
    rules_failed: tuple[str, ...] = ()
    flags: tuple[Flag, ...] = ()
    message_pt: str = ""
    message_en: str = ""
    registration: str | None = None
    card_kind: str | None = None
    dispatch: EscalaEntry | None = None  # the escala entry admitted/exited against
    badge_registration: str | None = None
    confiscate: bool = False  # G10: block this card locally at once and send ahead of others
    confiscation_reason: str | None = None  # the flag that motivated it
    confiscation_article: str | None = None
    opens_inspector_session: bool = False
    opens_meal_mode: bool = False  # P6: the session opened is in meal mode (with opens_inspector_session)
    meal_worked: bool = False  # P6: journal a MealWorkedPayload for this worker's open shift, end the session
    reasons: tuple[str, ...] = ()  # message keys of edge.rules.messages, e.g. ("G2.control",)
    card_uid: str | None = None  # the matched card's canonical UID (the read may be partial, G1)
    said: Said | None = None  # the message without words (None: an edge-made decision with its words)
