"""Shift reconstruction: admit/exit tap events -> shifts, with flags (RULES.md G5, G8, G9; DESIGN.md
"reliability": pay is never computed from a 1970 or backwards timestamp).

``reconstruct(events, zone)`` is the pure core (a list of ``wire.events.Event``, or of the ledger's
narrow ``central.ledger.taps.TapEvent`` views of them, in; shifts out).
``rebuild_shifts(engine, date_from, date_to, zone)`` reads the events table, reconstructs, and
replaces the derived ``shifts`` / ``shift_flags`` rows of those work dates. ``read_shifts`` reads them
back for pay.

How a shift is formed: tap events decided ``admit`` or ``exit`` that carry a registration and the
escala dispatch are grouped by (registration, ship, dispatch date, period). The earliest admit opens
the shift, the latest exit after it closes it. Flags (``HOLD_FLAGS`` keep a shift from being paid
until someone reviews it):

- MISSING_EXIT: admit with no exit; closed at the period end (paid without extension, reviewed).
- NO_ENTRY (hold): exit with no admit (G9).
- REPEATED_ADMIT: more than one admit for the same dispatch (the earliest counts).
- DOUBLE_ASSIGNMENT (hold): the same worker on two ships with overlapping shifts, found after the
  fact (e.g. two gates offline, G5 / 83.611 art. 22). Both shifts are kept and flagged.
- CLOCK_PLACED: an event's clock was not trusted; its time was placed from a trusted event of the
  same gate boot: anchor time + (mono_ns - anchor mono_ns). Paid, flagged for review.
- CLOCK_UNPLACEABLE (hold): untrusted clock and no trusted event in that boot to place it by.
- CLOCK_BACKWARDS (hold): a trusted time earlier than an earlier-sequenced trusted event of the same
  boot, or an exit before its admit.
- EARLY_EXIT (review, ``REVIEW_FLAGS``): the exit the gate flagged EARLY_EXIT (G9: more than the
  tolerance before the end of the ordinary period, 83.611 arts. 9, 20 b, e). The shift is paid as
  computed, and its statement is on hold for the office's review (RULES.md P).
- MEAL_AT_GATE (paid): a ``meal_worked`` event journaled at the gate (the inspector's meal mode)
  names this shift: ``meal_worked`` is set, so pay adds P6 (83.611 art. 26 d). An office
  correction (``central.ledger.corrections``, MEAL_CORRECTED) applied after it wins.
"""

from __future__ import annotations

import bisect
import dataclasses
import datetime as dt
import operator
from collections import defaultdict
from collections.abc import Iterable, Sequence
from zoneinfo import ZoneInfo

from central.ledger.taps import MealView, TapView
from portgate.records import period_bounds  # noqa: F401  (re-exported: central.ledger.shifts.period_bounds)
from portgate.timeutil import PLAUSIBLE_FROM
from wire.events import Event, MealWorkedPayload, TapPayload
from wire.flags import HOLD_FLAGS, REVIEW_FLAGS, ShiftFlag  # noqa: F401  (re-exported)
from wire.flags import Flag as GateFlag

#: The flag vocabulary is wire.flags (``HOLD_FLAGS``, ``REVIEW_FLAGS``: RULES.md P, G9).
#: Payload types of a tap and of a meal-worked record: the wire's, or the ledger's narrow views.
_TAPS = (TapPayload, TapView)
_MEALS = (MealWorkedPayload, MealView)
MEAL_AT_GATE = ShiftFlag.MEAL_AT_GATE  # P6: meal interval worked, recorded at the gate (paid, not held)
#: A trusted clock may step back this much (NTP slew, two readers) before it counts as backwards.
BACKWARDS_SLACK = dt.timedelta(seconds=2)


@dataclasses.dataclass(frozen=True, slots=True)
class Flag:
    code: str
    detail: str = ""


@dataclasses.dataclass(frozen=True, slots=True)
class Shift:
    """A reconstructed shift. Times are aware UTC; ``admit_at``/``exit_at`` ``None`` when missing or
    not placeable. ``held`` is True when a flag in ``HOLD_FLAGS`` is raised: never pay it."""

    shift_id: str
    registration: str
    ship: str
    work_date: dt.date
    period: str
    function: str
    berth: str
    voyage: str | None
    post: str | None
    gate_id: str | None
    period_start: dt.datetime
    period_end: dt.datetime
    admit_at: dt.datetime | None
    exit_at: dt.datetime | None
    closed_by: str  # exit | period_end | none
    admit_event_id: str | None = None
    exit_event_id: str | None = None
    meal_worked: bool = False
    flags: tuple[Flag, ...] = ()

    @property
    def held(self) -> bool:
        if not self.flags:  # the common case, on the pay run's hot path
            return False
        return any(f.code in HOLD_FLAGS for f in self.flags)

    @property
    def review_reasons(self) -> tuple[str, ...]:
        """``CODE: detail`` of each ``REVIEW_FLAGS`` flag: the statement's hold reasons."""
        if not self.flags:
            return ()
        return tuple(f"{f.code}: {f.detail}" for f in self.flags if f.code in REVIEW_FLAGS)


