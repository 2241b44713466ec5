"""The Decimal reference of the watchmen's pay: the engine's former money arithmetic, one shift at
a time (no memo, no integer centavos), kept as the oracle of the property test
(tests/central/pay/test_pay_cents.py). Each line is ``Decimal`` arithmetic at 28 digits, rounded half up
to the cent by ``StatementLine``; the total is the sum of the rounded lines (RULES.md rounding).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from central.pay.calendar import HolidayCalendar
from central.pay.lines import StatementLine
from central.pay.rulebook import Rulebook
from central.pay.watchmen import (EXTENSION_OVER_CAP, WatchShift, _check_times,
                                  counted_extension_minutes, night_share, work_day)


def reference_pay(shift: WatchShift, rulebook: Rulebook, calendar: HolidayCalendar) -> dict:
    """``{day, lines: [(rule, amount str)], total str, flags, minutes, hours, due_at, service_end}``
    of one shift, computed in ``Decimal`` as the engine did before integer centavos."""
    _check_times(shift)
    start = shift.period_start.astimezone(dt.UTC)
    end = shift.period_end.astimezone(dt.UTC)
    exit_at = shift.exit_at.astimezone(dt.UTC) if shift.exit_at is not None else None
    minutes = 0 if exit_at is None or exit_at <= end else int((exit_at - end).total_seconds() // 60)
    zone = calendar.zone
    day = work_day(start, end, zone)
    terms = rulebook.terms_on(day)
    sde = rulebook.wage_on(day) * terms.functions[shift.function]
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
            top = counted if rule.to_hours is None else min(Decimal(counted), rule.to_hours * 60)
            band = top - rule.from_hours * 60
            if band <= 0:
                continue
            amount = sde * rule.rate * band / (terms.ordinary_hours * 60)
        elif rule.basis == "lines":
            amount = sum((by_rule[ref] for ref in rule.of if ref in by_rule), Decimal(0)) * rule.rate
        else:
            amount = rule.amount
        line = StatementLine(rule.rule, rule.article, rule.description, amount)
        lines.append(line)
        by_rule[rule.rule] = line.amount
        total += line.amount
    service_end = max(end, exit_at) if exit_at is not None else end
    return {"day": day, "lines": [(line.rule, str(line.amount)) for line in lines],
            "total": str(total), "flags": flags, "minutes": minutes, "hours": hours,
            "due_at": service_end + dt.timedelta(hours=rulebook.payment_due_hours),
            "service_end": service_end}
