"""R8 (DL 2.032 art. 6): the monthly return of hours worked per stevedore, and the semester
average per registered stevedore with its verdict (above 1,000 h: enlarge the registry until the
average is 1,000 again; otherwise: the registry is closed).

Hours are the ``minutes_worked`` of the members who boarded stevedoring gangs (rulebook
``dl-2032-1940``) stored by ``portgate production import``, plus the gang's ``anchorage_travel``
minutes (E7: travel to an anchored ship is work time, art. 16), by the gang's work date. The
semester average divides the semester's hours by the mean of the six month-end head counts of the
registry's ``estivador`` workers (RULES.md R8 as amended: not today's count;
``central.registry.headcount``: registered by the month's end, not cancelled by then, a suspended
one counts, one with no registration date on file counts from the first month the ledger holds:
the month of the first stevedoring gang stored). Reading: an average of exactly 1,000 h is not
"superior", so the registry is closed. The report gives the figure and the verdict, not a number of
places.
"""

from __future__ import annotations

import datetime as dt
from decimal import ROUND_HALF_UP, Decimal

from sqlalchemy import func, select
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from central.production.schema import production_gangs, production_inputs, production_members
from central.registry.headcount import month_end_counts
from portgate.errors import BadInput

STEVEDORING = "dl-2032-1940"
LIMIT_HOURS = Decimal(1000)
ARTICLE = "DL 2.032 art. 6"
#: interruptions whose minutes are work time for R8: E7 the travel to an anchored ship (art. 16) and,
#: E9 (art. 27), a stoppage for want of equipment paid under E8 (as ``guarantee.counts_as_work``)
WORK_TIME_KINDS = ("anchorage_travel", "no_equipment")


