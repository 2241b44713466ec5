"""Who is on board, from the gangway gate's taps, against the crew list (pure core).

A crew member's card tapped at the vessel's gate with decision ``admit`` boards them; ``exit``
takes them ashore (``deny`` and ``inspector`` taps move nobody). Their state at time ``at`` is that
of their last admit/exit at or before ``at``, in the gate's sequence order (the per-gate gapless
``seq`` is the true order even when the gate's clock was not trusted). Someone on the crew list
with no tap at all is *presumed aboard* (never went ashore through this gate). Someone aboard who
is not on the crew list is reported too: the inspector wants to know every person on board.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
from collections.abc import Iterable, Sequence

from central.inspection.crew_share import CrewMember
from portgate.timeutil import require_aware


class Passage(enum.StrEnum):
    BOARDS = "admit"
    ASHORE = "exit"


@dataclasses.dataclass(frozen=True, slots=True)
class GateTap:
    """One admit/exit tap at the gangway gate; ``registration`` is the holder's id (crew_id)."""

    registration: str
    at: dt.datetime  # aware UTC (occurred_at)
    seq: int
    passage: Passage
    clock_trusted: bool = True


class State(enum.StrEnum):
    ABOARD = "aboard"  # last tap: admit
    ASHORE = "ashore"  # last tap: exit
    PRESUMED_ABOARD = "presumed_aboard"  # on the crew list, no tap at this gate up to ``at``


@dataclasses.dataclass(frozen=True, slots=True)
class AboardLine:
    crew_id: str
    name: str
    on_crew_list: bool
    state: State
    last_tap: GateTap | None


@dataclasses.dataclass(frozen=True, slots=True)
class AboardReport:
    gate_id: str
    at: dt.datetime
    lines: list[AboardLine]

    @property
    def aboard(self) -> list[AboardLine]:
        return [x for x in self.lines if x.state is not State.ASHORE]

    @property
    def ashore(self) -> list[AboardLine]:
        return [x for x in self.lines if x.state is State.ASHORE]

    @property
    def not_on_list(self) -> list[AboardLine]:
        return [x for x in self.lines if not x.on_crew_list]


def who_is_aboard(
    taps: Iterable[GateTap], crew: Sequence[CrewMember], *, at: dt.datetime, gate_id: str = ""
) -> AboardReport:
    """State of every crew member (and of anyone else aboard) at ``at`` (aware; UTC in the report).

    ``taps``: admit/exit taps of one gate, any order; taps after ``at`` are ignored. Raises
    ``ValueError`` for a naive ``at`` (a programming error: the CLI parses it with an offset).
    Lines: the crew list in its order, then people aboard who are not on it, by id.
    """
    at = require_aware(at, "at")
    last: dict[str, GateTap] = {}
    for tap in sorted((t for t in taps if t.at <= at), key=lambda t: t.seq):
        last[tap.registration] = tap
    lines = []
    listed = set()
    for member in crew:
        listed.add(member.crew_id)
        tap = last.get(member.crew_id)
        if tap is None:
            state = State.PRESUMED_ABOARD
        else:
            state = State.ABOARD if tap.passage is Passage.BOARDS else State.ASHORE
        lines.append(AboardLine(member.crew_id, member.name, True, state, tap))
    for reg in sorted(set(last) - listed):
        tap = last[reg]
        if tap.passage is Passage.BOARDS:
            lines.append(AboardLine(reg, "", False, State.ABOARD, tap))
    return AboardReport(gate_id, at, lines)
