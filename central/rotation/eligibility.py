"""Registration validity on a date (G3) and the dispatch eligibility reasons of R2. Pure.

Written here because the gate rules branch had no registration-validity function to reuse when this
was written; it follows RULES.md G3 with these readings:

- ``cancelled`` is never valid.
- A suspension covers ``suspended_from``..``suspended_until`` inclusive. A worker with status
  ``suspended`` and no dates is suspended indefinitely; with dates, only inside them (so a
  suspension recorded ahead of time takes effect on its start date, R4).
- The health exam must be no older than ``health_exam_months`` (default 24) on the date; a worker
  with no exam on file is not valid.
- Categories in ``booklet_categories`` (default stevedores, DL 2.032 art. 5 §4) need the booklet
  revalidated for the date's year once the first quarter is over; during January-March the previous
  year's revalidation still holds.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum

from portgate.records import Worker, WorkerStatus


class Ineligible(enum.StrEnum):
    """Why a worker was passed over (R2); the value names the rule."""

    CANCELLED = "G3 cancelled"
    SUSPENDED = "G3 suspended"
    HEALTH_EXAM = "G3 health exam"
    BOOKLET = "G3 booklet"
    OVERLAP = "R2 overlapping dispatch"  # 83.611 art. 22
    REST = "G7 rest"  # Lei 9.719 art. 8


@dataclasses.dataclass(frozen=True, slots=True)
class ValiditySettings:
    """G3 settings of the rotation: the health exam's validity per category (yearly for
    ``estivador``, DL 2.032 art. 28 §1; ``health_exam_months`` otherwise), booklet categories."""

    health_exam_months: int = 24
    booklet_categories: frozenset[str] = frozenset({"estivador"})
    health_exam_months_by_category: tuple[tuple[str, int], ...] = (("estivador", 12),)

    def health_months(self, category: str) -> int:
        return dict(self.health_exam_months_by_category).get(category, self.health_exam_months)


def months_before(day: dt.date, months: int) -> dt.date:
    year, month = divmod(day.year * 12 + (day.month - 1) - months, 12)
    month += 1
    # clamp the day for short months (e.g. 31 -> 28/29/30)
    for d in (day.day, 30, 29, 28):
        try:
            return dt.date(year, month, d)
        except ValueError:
            continue
    raise AssertionError("unreachable")


def registration_problems(worker: Worker, on: dt.date,
                          settings: ValiditySettings = ValiditySettings()) -> list[Ineligible]:
    """Every G3 problem of ``worker``'s registration on local date ``on`` (empty list = valid).

    Rule G3 (83.611 arts. 1, 17, 21; DL 2.032 arts. 5 §4, 28 §1; Lei 12.815 art. 33). Pure.
    """
    problems: list[Ineligible] = []
    if worker.status is WorkerStatus.CANCELLED:
        problems.append(Ineligible.CANCELLED)
    if suspended_on(worker, on):
        problems.append(Ineligible.SUSPENDED)
    if worker.health_exam_date is None or worker.health_exam_date < months_before(
            on, settings.health_months(worker.category)):
        problems.append(Ineligible.HEALTH_EXAM)
    if worker.category in settings.booklet_categories:
        needed = on.year if on.month > 3 else on.year - 1
        if worker.booklet_revalidated_year is None or worker.booklet_revalidated_year < needed:
            problems.append(Ineligible.BOOKLET)
    return problems


def suspended_on(worker: Worker, on: dt.date) -> bool:
    """True if a suspension covers ``on`` (see the module's reading of dates vs status)."""
    start, end = worker.suspended_from, worker.suspended_until
    if start is None and end is None:
        return worker.status is WorkerStatus.SUSPENDED
    return (start is None or start <= on) and (end is None or on <= end)