def _hours(minutes: Decimal) -> str:
    return str((minutes / 60).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def month_bounds(month: str) -> tuple[dt.date, dt.date]:
    """``YYYY-MM`` → (first day, first day of the next month). ``BadInput`` if malformed."""
    try:
        first = dt.date.fromisoformat(f"{month}-01")
    except ValueError as exc:
        raise BadInput(f"month {month!r} is not YYYY-MM", where="--month") from exc
    return first, (first.replace(day=28) + dt.timedelta(days=4)).replace(day=1)


def semester_bounds(semester: str) -> tuple[dt.date, dt.date]:
    """``YYYY-1`` (January-June) or ``YYYY-2`` (July-December) → (first day, day after the last)."""
    try:
        year, half = (int(p) for p in semester.split("-"))
    except ValueError as exc:
        raise BadInput(f"semester {semester!r} is not YYYY-1 or YYYY-2", where="--semester") from exc
    if half not in (1, 2) or not 2000 <= year <= 2100:
        raise BadInput(f"semester {semester!r} is not YYYY-1 or YYYY-2", where="--semester")
    return (dt.date(year, 1, 1), dt.date(year, 7, 1)) if half == 1 else (dt.date(year, 7, 1), dt.date(year + 1, 1, 1))


def _minutes_by_worker(session: Session | Connection, first: dt.date, after: dt.date,
                       registration: str | None = None, by_month: bool = False) -> dict:
    """Registration -> (minutes of R8 work time, gangs boarded) of the stevedoring gangs of work
    dates ``first`` <= date < ``after``; only ``registration``'s when given; keyed by
    (registration, ``"YYYY-MM"``) with ``by_month``."""
    g, m, i = production_gangs, production_members, production_inputs
    in_range = (g.c.rulebook == STEVEDORING, g.c.work_date >= first, g.c.work_date < after)
    mine = (m.c.registration == registration,) if registration is not None else ()
    travel: dict[int, Decimal] = {}  # E7 travel (art. 16) and E9 an E8 stoppage: work time
    for gang_row, value in session.execute(
        select(i.c.gang_row, i.c.value).join(g, g.c.id == i.c.gang_row)
        .where(*in_range, i.c.kind == "interruption", i.c.what.in_(WORK_TIME_KINDS))):
        travel[gang_row] = travel.get(gang_row, Decimal(0)) + Decimal(value)
    out: dict = {}
    for reg, gang_row, minutes, work_date in session.execute(
        select(m.c.registration, m.c.gang_row, m.c.minutes_worked, g.c.work_date).join(g, g.c.id == m.c.gang_row)
        .where(*in_range, m.c.boarded == "yes", *mine)):
        key = (reg, work_date.strftime("%Y-%m")) if by_month else reg
        total, gangs = out.get(key, (Decimal(0), 0))
        out[key] = (total + Decimal(minutes) + travel.get(gang_row, Decimal(0)), gangs + 1)
    return out


def worker_months(conn: Session | Connection, registration: str, first: dt.date, last: dt.date) -> list[dict]:
    """R8 for one stevedore (his own return, the worker's shifts page): one row per calendar month
    touching the dates ``first..last``, oldest first, each month whole (the return is monthly):
    ``{"month": "YYYY-MM", "gangs": n, "hours": "12.50"}`` — the figure ``monthly_return`` gives
    him (boarded minutes plus the E7 travel to an anchored ship and an E8 stoppage: work time),
    hours as decimal text with 2 places; 0 gangs and ``"0.00"`` for a month without work. Two
    queries whatever the range. ``BadInput`` if ``last`` is before ``first``."""
    if last < first:
        raise BadInput(f"{last} is before {first}", where="to")
    start = first.replace(day=1)
    after = month_bounds(last.strftime("%Y-%m"))[1]
    found = _minutes_by_worker(conn, start, after, registration, by_month=True)
    out = []
    day = start
    while day < after:
        key = day.strftime("%Y-%m")
        minutes, gangs = found.get((registration, key), (Decimal(0), 0))
        out.append({"month": key, "gangs": gangs, "hours": _hours(minutes)})
        day = month_bounds(key)[1]
    return out


def monthly_return(session: Session, month: str) -> dict:
    """R8: hours worked per stevedore in ``month`` (``YYYY-MM``), for the labour office (art. 6)."""
    first, after = month_bounds(month)
    found = _minutes_by_worker(session, first, after)
    rows = [{"registration": reg, "gangs": n, "hours": _hours(mins)} for reg, (mins, n) in sorted(found.items())]
    total = sum((mins for mins, _n in found.values()), Decimal(0))
    return {"rule": "R8", "article": ARTICLE, "month": month, "stevedores": rows,
            "total_hours": _hours(total)}


def semester_verdict(total_minutes: Decimal, registered: Decimal) -> dict:
    """The semester average per registered stevedore and the verdict (pure): ``registered`` is the
    mean of the month-end head counts; above 1,000 h ``enlarge`` (the registry is to be enlarged),
    otherwise ``close`` (exactly 1,000 h is not above). No number of places (RULES.md R8)."""
    hours = total_minutes / 60
    if registered <= 0:
        return {"average_hours": None, "verdict": "no stevedores registered"}
    average = hours / registered
    return {"average_hours": _hours(average * 60), "verdict": "enlarge" if average > LIMIT_HOURS else "close"}


def ledger_start(session: Session) -> dt.date | None:
    """First day of the first month the ledger holds a stevedoring gang (R8: where a stevedore with
    no registration date on file starts counting), or None if it holds none."""
    first = session.execute(select(func.min(production_gangs.c.work_date))
                            .where(production_gangs.c.rulebook == STEVEDORING)).scalar()
    return None if first is None else first.replace(day=1)


def semester_return(session: Session, semester: str) -> dict:
    """R8: the semester's hours, the mean of its month-end head counts of registered stevedores,
    the average per registered stevedore and the verdict (art. 6 sole paragraph); each month's
    hours and month-end head count beside it. ``registered``: the mean (2 decimals)."""
    first, after = semester_bounds(semester)
    found = _minutes_by_worker(session, first, after)
    total = sum((mins for mins, _n in found.values()), Decimal(0))
    months = []
    day = first
    while day < after:
        key = day.strftime("%Y-%m")
        nxt = month_bounds(key)[1]
        months.append({"month": key, "total_hours": _hours(sum(
            (mins for mins, _n in _minutes_by_worker(session, day, nxt).values()), Decimal(0))),
            "month_end": (nxt - dt.timedelta(days=1)).isoformat()})
        day = nxt
    counts = month_end_counts(session, "estivador", [dt.date.fromisoformat(m["month_end"]) for m in months],
                              ledger_start(session))
    for m, n in zip(months, counts):
        m["registered"] = n
    mean = Decimal(sum(counts)) / len(counts)
    return {"rule": "R8", "article": f"{ARTICLE} parágrafo único", "semester": semester,
            "from": first.isoformat(), "to": (after - dt.timedelta(days=1)).isoformat(),
            "total_hours": _hours(total), "registered": str(mean.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)),
            "limit_hours": str(LIMIT_HOURS), "months": months} | semester_verdict(total, mean)