def shift_key(registration: str, ship: str, day: dt.date, period: str) -> str:
    """The stable id of a shift: ``registration/ship/YYYY-MM-DD/HH-HH`` (same from events and CSV)."""
    return f"{registration}/{ship}/{day.isoformat()}/{period}"




# -- clock placement ---------------------------------------------------------------------------------

def place_times(events: Sequence[Event]) -> dict[str, tuple[dt.datetime | None, tuple[Flag, ...]]]:
    """Time of every event (by event id) and the clock flags raised for it.

    Trusted, plausible clock: its own time (CLOCK_BACKWARDS if earlier than an earlier-sequenced
    trusted event of the same boot). Otherwise: placed from the nearest-by-sequence trusted event of
    the same (gate, boot) by monotonic time (CLOCK_PLACED), or ``None`` (CLOCK_UNPLACEABLE).
    """
    boots: dict[tuple[str, str], list[Event]] = defaultdict(list)
    for ev in events:
        boots[(ev.gate_id, ev.boot_id)].append(ev)
    placed: dict[str, tuple[dt.datetime | None, tuple[Flag, ...]]] = {}
    utc = dt.UTC
    for (gate, boot), items in boots.items():
        items.sort(key=_SEQ)
        trusted = [ev.clock_trusted and ev.occurred_at >= PLAUSIBLE_FROM for ev in items]
        anchors: list[Event] | None = None  # built on the first untrusted event of the boot
        latest: dt.datetime | None = None
        for ev, ok in zip(items, trusted):
            if ok:
                at = ev.occurred_at
                if at.tzinfo is not utc:
                    at = at.astimezone(utc)
                if latest is None or at > latest:
                    latest = at
                elif at < latest - BACKWARDS_SLACK:
                    placed[ev.event_id] = (at, (Flag(ShiftFlag.CLOCK_BACKWARDS,
                                                     f"{gate} boot {boot} seq {ev.seq}: {at.isoformat()} "
                                                     f"< {latest.isoformat()}"),))
                    continue
                placed[ev.event_id] = (at, ())
                continue
            if anchors is None:
                anchors = [e for e, e_ok in zip(items, trusted) if e_ok]
                anchor_seqs = [e.seq for e in anchors]
            if not anchors:
                placed[ev.event_id] = (None, (Flag(ShiftFlag.CLOCK_UNPLACEABLE,
                                                   f"{gate} boot {boot} seq {ev.seq}: no trusted event "
                                                   "in this boot"),))
                continue
            i = bisect.bisect_left(anchor_seqs, ev.seq)
            near = [anchors[j] for j in (i - 1, i) if 0 <= j < len(anchors)]
            anchor = min(near, key=lambda a: abs(a.seq - ev.seq))
            at = anchor.occurred_at.astimezone(utc) + dt.timedelta(
                microseconds=(ev.mono_ns - anchor.mono_ns) // 1000)
            placed[ev.event_id] = (at, (Flag(ShiftFlag.CLOCK_PLACED,
                                             f"{gate} boot {boot} seq {ev.seq} placed from seq "
                                             f"{anchor.seq}"),))
    return placed


_SEQ = operator.attrgetter("seq")


def clock_flagged(events: Sequence[Event]) -> dict[str, tuple[dt.datetime | None, tuple[Flag, ...]]]:
    """The entries of ``place_times(events)`` that carry a clock flag (pure): every other event is
    at its own trusted time. A boot whose events are all trusted, plausible and never step back by
    more than ``BACKWARDS_SLACK`` in sequence order raises none, and is only checked, not placed."""
    boots: dict[tuple[str, str], list[Event]] = defaultdict(list)
    for ev in events:
        boots[(ev.gate_id, ev.boot_id)].append(ev)
    out: dict[str, tuple[dt.datetime | None, tuple[Flag, ...]]] = {}
    for items in boots.values():
        items.sort(key=_SEQ)
        latest = None
        for ev in items:
            at = ev.occurred_at
            if not ev.clock_trusted or at < PLAUSIBLE_FROM:
                break
            if latest is None or at > latest:
                latest = at
            elif at < latest - BACKWARDS_SLACK:
                break
        else:
            continue
        out.update((eid, p) for eid, p in place_times(items).items() if p[1])
    return out


# -- reconstruction ----------------------------------------------------------------------------------

def reconstruct(events: Iterable[Event], zone: ZoneInfo, *, placed: dict | None = None) -> list[Shift]:
    """Rebuild shifts from gate events (pure). ``events`` may hold any event types and any order;
    non-tap events only serve as clock anchors. ``zone`` is the port's time zone (periods are local).
    ``placed``: the ``place_times`` of a superset of ``events`` (every event of their boots), to
    rebuild some workers' shifts with the clock placement of the whole month; by default
    ``place_times(events)``.

    Returns shifts ordered by (period start, registration), each with its flags. Never drops a valid
    admit or exit: a conflict or a bad clock becomes a flag.
    """
    events = list(events)
    if placed is None:
        placed = place_times(events)
    groups: dict[tuple[str, str, dt.date, str], list[Event]] = defaultdict(list)
    meals: list[Event] = []  # meal-worked records, in event order
    taps, meal_types = _TAPS, _MEALS
    for ev in events:  # a shift tap: an admit or exit with a registration and a dispatch
        p = ev.payload
        if isinstance(p, taps):
            if ((p.decision == "admit" or p.decision == "exit")
                    and p.registration is not None and p.dispatch is not None):
                d = p.dispatch
                groups[(p.registration, d.ship, d.date, d.period)].append(ev)
        elif isinstance(p, meal_types):
            meals.append(ev)

    shifts = [_one_shift(key, evs, placed, zone) for key, evs in groups.items()]
    shifts = _meals_at_gate(shifts, meals)
    shifts = flag_conflicts(shifts)
    shifts.sort(key=_SHIFT_ORDER)
    return shifts


_SHIFT_ORDER = operator.attrgetter("period_start", "registration", "shift_id")


def _admits_and_exits(evs: list[Event], placed, start: dt.datetime) -> tuple[list[Event], list[Event]]:
    """A shift's admits and exits, each in event order: placed time (``start`` where unplaceable),
    gate, sequence (a stable sort of ``evs``, in place)."""
    if len(evs) > 1:
        def order(ev: Event):
            at = placed[ev.event_id][0]
            return (at if at is not None else start, ev.gate_id, ev.seq)

        if len(evs) == 2:  # the common admit and exit: as the (stable) sort orders them
            if order(evs[1]) < order(evs[0]):
                evs.reverse()
        else:
            evs.sort(key=order)
    admits: list[Event] = []
    exits: list[Event] = []
    for e in evs:
        decision = e.payload.decision
        if decision == "admit":
            admits.append(e)
        elif decision == "exit":
            exits.append(e)
    return admits, exits


def _admit_then_exit(evs: list[Event], placed, start: dt.datetime):
    """``(admit, its placement, exit, its placement)`` when ``evs`` is the common shift (two taps,
    in event order an admit then an exit: ``_admits_and_exits`` gives one of each, and that exit
    closes the shift whatever the times), else ``None``; ``evs`` ordered in place as
    ``_admits_and_exits`` orders it either way."""
    if len(evs) != 2:
        return None
    a, b = evs
    pa, pb = placed[a.event_id], placed[b.event_id]
    ta, tb = pa[0], pb[0]
    if (tb if tb is not None else start, b.gate_id, b.seq) < (ta if ta is not None else start, a.gate_id, a.seq):
        evs.reverse()
        a, b, pa, pb = b, a, pb, pa
    if a.payload.decision == "admit" and b.payload.decision == "exit":
        return a, pa, b, pb
    return None


def _one_shift(key, evs: list[Event], placed, zone: ZoneInfo) -> Shift:
    registration, ship, day, period = key
    start, end = period_bounds(day, period, zone)
    flags: list[Flag] = []
    common = _admit_then_exit(evs, placed, start)
    if common is not None:  # one admit and one exit: the fields below as the general path sets them
        admit, admit_place, exit_ev, exit_place = common
        admit_at, exit_at = admit_place[0], exit_place[0]
    else:
        admits, exits = _admits_and_exits(evs, placed, start)
        admit = admits[0] if admits else None
        admit_place = placed[admit.event_id] if admit is not None else None
        admit_at = admit_place[0] if admit_place is not None else None
        if len(admits) > 1:
            flags.append(Flag(ShiftFlag.REPEATED_ADMIT, f"{len(admits)} admits; the earliest counts"))
        exit_ev = None
        if exits:
            later = [e for e in exits if admit_at is None or placed[e.event_id][0] is None
                     or placed[e.event_id][0] >= admit_at]
            exit_ev = later[-1] if later else exits[-1]
        exit_place = placed[exit_ev.event_id] if exit_ev is not None else None
        exit_at = exit_place[0] if exit_place is not None else None
    if admit_place is not None and admit_place[1]:
        flags.extend(admit_place[1])
    if exit_place is not None and exit_place[1]:
        flags.extend(exit_place[1])
    if admit is None:
        flags.append(Flag(ShiftFlag.NO_ENTRY, "exit with no admit (G9)"))
    if exit_ev is not None and exit_ev.payload.flags and GateFlag.EARLY_EXIT in exit_ev.payload.flags:
        flags.append(Flag(ShiftFlag.EARLY_EXIT, _early_detail(exit_at, end, zone)))
    if exit_ev is None:
        flags.append(Flag(ShiftFlag.MISSING_EXIT, "no exit: closed at the period end"))
        closed_by = "period_end"
    else:
        closed_by = "exit"
    if admit_at is not None and exit_at is not None and exit_at < admit_at:
        flags.append(Flag(ShiftFlag.CLOCK_BACKWARDS, "exit before admit"))
    base = (admit or exit_ev)
    d = base.payload.dispatch
    return Shift(
        shift_id=f"{registration}/{ship}/{day.isoformat()}/{period}",  # shift_key, inline
        registration=registration, ship=ship,
        work_date=day, period=period, function=d.function, berth=d.berth, voyage=d.voyage,
        post=d.post, gate_id=base.gate_id, period_start=start, period_end=end,
        admit_at=admit_at, exit_at=exit_at, closed_by=closed_by,
        admit_event_id=admit.event_id if admit else None,
        exit_event_id=exit_ev.event_id if exit_ev else None,
        flags=tuple(dict.fromkeys(flags)) if flags else (),
    )


def _meals_at_gate(shifts: list[Shift], events: list[Event]) -> list[Shift]:
    """P6 (83.611 art. 26 d): a meal-worked record journaled at the gate (inspector's meal mode)
    sets ``meal_worked`` on the shift of its dispatch, flagged MEAL_AT_GATE (paid, not held) naming
    the gate and the inspector. A record whose shift has no admit or exit is ignored. ``events``:
    any events, in event order (``reconstruct`` passes the meal records only)."""
    meals: dict[str, Event] = {}
    for ev in events:
        p = ev.payload
        if isinstance(p, _MEALS):
            key = shift_key(p.registration, p.dispatch.ship, p.dispatch.date, p.dispatch.period)
            meals.setdefault(key, ev)
    if not meals:
        return shifts
    out = []
    for s in shifts:
        ev = meals.get(s.shift_id)
        if ev is None:
            out.append(s)
            continue
        p = ev.payload
        flag = Flag(MEAL_AT_GATE, f"P6 meal interval worked: recorded at gate {ev.gate_id} by "
                                  f"inspector {p.inspector_registration or p.inspector_uid} "
                                  f"(event {ev.event_id}; 83.611 art. 26 d)")
        out.append(dataclasses.replace(s, meal_worked=True, flags=s.flags + (flag,)))
    return out


def _early_detail(exit_at: dt.datetime | None, end: dt.datetime, zone: ZoneInfo) -> str:
    if exit_at is None:
        return "exit flagged at the gate (G9; 83.611 arts. 9, 20 b, e)"
    minutes = int((end - exit_at).total_seconds() // 60)
    return (f"exit at {exit_at.astimezone(zone):%H:%M}, {minutes} min before the period end "
            f"{end.astimezone(zone):%H:%M} (G9; 83.611 arts. 9, 20 b, e)")


def flag_conflicts(shifts: list[Shift]) -> list[Shift]:
    """DOUBLE_ASSIGNMENT on both shifts when one worker's shifts on different ships overlap (by the
    admit..exit times, or the period where one is missing). Pure; the pay CSV reader uses it too."""
    by_worker: dict[str, list[tuple]] = defaultdict(list)
    for i, s in enumerate(shifts):  # (start, index, end, ship): the span each shift occupies, once
        lo = s.admit_at or s.period_start
        hi = s.exit_at if s.closed_by == "exit" and s.exit_at is not None else s.period_end
        by_worker[s.registration].append((lo, i, hi if hi > lo else lo, s.ship))
    extra: dict[int, list[Flag]] = defaultdict(list)
    for spans in by_worker.values():
        if len(spans) < 2:
            continue
        spans.sort()  # by start, then index (unique): the stable sort of the shifts by start
        for a_pos, (_lo, a, a_hi, a_ship) in enumerate(spans):
            for b_lo, b, _hi, b_ship in spans[a_pos + 1:]:
                if b_lo >= a_hi:
                    break
                if a_ship != b_ship:
                    extra[a].append(Flag(ShiftFlag.DOUBLE_ASSIGNMENT, f"overlaps {shifts[b].shift_id}"))
                    extra[b].append(Flag(ShiftFlag.DOUBLE_ASSIGNMENT, f"overlaps {shifts[a].shift_id}"))
    if not extra:
        return list(shifts)
    return [dataclasses.replace(s, flags=s.flags + tuple(extra[i])) if i in extra else s
            for i, s in enumerate(shifts)]
