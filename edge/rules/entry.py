"""An entry attempt's rules (RULES.md section G): G3, G5, G6, G7 and G12. Pure: no clock, database,
socket or env.

``edge.rules.engine.decide`` calls ``entry_rules`` when a control card is read by a worker with no
open shift at this gate (and, in inspector mode, before the card is confiscated, so the flags raised
give the confiscation's reason); every rule is evaluated and each failure is added to the decision
being built (``Failures.fail``: rule id, reason key, flag, action). ``match_escala`` (G6/G9) is also
the exit reader's match when no shift is open; ``entry_bounds`` and ``hours_text`` are shared with
the exit rules (G9).
"""

from __future__ import annotations

import datetime as dt
import functools
from typing import Protocol

from edge.rules.model import Flag, GateView, OpenShift
from edge.rules.rulebook import GateRulebook
from portgate.errors import BadInput
from portgate.records import EscalaEntry, Worker, WorkerStatus
from portgate.rest import rest_between
from portgate.timeutil import as_utc


class Failures(Protocol):
    """What the entry rules need of the decision being built (``edge.rules.engine._Acc``)."""

    def fail(self, rule: str, key: str, *, deny: bool = True, flag: Flag | None = None,
             action: str | None = None, **params: object) -> None: ...


def entry_rules(view: GateView, reg: str, worker: Worker | None, open_shift: OpenShift | None,
                wall: dt.datetime, rb: GateRulebook, acc: Failures) -> EscalaEntry | None:
    """An entry attempt (no open shift at this gate): G3, G5, G6 (LATE_ARRIVAL, NOT_DISPATCHED,
    ROTATION_JUMP), G7 and G12, every one evaluated. Returns the escala entry admitted against."""
    admit_entry, late_entry = match_escala(view, reg, wall, rb)
    _check_registration(worker, reg, wall.astimezone(rb.tz).date(), rb, acc)  # G3
    _check_two_ships(view, reg, open_shift, admit_entry, rb, acc)  # G5
    if admit_entry is None and rb.g6.enabled:
        if late_entry is not None:  # G6: dispatched, but past the late tolerance
            start = entry_bounds(late_entry, rb)
            acc.fail("G6", "G6.late", flag=Flag.LATE_ARRIVAL, period=late_entry.period,
                     late=hours_text(wall - start[0]) if start else "?",
                     tolerance=rb.g6.late_tolerance_min)
        else:
            _not_dispatched(view, reg, wall, rb, acc)  # G6
    _check_rest(view, reg, admit_entry, wall, rb, acc)  # G7
    _check_category(worker, admit_entry or late_entry, rb, acc)  # G12
    return admit_entry


def _check_registration(worker: Worker | None, reg: str, today: dt.date, rb: GateRulebook,
                        acc: Failures) -> None:
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
                     rb: GateRulebook, acc: Failures) -> None:
    """G5 (83.611 art. 22; Lei 9.719 art. 7): not on two ships at once."""
    if not rb.g5.enabled:
        return
    if open_shift is not None and not _same_ship(view, open_shift.gate_id, open_shift.ship):
        acc.fail("G5", "G5.open_shift", flag=Flag.DOUBLE_ASSIGNMENT,
                 ship=open_shift.ship, gate_id=open_shift.gate_id)
    if matched is None:
        return
    here = entry_bounds(matched, rb)
    if here is None:
        return
    for entry in view.dispatches(reg, here[0]):
        if entry.registration != reg or _same_ship(view, entry.gate_id, entry.ship):
            continue
        other = entry_bounds(entry, rb)
        if other is not None and other[0] < here[1] and here[0] < other[1]:
            acc.fail("G5", "G5.dispatched", flag=Flag.DOUBLE_ASSIGNMENT,
                     ship=entry.ship, period=entry.period)
            return


