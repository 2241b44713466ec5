"""An in-memory ``GateView`` (edge.rules.model) for ``portgate replay`` and tests.

``Roster`` holds the read-only copies (cards, workers, escala) indexed once. ``Presence`` holds what
decisions change: open shifts, last shift ends, pending flags and locally blocked (confiscated)
cards. Gates that share one ``Presence`` behave like gates of a connected port (an admit at one gate
is known at the others at once); gates with their own ``Presence`` are partitioned (offline).
Inspector sessions are always per gate. ``MemoryGateView.apply`` records a decision the way the gate
loop does after journaling it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections import defaultdict
from collections.abc import Iterable, Sequence
from zoneinfo import ZoneInfo

from edge.rules.model import (
    Decision, Flag, InspectorSession, Now, OpenShift, Outcome, Presentation, group_by_period,
)
from portgate.errors import BadInput
from portgate.records import Card, CardKind, CardStatus, EscalaEntry, Worker
from portgate.uid import PARTIAL_BITS, low_bits, parse_read

_DAY = dt.timedelta(days=1)


class Roster:
    """Cards by UID, workers by registration, escala by registration and by gate and date."""

    def __init__(self, workers: Iterable[Worker], cards: Iterable[Card],
                 escala: Iterable[EscalaEntry]) -> None:
        self.workers = {w.registration: w for w in workers}
        self.cards = {c.uid: c for c in cards}
        # partial reads (portgate.uid): {bits: {low bits hex: [cards]}}, built once
        self.by_low_bits: dict[int, dict[str, list[Card]]] = {
            bits: defaultdict(list) for bits in set(PARTIAL_BITS.values())
        }
        for card in self.cards.values():
            for bits, index in self.by_low_bits.items():
                low = low_bits(card.uid, bits)
                if low is not None:
                    index[low].append(card)
        self.by_registration: dict[str, list[EscalaEntry]] = defaultdict(list)
        self.by_gate: dict[tuple[str, dt.date], list[EscalaEntry]] = defaultdict(list)
        for entry in escala:
            self.by_registration[entry.registration].append(entry)
            self.by_gate[(entry.gate_id, entry.date)].append(entry)


@dataclasses.dataclass
class Presence:
    """Mutable presence state shared by the gates that can talk to each other."""

    open_shifts: dict[str, OpenShift] = dataclasses.field(default_factory=dict)
    last_end: dict[str, dt.datetime] = dataclasses.field(default_factory=dict)
    pending: dict[str, list[str]] = dataclasses.field(default_factory=lambda: defaultdict(list))
    blocked: set[str] = dataclasses.field(default_factory=set)


class MemoryGateView:
    """``GateView`` over a ``Roster`` and a ``Presence`` for one gate. All times aware UTC."""

    def __init__(self, gate_id: str, roster: Roster, presence: Presence, *, tz: str | ZoneInfo,
                 ship: str | None = None, data_updated_at: dt.datetime | None = None) -> None:
        self.gate_id = gate_id
        self.ship = ship
        self.roster = roster
        self.presence = presence
        self.tz = ZoneInfo(tz) if isinstance(tz, str) else tz
        self.updated_at = data_updated_at
        self.session: InspectorSession | None = None

    # --- GateView -------------------------------------------------------------------------
    def card(self, uid: str) -> Card | None:
        found = self._cards(uid)
        card = found[0] if len(found) == 1 else None
        if card is not None and card.uid in self.presence.blocked:
            return dataclasses.replace(card, status=CardStatus.CONFISCATED)
        return card

    def cards_sharing(self, uid: str) -> int:
        return len(self._cards(uid))

    def _cards(self, uid: str) -> Sequence[Card]:
        try:
            read = parse_read(uid)
        except BadInput:
            return ()
        if read.bits is None:
            card = self.roster.cards.get(read.hex)
            return (card,) if card is not None else ()
        return self.roster.by_low_bits[read.bits].get(read.hex, ())

    def worker(self, registration: str) -> Worker | None:
        return self.roster.workers.get(registration)

    def dispatches(self, registration: str, around: dt.datetime) -> Sequence[EscalaEntry]:
        day = around.astimezone(self.tz).date()
        return [e for e in self.roster.by_registration.get(registration, ())
                if abs((e.date - day).days) <= 1]

    def gate_dispatches(self, around: dt.datetime) -> Sequence[EscalaEntry]:
        day = around.astimezone(self.tz).date()
        out: list[EscalaEntry] = []
        for d in (day - _DAY, day, day + _DAY):
            out.extend(self.roster.by_gate.get((self.gate_id, d), ()))
        return out

    def gate_periods(self, around: dt.datetime) -> list[list[tuple[int, EscalaEntry]]]:
        return group_by_period(self.gate_dispatches(around))

    def open_shift(self, registration: str) -> OpenShift | None:
        return self.presence.open_shifts.get(registration)

    def last_shift_end(self, registration: str) -> dt.datetime | None:
        return self.presence.last_end.get(registration)

    def pending_flags(self, uid: str) -> Sequence[str]:
        return tuple(self.presence.pending.get(uid, ()))

    def data_updated_at(self) -> dt.datetime | None:
        return self.updated_at

    def inspector_session(self) -> InspectorSession | None:
        return self.session

    # --- what the gate loop does after a decision --------------------------------------------
    def ship_at(self, wall: dt.datetime) -> str | None:
        """The ship this gate serves at ``wall``: the ship of the escala entry covering it, else
        the first entry of that local day, else None."""
        day = wall.astimezone(self.tz).date()
        entries = self.roster.by_gate.get((self.gate_id, day), ())
        for entry in self.gate_dispatches(wall):
            start, end = entry.bounds(self.tz)
            if start <= wall < end:
                return entry.ship
        return entries[0].ship if entries else None

    def apply(self, decision: Decision, presentation: Presentation, now: Now,
              *, inspector_mode_s: int) -> None:
        """Record ``decision`` in the presence state (open/close shift, flags, session, block)."""
        reg = decision.registration
        uid = decision.card_uid or presentation.uid
        for flag in decision.flags:
            if flag in (Flag.BORROWED_CARD, Flag.ROTATION_JUMP) and flag.value not in self.presence.pending[uid]:
                self.presence.pending[uid].append(flag.value)
        if Flag.BORROWED_CARD in decision.flags:  # G4: both registrations' control cards
            for other in (decision.registration, decision.badge_registration):
                for card in self.roster.cards.values():
                    if (other and card.registration == other and card.kind is CardKind.CONTROL
                            and Flag.BORROWED_CARD.value not in self.presence.pending[card.uid]):
                        self.presence.pending[card.uid].append(Flag.BORROWED_CARD.value)
        if decision.confiscate:
            self.presence.blocked.add(uid)
            self.presence.pending.pop(uid, None)
            self.session = None
            return
        if decision.opens_inspector_session:
            self.session = InspectorSession(
                inspector_uid=uid, inspector_registration=reg or "",
                until_mono_ns=now.mono_ns + inspector_mode_s * 1_000_000_000,
                mode="meal" if decision.opens_meal_mode else "confiscate",
            )
            return
        if decision.meal_worked:  # P6: recorded; the shift stays open, the session ends
            self.session = None
            return
        if reg is None:
            return
        if decision.outcome is Outcome.ADMIT:
            ship = decision.dispatch.ship if decision.dispatch else (self.ship or "")
            self.presence.open_shifts[reg] = OpenShift(
                registration=reg, gate_id=self.gate_id, ship=ship, admitted_at=now.wall,
                dispatch=decision.dispatch, boot_id=now.boot_id, admit_mono_ns=now.mono_ns,
            )
        elif decision.outcome is Outcome.EXIT:
            self.presence.open_shifts.pop(reg, None)
            if Flag.NO_ENTRY not in decision.flags or decision.dispatch is not None:
                self.presence.last_end[reg] = now.wall  # a real shift's end (G7, edge.effects)
