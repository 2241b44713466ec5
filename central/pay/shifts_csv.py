"""``shifts.csv``: shifts given by hand (or exported) for the pay command.

Columns: registration, function, ship (IMO number, 7 digits), berth (berthed|anchored), period_start,
period_end (ISO 8601 with offset), admit_at (ISO 8601 with offset), exit_at (ISO 8601 with offset,
empty = no exit: closed at the period end), meal_worked (true/false/1/0/yes/no/sim/não, empty = false).

The whole file is refused (one ``BadInput`` naming every bad row ``shifts.csv:LINE``) when a row is
malformed or impossible: the same shift twice, a period that is not an ordinary period of the
rulebook, an admit after the period end, an exit before the admit or more than 24 h after the period
end, a time outside 2000..2100, a function the rulebook does not know. One worker on two ships at
overlapping times is what the ledger flags DOUBLE_ASSIGNMENT: those shifts are held, as in the ledger.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from zoneinfo import ZoneInfo

from central.ledger.shifts import Flag, Shift, flag_conflicts, shift_key
from central.pay.calendar import HolidayCalendar
from central.pay.statements_store import PayRun, pay_shifts
from central.pay.rulebook import Rulebook
from central.pay.watchmen import (PLAUSIBLE_FROM, PLAUSIBLE_UNTIL, ShiftPayer, WatchShift,
                                  ordinary_period_problem)
from portgate import cells
from portgate.cells import parse_aware
from portgate.errors import BadInput
from portgate.records import build_rows
from portgate.tables import read_rows as read_table
from wire.flags import ShiftFlag

COLUMNS = ("registration", "function", "ship", "berth", "period_start", "period_end", "admit_at",
           "exit_at", "meal_worked")
_IMO = re.compile(r"[0-9]{7}")


def _time(row: Mapping[str, str], field: str) -> dt.datetime:
    at = parse_aware(row.get(field), field)
    if not PLAUSIBLE_FROM <= at < PLAUSIBLE_UNTIL:
        raise BadInput(f"{field} {row.get(field)!r} is outside the years 2000..2100")
    return at


def shift_from_row(row: Mapping[str, str], zone: ZoneInfo) -> WatchShift:
    """One ``WatchShift`` from a CSV row; its id is built as the ledger builds it."""
    registration = cells.required(row.get("registration"), "registration")
    ship = cells.required(row.get("ship"), "ship")
    if not _IMO.fullmatch(ship):
        raise BadInput(f"ship {ship!r} is not an IMO number (7 digits)")
    berth = cells.required(row.get("berth"), "berth")
    if berth not in ("berthed", "anchored"):
        raise BadInput(f"berth {berth!r} is not one of berthed|anchored")
    start = _time(row, "period_start")
    end = _time(row, "period_end")
    if end <= start:
        raise BadInput("period_end is not after period_start")
    admit = _time(row, "admit_at")
    exit_text = (row.get("exit_at") or "").strip()
    exit_at = _time(row, "exit_at") if exit_text else None
    if exit_at is not None and exit_at < admit:
        raise BadInput("exit_at is before admit_at")
    meal = cells.yes_no(row.get("meal_worked"), "meal_worked", default=False)
    local_start, local_end = start.astimezone(zone), end.astimezone(zone)
    period = f"{local_start.hour:02d}-{local_end.hour:02d}"
    return WatchShift(
        shift_id=shift_key(registration, ship, local_start.date(), period),
        registration=registration, function=cells.required(row.get("function"), "function"),
        ship=ship, berth=berth,
        period_start=start, period_end=end, admit_at=admit, exit_at=exit_at,
        meal_worked=meal,
    )


def load_shifts_csv(path: str | Path, zone: ZoneInfo,
                    check: Callable[[WatchShift], None] | None = None) -> list[WatchShift]:
    """Read ``shifts.csv`` into ``WatchShift`` values, in file order. ``check(shift)`` may raise
    ``BadInput`` for more refusals (its message is given for that row). Raises one ``BadInput``
    naming each bad row (``shifts.csv:LINE: ...``), a missing column, a second row of a shift id
    already given, a missing or non-UTF-8 file; nothing is returned unless every row is good."""
    path = Path(path)
    seen: dict[str, str] = {}

    def one(row: Mapping[str, str], where: str) -> WatchShift:
        shift = shift_from_row(row, zone)
        first = seen.setdefault(shift.shift_id, where)
        if first != where:
            raise BadInput(f"shift {shift.shift_id} is given twice (first at {first})")
        if check is not None:
            check(shift)
        return shift

    return build_rows(read_table(path, COLUMNS, known=COLUMNS), one)


def as_ledger_shift(shift: WatchShift, zone: ZoneInfo) -> Shift:
    """The ledger's view of a CSV shift (work date = local start date, ``HH-HH`` period, no exit =
    closed at the period end and flagged MISSING_EXIT), so both paths flag and pay alike."""
    start, end = shift.period_start.astimezone(zone), shift.period_end.astimezone(zone)
    closed_by = "exit" if shift.exit_at is not None else "period_end"
    flags = () if shift.exit_at is not None else (Flag(ShiftFlag.MISSING_EXIT, "no exit: closed at the period end"),)
    return Shift(
        shift_id=shift.shift_id, registration=shift.registration, ship=shift.ship,
        work_date=start.date(), period=f"{start.hour:02d}-{end.hour:02d}", function=shift.function,
        berth=shift.berth, voyage=None, post=None, gate_id=None,
        period_start=shift.period_start.astimezone(dt.UTC), period_end=shift.period_end.astimezone(dt.UTC),
        admit_at=shift.admit_at.astimezone(dt.UTC) if shift.admit_at else None,
        exit_at=shift.exit_at.astimezone(dt.UTC) if shift.exit_at else None,
        closed_by=closed_by, meal_worked=shift.meal_worked, flags=flags,
    )


def pay_shifts_csv(path: str | Path, rulebook: Rulebook, calendar: HolidayCalendar, *,
                   now: dt.datetime | None = None) -> PayRun:
    """Read and pay ``shifts.csv`` (rules P1-P7). Every row must be an ordinary period of
    ``rulebook`` the engine can pay, or the whole file is refused (``BadInput`` naming the rows).
    Then, as in the ledger, a worker's overlapping shifts on two ships are flagged DOUBLE_ASSIGNMENT
    and held (returned in ``held``, not paid); with ``now``, a row with no ``exit_at`` whose period
    end plus the exit grace is after ``now`` is held OPEN (``pay_shifts``); the rest are paid, in
    file order."""
    zone, payer = calendar.zone, ShiftPayer(rulebook, calendar)

    def payable(shift: WatchShift) -> None:
        problem = ordinary_period_problem(shift, rulebook, zone)
        if problem is not None:
            raise BadInput(problem)
        try:
            payer.pay(shift)
        except BadInput as exc:
            raise BadInput(exc.reason.removesuffix(": held")) from exc

    shifts = load_shifts_csv(path, zone, payable)
    return pay_shifts(flag_conflicts([as_ledger_shift(s, zone) for s in shifts]), rulebook, calendar, now=now)