def _not_dispatched(view: GateView, reg: str, wall: dt.datetime, rb: GateRulebook,
                    acc: Failures) -> None:
    """G6 (83.611 arts. 10, 20 i): not on this gate's escala now -> NOT_DISPATCHED; if this gate's
    post for the period covering now is dispatched to someone else, also ROTATION_JUMP."""
    acc.fail("G6", "G6.not_dispatched", flag=Flag.NOT_DISPATCHED)
    early = minutes(rb.g6.early_tolerance_min)
    # The first entry of ``gate_dispatches`` (another worker's, at this gate) whose period covers
    # ``wall``: one (date, period) has one pair of bounds, so they are computed once per group.
    found: tuple[int, EscalaEntry] | None = None
    for group in view.gate_periods(wall):
        bounds = entry_bounds(group[0][1], rb)
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
                rb: GateRulebook, acc: Failures) -> None:
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
    bounds = entry_bounds(matched, rb) if matched is not None else None
    start = bounds[0] if bounds is not None else wall
    rest = rest_between(last, start)
    if rest < hours(rb.g7.rest_hours):
        deny = rb.g7.mode == "deny"
        acc.fail("G7", "G7.rest", deny=deny, flag=None if deny else Flag.REST_SHORT,
                 rest=hours_text(rest), hours=rb.g7.rest_hours)


def _check_category(worker: Worker | None, entry: EscalaEntry | None, rb: GateRulebook,
                    acc: Failures) -> None:
    """G12 (83.611 art. 1; DL 2.032 art. 12 §1): the post's function must be one the worker's
    category may fill (``rb.g12.categories``). Checked against the entry the read matched."""
    if not rb.g12.enabled or worker is None or entry is None:
        return
    if not rb.g12.may_fill(worker.category, entry.function):
        acc.fail("G12", "G12.wrong_category", flag=Flag.WRONG_CATEGORY,
                 category=worker.category, function=entry.function)


def match_escala(view: GateView, reg: str, wall: dt.datetime,
                 rb: GateRulebook) -> tuple[EscalaEntry | None, EscalaEntry | None]:
    """G6/G9: this worker's entry at this gate whose admission window
    ``[start - early, start + late]`` holds ``wall`` (nearest start wins), and, failing that, an
    entry whose window has passed but whose period (plus the exit grace) has not: the LATE_ARRIVAL
    case at an entry reader, the NO_ENTRY case at an exit reader.
    """
    early = minutes(rb.g6.early_tolerance_min)
    late = minutes(rb.g6.late_tolerance_min)
    grace = minutes(rb.g9.exit_grace_min)
    admit: tuple[dt.timedelta, EscalaEntry] | None = None
    past: tuple[dt.datetime, EscalaEntry] | None = None
    for entry in view.dispatches(reg, wall):
        if entry.gate_id != view.gate_id or entry.registration != reg:
            continue
        bounds = entry_bounds(entry, rb)
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


def entry_bounds(entry: EscalaEntry, rb: GateRulebook) -> tuple[dt.datetime, dt.datetime] | None:
    """The entry's period as aware UTC instants ``(start, end)`` on the port's time zone
    (``EscalaEntry.bounds``); None for an entry whose period cannot be placed (a malformed period
    or date): such an entry matches nothing."""
    try:
        return entry.bounds(rb.tz)
    except (BadInput, ValueError, OverflowError):
        return None


@functools.lru_cache(maxsize=64)
def minutes(n: float) -> dt.timedelta:
    """``timedelta(minutes=n)`` for a rulebook's tolerance in minutes, made once per value (the
    rules read them on every tap; building a ``timedelta`` from keywords costs more than the look-up)."""
    return dt.timedelta(minutes=n)


@functools.lru_cache(maxsize=64)
def hours(n: float) -> dt.timedelta:
    """``timedelta(hours=n)`` for a rulebook's duration in hours, made once per value (``minutes``)."""
    return dt.timedelta(hours=n)


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


def hours_text(delta: dt.timedelta) -> str:
    """A duration as the messages show it, whole minutes rounded down: ``2h05``, ``-0h30``."""
    minutes = int(delta.total_seconds() // 60)
    sign = "-" if minutes < 0 else ""
    minutes = abs(minutes)
    return f"{sign}{minutes // 60}h{minutes % 60:02d}"
