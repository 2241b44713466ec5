"""G11 gangway coverage (83.611 arts. 5, 6, 7, 8), pure.

A long-haul ship in port must have a gangway watchman on post for every period. The ship is taken
to be in port on each local date on which it has any escala entry at this gate; its watch periods
are ``g11.watch_periods`` (07-13, 13-19, 19-01, 01-07). A cabotage (or auxiliary) ship is checked
only for the periods in which a gangway watchman was requisitioned (an escala entry for the gangway
post with a watchman function). A period has a gap when, ``coverage_grace_min`` after its start and
until its end, no watchman was admitted against it. The caller (gate loop) raises COVERAGE_GAP once
per ``CoverageGap.key``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterable, Sequence

from edge.rules.model import Flag, OpenShift
from edge.rules.rulebook import GateRulebook
from portgate.errors import BadInput
from portgate.records import EscalaEntry, Voyage


@dataclasses.dataclass(frozen=True, slots=True)
class CoverageGap:
    """No gangway watchman admitted for ``ship``'s ``period`` on local ``date`` by ``due_at``."""

    gate_id: str
    ship: str
    ship_name: str
    voyage: Voyage
    date: dt.date
    period: str
    start: dt.datetime
    due_at: dt.datetime
    end: dt.datetime
    dispatched: tuple[str, ...]  # registrations dispatched to the gangway post for the period
    flag: Flag = Flag.COVERAGE_GAP

    @property
    def key(self) -> tuple[str, str, dt.date, str]:
        return (self.gate_id, self.ship, self.date, self.period)


def coverage_gaps(gate_dispatches: Sequence[EscalaEntry], admitted: Iterable[OpenShift],
                  now: dt.datetime, rulebook: GateRulebook) -> list[CoverageGap]:
    """Periods now past their grace with no watchman admitted (G11, 83.611 arts. 5-8).

    ``gate_dispatches``: this gate's escala entries around ``now`` (``GateView.gate_dispatches``).
    ``admitted``: admissions at this gate (open or already closed shifts) — a period is covered by
    an admission whose dispatch is that ship/date/period with a watchman function, or, when the
    admission has no dispatch, by any admission on that ship inside the period (early tolerance
    included). ``now``: aware datetime. Returns gaps sorted by start; [] when G11 is switched off.
    """
    s = rulebook.g11
    if not s.enabled:
        return []
    tz = rulebook.tz
    grace = dt.timedelta(minutes=s.coverage_grace_min)
    early = dt.timedelta(minutes=rulebook.g6.early_tolerance_min)
    now = now.astimezone(dt.UTC)
    admitted = list(admitted)
    watch = [e for e in gate_dispatches if e.post == s.gangway_post and e.function in s.watch_functions]
    ships: dict[tuple[str, dt.date], EscalaEntry] = {}
    for entry in gate_dispatches:
        ships.setdefault((entry.ship, entry.date), entry)
    gaps: list[CoverageGap] = []
    for (ship, date), sample in ships.items():
        if sample.voyage is Voyage.LONG_HAUL:
            periods = list(dict.fromkeys(s.watch_periods))
        else:  # cabotage / auxiliary: only a requisitioned watchman is expected
            periods = list(dict.fromkeys(e.period for e in watch if e.ship == ship and e.date == date))
        for period in periods:
            probe = dataclasses.replace(sample, period=period)
            try:
                start, end = probe.bounds(tz)
            except (BadInput, ValueError):
                continue
            if not (start + grace <= now < end):
                continue
            if _covered(admitted, ship, date, period, start - early, end, s.watch_functions):
                continue
            gaps.append(CoverageGap(
                gate_id=sample.gate_id, ship=ship, ship_name=sample.ship_name, voyage=sample.voyage,
                date=date, period=period, start=start, due_at=start + grace, end=end,
                dispatched=tuple(e.registration for e in watch
                                 if e.ship == ship and e.date == date and e.period == period),
            ))
    return sorted(gaps, key=lambda g: (g.start, g.ship))


def covering_watchman(gap: CoverageGap, admitted: Iterable[OpenShift],
                      rulebook: GateRulebook) -> str | None:
    """The registration of the admission that covers ``gap`` (a watchman function, G11), by the
    same test ``coverage_gaps`` uses; None when nobody aboard covers it. A worker of another
    function aboard for the same period (a stevedore) never does."""
    early = dt.timedelta(minutes=rulebook.g6.early_tolerance_min)
    shift = _covering(list(admitted), gap.ship, gap.date, gap.period, gap.start - early, gap.end,
                      rulebook.g11.watch_functions)
    return shift.registration if shift is not None else None


def _covered(admitted: Sequence[OpenShift], ship: str, date: dt.date, period: str,
             window_start: dt.datetime, end: dt.datetime, functions: Sequence[str]) -> bool:
    return _covering(admitted, ship, date, period, window_start, end, functions) is not None


def _covering(admitted: Sequence[OpenShift], ship: str, date: dt.date, period: str,
              window_start: dt.datetime, end: dt.datetime,
              functions: Sequence[str]) -> OpenShift | None:
    for shift in admitted:
        d = shift.dispatch
        if d is not None:
            if d.ship == ship and d.date == date and d.period == period and d.function in functions:
                return shift
        elif shift.ship == ship and window_start <= shift.admitted_at.astimezone(dt.UTC) < end:
            return shift
    return None
