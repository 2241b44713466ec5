"""Production from the gate: stevedores and dock workers pass the gangway too, so
a gang member's minutes worked come from his gate taps when the ledger holds them, and the same
registration on two ships at once is flagged DOUBLE_ASSIGNMENT (83.611 art. 22 and Lei 9.719
art. 7, as for watchmen, G5). Pure: gangs and rebuilt shifts in, gangs and notes out.

    works, notes = from_gate(works, shifts, zone)

A member who boarded and has a shift in ``shifts`` of the same registration, ship, work date and
period, with an admit and an exit (closed by the exit, both times placed), gets
``minutes_worked = whole minutes from admit to exit - the gang's waits`` (the kinds in ``WAITS``:
E4 late start, rain, rough water, tide; E8 stoppages; C3 third party; the worked meal and the
anchorage travel are work). His typed figure is kept in ``minutes_typed`` and the gang's notes get
``MINUTES_FROM_GATE: <reg> typed T min, gate G min (difference ±D min)``. With no usable shift the
typed figure stands (``MINUTES_TYPED: <reg> ...`` says why when a shift exists but lacks an exit).

DOUBLE_ASSIGNMENT: a registration who boarded two gangs on different ships whose periods overlap
(both gangs are noted), or whose gangway shift on another ship overlaps the gang's period (a
watchman shift included), or whose matched shift the ledger already flagged DOUBLE_ASSIGNMENT.
Pay is computed as usual; the note is on the gang summary (``flags``) for the office's review.

R10: ``stored_conflicts`` compares the gangs with those already imported into the ledger (flag
both: the earlier gang gets its note stored with the import); ``from_gate(works, [], zone)`` with
no ledger still compares the gangs of one file.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections import defaultdict
from collections.abc import Iterable, Sequence
from decimal import Decimal
from zoneinfo import ZoneInfo

from central.ledger.shifts import Shift
from central.production.model import GangWork, Member
from portgate.errors import BadInput
from portgate.records import period_bounds

# Interruptions during which the gang waited aboard (not work): subtracted from admit..exit.
WAITS = frozenset({"late_start", "rain", "rough_water", "tide", "third_party", "no_equipment",
                   "workers_fault"})
MINUTES_FROM_GATE = "MINUTES_FROM_GATE"
MINUTES_TYPED = "MINUTES_TYPED"
DOUBLE_ASSIGNMENT = "DOUBLE_ASSIGNMENT"


def from_gate(works: Sequence[GangWork], shifts: Iterable[Shift],
              zone: ZoneInfo) -> tuple[list[GangWork], dict[str, tuple[str, ...]]]:
    """``works`` with gate minutes applied, and the notes per gang id (see module doc).

    ``shifts``: the ledger's rebuilt shifts (``central.ledger.shifts.reconstruct``) of the gangs'
    dates. Raises ``BadInput`` for a gang whose period cannot be read (e.g. ``25-01``)."""
    by_key: dict[tuple[str, str, dt.date, str], Shift] = {}
    by_reg: dict[str, list[Shift]] = defaultdict(list)
    for s in shifts:
        by_key[(s.registration, s.ship, s.work_date, s.period)] = s
        by_reg[s.registration].append(s)
    notes: dict[str, list[str]] = defaultdict(list)
    bounds = {w.gang_id: _bounds(w, zone) for w in works}
    out = []
    for w in works:
        members = []
        for m in w.members:
            shift = by_key.get((m.registration, w.ship, w.date, w.period)) if m.boarded else None
            members.append(_member(w, m, shift, notes[w.gang_id]))
            if m.boarded:
                _gangway_conflicts(w, m, shift, by_reg.get(m.registration, ()), bounds[w.gang_id],
                                   notes[w.gang_id])
        out.append(dataclasses.replace(w, members=tuple(members)))
    _gang_conflicts(works, bounds, notes)
    return out, {gid: tuple(dict.fromkeys(n)) for gid, n in notes.items() if n}


def gate_minutes(shift: Shift, work: GangWork) -> Decimal | None:
    """Whole minutes from the shift's admit to its exit less the gang's waits (≥ 0), or None when
    the shift has no exit or a time that could not be placed."""
    if shift.admit_at is None or shift.exit_at is None or shift.closed_by != "exit":
        return None
    if shift.exit_at < shift.admit_at:
        return None
    gross = Decimal(int((shift.exit_at - shift.admit_at).total_seconds() // 60))
    waits = sum((i.minutes for i in work.interruptions if i.kind in WAITS), Decimal(0))
    return max(Decimal(0), gross - waits)


def _member(work: GangWork, m: Member, shift: Shift | None, notes: list[str]) -> Member:
    if shift is None:
        return m
    minutes = gate_minutes(shift, work)
    if minutes is None:
        notes.append(f"{MINUTES_TYPED}: {m.registration} typed {_n(m.minutes_worked)} min kept "
                     f"(gate shift {shift.shift_id} has no placed exit)")
        return m
    diff = minutes - m.minutes_worked
    notes.append(f"{MINUTES_FROM_GATE}: {m.registration} typed {_n(m.minutes_worked)} min, gate "
                 f"{_n(minutes)} min (difference {'+' if diff >= 0 else ''}{_n(diff)} min)")
    return dataclasses.replace(m, minutes_worked=minutes, minutes_typed=m.minutes_worked)


def _gangway_conflicts(work: GangWork, m: Member, shift: Shift | None, theirs: Iterable[Shift],
                       here: tuple[dt.datetime, dt.datetime], notes: list[str]) -> None:
    if shift is not None and any(f.code == DOUBLE_ASSIGNMENT for f in shift.flags):
        notes.append(f"{DOUBLE_ASSIGNMENT}: {m.registration} gate shift {shift.shift_id} is flagged "
                     f"DOUBLE_ASSIGNMENT by the ledger")
    for other in theirs:
        if other.ship == work.ship:
            continue
        lo = other.admit_at or other.period_start
        hi = other.exit_at if other.closed_by == "exit" and other.exit_at else other.period_end
        if lo < here[1] and here[0] < max(lo, hi):
            notes.append(f"{DOUBLE_ASSIGNMENT}: {m.registration} also aboard ship {other.ship} "
                         f"({other.shift_id}) during gang {work.gang_id}'s period {work.period}")


def _gang_conflicts(works: Sequence[GangWork], bounds, notes: dict[str, list[str]]) -> None:
    seen: dict[str, list[GangWork]] = defaultdict(list)
    for w in works:
        for m in w.members:
            if m.boarded:
                seen[m.registration].append(w)
    for reg, gangs in seen.items():
        for i, a in enumerate(gangs):
            for b in gangs[i + 1:]:
                if a.ship == b.ship:
                    continue
                (a_lo, a_hi), (b_lo, b_hi) = bounds[a.gang_id], bounds[b.gang_id]
                if a_lo < b_hi and b_lo < a_hi:
                    notes[a.gang_id].append(f"{DOUBLE_ASSIGNMENT}: {reg} also in gang {b.gang_id} on "
                                            f"ship {b.ship} ({b.date.isoformat()} {b.period})")
                    notes[b.gang_id].append(f"{DOUBLE_ASSIGNMENT}: {reg} also in gang {a.gang_id} on "
                                            f"ship {a.ship} ({a.date.isoformat()} {a.period})")


@dataclasses.dataclass(frozen=True, slots=True)
class StoredGang:
    """A gang already imported into the ledger, as R10 needs it: its row id (``production_gangs.id``),
    gang id, work date, ship, period and the registrations who boarded it."""

    row: int
    gang_id: str
    date: dt.date
    ship: str
    period: str
    registrations: frozenset[str]


def stored_conflicts(works: Sequence[GangWork], stored: Iterable[StoredGang],
                     zone: ZoneInfo) -> tuple[dict[str, tuple[str, ...]], list[tuple[int, str]]]:
    """R10 (83.611 art. 22; Lei 9.719 art. 7): a member who boarded one of ``works`` and boarded a
    gang already in the ledger on another ship whose period overlaps (half-open: 07-13 and 13-19
    do not) is a double assignment, flagged on both. Returns the notes per new gang id and the
    ``(stored gang row, note)`` pairs to store on the earlier gangs. The same gang id and date as a
    new gang is not compared (its import is refused as a duplicate). Raises ``BadInput`` for a
    period that cannot be read."""
    by_reg: dict[str, list[StoredGang]] = defaultdict(list)
    for s in stored:
        for reg in s.registrations:
            by_reg[reg].append(s)
    notes: dict[str, list[str]] = defaultdict(list)
    on_stored: list[tuple[int, str]] = []
    if not by_reg:
        return {}, []
    spans: dict[tuple[dt.date, str], tuple[dt.datetime, dt.datetime]] = {}
    for w in works:
        here = _bounds(w, zone)
        for m in w.members:
            if not m.boarded:
                continue
            for s in by_reg.get(m.registration, ()):
                if s.ship == w.ship or (s.gang_id == w.gang_id and s.date == w.date):
                    continue
                key = (s.date, s.period)
                if key not in spans:
                    spans[key] = period_bounds(s.date, s.period, zone)
                lo, hi = spans[key]
                if lo < here[1] and here[0] < hi:
                    notes[w.gang_id].append(f"{DOUBLE_ASSIGNMENT}: {m.registration} also in gang {s.gang_id} "
                                            f"on ship {s.ship} ({s.date.isoformat()} {s.period}, in the ledger)")
                    on_stored.append((s.row, f"{DOUBLE_ASSIGNMENT}: {m.registration} also in gang {w.gang_id} "
                                             f"on ship {w.ship} ({w.date.isoformat()} {w.period})"))
    return {gid: tuple(dict.fromkeys(n)) for gid, n in notes.items()}, list(dict.fromkeys(on_stored))


def gangway_against_gangs(shifts: Iterable[Shift], stored: Iterable[StoredGang],
                          zone: ZoneInfo) -> dict[str, tuple[str, ...]]:
    """R10 (83.611 art. 22; Lei 9.719 art. 7), the gangway side: for each gangway shift whose
    registration boarded a gang already in the ledger on another ship whose period overlaps the
    shift (admit, or the period's start, to the exit, or the period's end; half-open), the details
    of its DOUBLE_ASSIGNMENT flag by shift id (the gang side is noted by ``from_gate``). Raises
    ``BadInput`` for a stored period that cannot be read."""
    by_reg: dict[str, list[StoredGang]] = defaultdict(list)
    for g in stored:
        for reg in g.registrations:
            by_reg[reg].append(g)
    out: dict[str, list[str]] = defaultdict(list)
    if not by_reg:
        return {}
    for s in shifts:
        for g in by_reg.get(s.registration, ()):
            if g.ship == s.ship:
                continue
            lo = s.admit_at or s.period_start
            hi = s.exit_at if s.closed_by == "exit" and s.exit_at else s.period_end
            g_lo, g_hi = period_bounds(g.date, g.period, zone)
            if lo < g_hi and g_lo < max(lo, hi):
                out[s.shift_id].append(f"also in gang {g.gang_id} on ship {g.ship} "
                                       f"({g.date.isoformat()} {g.period}, R10)")
    return {sid: tuple(dict.fromkeys(d)) for sid, d in out.items()}


def _bounds(work: GangWork, zone: ZoneInfo) -> tuple[dt.datetime, dt.datetime]:
    try:
        return period_bounds(work.date, work.period, zone)
    except (BadInput, ValueError) as exc:
        raise BadInput(f"gang {work.gang_id}: period {work.period!r} cannot be read: {exc}") from exc


def _n(value: Decimal) -> str:
    return format(value.normalize() if value == value.to_integral() else value, "f")
