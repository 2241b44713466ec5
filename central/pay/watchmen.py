"""Pay of port watchmen: rules P1-P7 of RULES.md (Decreto 83.611/1979 arts. 25-27, default rulebook)
as a pure function ``pay_shift(shift, rulebook, calendar) -> Statement``. No clock, no database.

Definitions (RULES.md, P):
- work day: the local date (port time zone) holding most of the ordinary period's minutes; a tie
  goes to the start date (``work_day``);
- night shift: at least ``night_min_share`` (default half) of the ordinary minutes fall inside the
  night window, default 19:00-07:00 (``night_share``);
- extension: whole minutes from the period end to the exit; ``tolerance_minutes`` or less counts as
  nothing; beyond that each started hour counts whole (``rounding = "ceil_hour"``) or minutes count
  exactly (``"minute"``) (``counted_extension_hours``). More than ``extension_cap_hours`` counted is
  still paid and flagged EXTENSION_OVER_CAP (art. 26 a);
- SDe = SD x the function's multiplier (vigia_chefe 1.5, art. 26 §3); SH = SDe / ordinary hours.

Money is Decimal (BRL): each line rounded half up to the cent (``StatementLine``), a ``lines`` basis
(P7, art. 27) sums already-rounded lines, the total is the sum of the rounded lines.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from decimal import Decimal
from functools import lru_cache
from zoneinfo import ZoneInfo

from central.pay.calendar import HolidayCalendar
from central.pay.lines import StatementLine
from central.pay.rulebook import Rulebook, Terms, parse_window
from portgate.errors import BadInput, ConfigError
from portgate.timeutil import PLAUSIBLE_FROM, PLAUSIBLE_UNTIL  # noqa: F401  (re-exported for pay's readers)

#: An exit more than this after the period end is not an extension (a forgotten exit tap): held.
MAX_EXIT_AFTER_END = dt.timedelta(hours=24)
EXTENSION_OVER_CAP = "EXTENSION_OVER_CAP"
_DAY = dt.timedelta(days=1)


@dataclasses.dataclass(frozen=True, slots=True)
class WatchShift:
    """What pay needs of one shift. Times are aware datetimes (any offset; compared in UTC).

    ``exit_at`` ``None`` means the shift was closed at the period end (no extension).
    ``berth`` is ``"berthed"`` or ``"anchored"``; ``function`` a key of the rulebook's functions.
    """

    shift_id: str
    registration: str
    function: str
    ship: str
    berth: str
    period_start: dt.datetime
    period_end: dt.datetime
    admit_at: dt.datetime | None
    exit_at: dt.datetime | None
    meal_worked: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class Statement:
    """The pay of one shift: lines in rulebook order, the total (sum of rounded lines), the work day,
    the flags raised (e.g. EXTENSION_OVER_CAP) and when payment is due (48 h after the service).
    ``hold_reason``: why the statement waits for the office's review before payment (an EARLY_EXIT
    shift, RULES.md P and G9), or None."""

    shift_id: str
    registration: str
    rulebook: str
    work_day: dt.date
    lines: tuple[StatementLine, ...]
    total: Decimal
    due_at: dt.datetime
    service_end: dt.datetime
    flags: tuple[str, ...] = ()
    extension_minutes: int = 0
    extension_hours: Decimal = Decimal(0)
    hold_reason: str | None = None


# -- definitions (pure, cached: a month of shifts shares few distinct periods) --------------------

@lru_cache(maxsize=8192)
def work_day(start: dt.datetime, end: dt.datetime, zone: ZoneInfo) -> dt.date:
    """Local date holding most of [start, end); a tie goes to the start date (RULES.md P)."""
    local_start = start.astimezone(zone)
    day = local_start.date()
    best_day, best = day, dt.timedelta(0)
    cursor = start
    while cursor < end:
        next_midnight = dt.datetime.combine(day + _DAY, dt.time(0), zone).astimezone(dt.UTC)
        piece = min(end, next_midnight) - cursor
        if piece > best:
            best_day, best = day, piece
        cursor, day = next_midnight, day + _DAY
    return best_day


@lru_cache(maxsize=8192)
def night_share(start: dt.datetime, end: dt.datetime, zone: ZoneInfo, window: str) -> Decimal:
    """Share (0..1) of [start, end) inside the local night window ``"HH-HH"`` (e.g. 19-07)."""
    w_start, w_end = parse_window(window, "night_window")
    total = (end - start).total_seconds()
    if total <= 0:
        return Decimal(0)
    inside = 0.0
    day = start.astimezone(zone).date() - _DAY
    last = end.astimezone(zone).date()
    while day <= last:
        ws = dt.datetime.combine(day, dt.time(0), zone) + dt.timedelta(hours=w_start)
        end_day = day + _DAY if w_end <= w_start else day
        we = dt.datetime.combine(end_day, dt.time(0), zone) + dt.timedelta(hours=w_end)
        lo, hi = max(start, ws.astimezone(dt.UTC)), min(end, we.astimezone(dt.UTC))
        if hi > lo:
            inside += (hi - lo).total_seconds()
        day += _DAY
    return Decimal(int(inside)) / Decimal(int(total))


def extension_minutes(period_end: dt.datetime, exit_at: dt.datetime | None) -> int:
    """Whole minutes worked after the period end (0 if no exit or an exit before the end)."""
    if exit_at is None or exit_at <= period_end:
        return 0
    return int((exit_at - period_end).total_seconds() // 60)


def counted_extension_minutes(minutes: int, terms: Terms) -> int:
    """Extension minutes that are paid: 0 within tolerance, else whole started hours (``ceil_hour``,
    in minutes) or the exact minutes (``minute``)."""
    if minutes <= terms.tolerance_minutes:
        return 0
    if terms.rounding == "ceil_hour":
        return -(-minutes // 60) * 60
    return minutes


def counted_extension_hours(minutes: int, terms: Terms) -> Decimal:
    """Extension hours that are paid: 0 within tolerance, else ceil to the hour or exact minutes."""
    return Decimal(counted_extension_minutes(minutes, terms)) / Decimal(60)


def _wage_on(rulebook: Rulebook, day: dt.date, shift_id: str) -> Decimal:
    """SD in force on ``day``; a day before the rulebook's wage table is a ``BadInput`` naming the
    shift, the rulebook and how to add a wage (docs/pay.md "Past days"), so a file or a ledger run
    refuses or holds that shift alone instead of failing without a row."""
    try:
        return rulebook.wage_on(day)
    except ConfigError as exc:
        first = rulebook.day_wages[0].effective_from.isoformat()
        raise BadInput(
            f"rulebook {rulebook.id} has no day wage in force on {day.isoformat()} (its day_wages "
            f"start {first}); add a [[day_wages]] entry in force from that date to the rulebook "
            f"file (docs/pay.md, Past days)",
            where=shift_id) from exc


# -- the engine ------------------------------------------------------------------------------------

def _check_times(shift: WatchShift) -> None:
    for name, value in (("period_start", shift.period_start), ("period_end", shift.period_end),
                        ("admit_at", shift.admit_at), ("exit_at", shift.exit_at)):
        if value is None:
            continue
        if value.tzinfo is None:
            raise BadInput(f"{name} has no UTC offset", where=shift.shift_id)
        if value < PLAUSIBLE_FROM:
            raise BadInput(f"{name} {value.isoformat()} is implausible (unset clock): held",
                           where=shift.shift_id)
        if value >= PLAUSIBLE_UNTIL:
            raise BadInput(f"{name} {value.isoformat()} is implausible (after 2100): held",
                           where=shift.shift_id)
    if shift.period_end <= shift.period_start:
        raise BadInput("period_end is not after period_start", where=shift.shift_id)
    if shift.admit_at is not None and shift.admit_at > shift.period_end:
        raise BadInput(f"admit_at {shift.admit_at.isoformat()} is after period_end "
                       f"{shift.period_end.isoformat()}: held", where=shift.shift_id)
    if shift.admit_at is not None and shift.exit_at is not None and shift.exit_at < shift.admit_at:
        raise BadInput("exit_at is before admit_at (backwards clock): held", where=shift.shift_id)
    if shift.exit_at is not None and shift.exit_at > shift.period_end + MAX_EXIT_AFTER_END:
        raise BadInput(f"exit_at {shift.exit_at.isoformat()} is more than 24 h after period_end "
                       f"{shift.period_end.isoformat()}: held", where=shift.shift_id)


def ordinary_period_problem(shift: WatchShift, rulebook: Rulebook, zone: ZoneInfo) -> str | None:
    """Why ``shift``'s period is not an ordinary period of the rulebook, or ``None`` if it is.

    An ordinary period (83.611 art. 9) starts and ends on whole local hours (port time zone ``zone``)
    and lasts the ``ordinary_hours`` of the terms in force on its work day (6 h in both example
    rulebooks), counted on the local wall clock (a period across a DST change still counts 6 h).
    P1 pays one day wage per ordinary period, so another length cannot be priced: the CSV reader
    refuses the row, the ledger path holds the shift. Raises ``ConfigError`` if no terms are in force.
    """
    start, end = shift.period_start.astimezone(zone), shift.period_end.astimezone(zone)
    for name, value in (("period_start", start), ("period_end", end)):
        if (value.minute, value.second, value.microsecond) != (0, 0, 0):
            return f"{name} {value.isoformat()} is not on a whole local hour ({zone.key})"
    ordinary = rulebook.terms_on(work_day(shift.period_start.astimezone(dt.UTC),
                                          shift.period_end.astimezone(dt.UTC), zone)).ordinary_hours
    wall = end.replace(tzinfo=None) - start.replace(tzinfo=None)
    if wall != dt.timedelta(hours=ordinary):
        return (f"period {start.isoformat()}..{end.isoformat()} lasts {wall} on the local clock; "
                f"the ordinary period of rulebook {rulebook.id} is {ordinary} h (83.611 art. 9)")
    return None


def pay_shift(shift: WatchShift, rulebook: Rulebook, calendar: HolidayCalendar) -> Statement:
    """Compute the statement of one watchman shift (rules P1-P7, 83.611 arts. 25-27).

    Returns a ``Statement`` whose lines carry rule id and article. Raises ``BadInput`` (naming the
    shift id) for a function the rulebook does not know, a naive or implausible (pre-2000, e.g. 1970,
    or after 2100) timestamp, an admit after the period end, an exit before the admit or more than
    24 h after the period end: the caller holds such a shift for review, never pays it.
    Raises ``ConfigError`` if no wage or terms are in force on the work day.
    """
    return ShiftPayer(rulebook, calendar).pay(shift)


class ShiftPayer:
    """``pay_shift`` for many shifts with one rulebook and calendar: shifts with the same period,
    function, berth, meal and extension minutes get the same lines, so those are computed once per
    payer (a month of 125,000 shifts has a few thousand distinct ones). Pure: no clock, no I/O."""

    def __init__(self, rulebook: Rulebook, calendar: HolidayCalendar) -> None:
        self.rulebook, self.calendar = rulebook, calendar
        self.due = dt.timedelta(hours=rulebook.payment_due_hours)
        self._memo: dict[tuple, tuple] = {}

    def pay(self, shift: WatchShift) -> Statement:
        """The statement of ``shift``; same contract and errors as ``pay_shift``."""
        _check_times(shift)
        start = shift.period_start.astimezone(dt.UTC)
        end = shift.period_end.astimezone(dt.UTC)
        exit_at = shift.exit_at.astimezone(dt.UTC) if shift.exit_at is not None else None
        minutes = extension_minutes(end, exit_at)
        key = (start, end, shift.function, shift.berth, shift.meal_worked, minutes)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = self._lines(shift, start, end, minutes)
        day, lines, total, flags, hours = found
        service_end = max(end, exit_at) if exit_at is not None else end
        return Statement(shift.shift_id, shift.registration, self.rulebook.id, day, lines, total,
                         service_end + self.due, service_end, flags, minutes, hours)

    def _lines(self, shift: WatchShift, start: dt.datetime, end: dt.datetime, minutes: int):
        rulebook, calendar = self.rulebook, self.calendar
        zone = calendar.zone
        day = work_day(start, end, zone)
        terms = rulebook.terms_on(day)
        multiplier = terms.functions.get(shift.function)
        if multiplier is None:
            raise BadInput(
                f"function {shift.function!r} is not in rulebook {rulebook.id} "
                f"(one of: {', '.join(sorted(terms.functions))})",
                where=shift.shift_id,
            )
        sde = _wage_on(rulebook, day, shift.shift_id) * multiplier
        counted = counted_extension_minutes(minutes, terms)
        hours = Decimal(counted) / Decimal(60)
        night = night_share(start, end, zone, terms.night_window) >= terms.night_min_share
        holiday = calendar.is_holiday(day)
        sunday = day.weekday() == 6 and not holiday
        flags = (EXTENSION_OVER_CAP,) if hours > terms.extension_cap_hours else ()
        applies = {"always": True, "night": night, "sunday": sunday, "holiday": holiday,
                   "meal_worked": shift.meal_worked, "anchored": shift.berth == "anchored",
                   "extension": hours > 0}
        lines: list[StatementLine] = []
        by_rule: dict[str, Decimal] = {}
        total = Decimal("0.00")
        for rule in terms.lines:
            if not applies[rule.when]:
                continue
            if rule.basis == "day_wage":
                amount = sde * rule.rate
            elif rule.basis == "extension_hours":
                # RULES.md rounding: SDe × rate × band minutes ÷ (ordinary hours × 60), divided last,
                # so an exact half cent rounds up (SH = SDe / 6 is never rounded on the way).
                top = counted if rule.to_hours is None else min(Decimal(counted), rule.to_hours * 60)
                band = top - rule.from_hours * 60
                if band <= 0:
                    continue
                amount = sde * rule.rate * band / (terms.ordinary_hours * 60)
            elif rule.basis == "lines":  # P7: on the already-rounded lines named in ``of``
                amount = sum((by_rule[ref] for ref in rule.of if ref in by_rule), Decimal(0)) * rule.rate
            else:  # fixed
                amount = rule.amount
            line = StatementLine(rule.rule, rule.article, rule.description, amount)
            lines.append(line)
            by_rule[rule.rule] = line.amount
            total += line.amount  # exact: every amount is already in cents
        return day, tuple(lines), total, flags, hours
