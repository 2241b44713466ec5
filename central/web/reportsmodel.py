"""The monthly reports' figures, read from the central services over the 12 months ending with a
month: R6 sizing (``central.reports.sizing``: 25 shifts per worker a month, 83.611 art. 13), R8
stevedores' hours (``central.production.hours.monthly_return``: 1,000 h a semester, DL 2.032
art. 6), rotation fairness of the month (``central.rotation.service.month_fairness``), coverage
gaps per ship (G11 office alarms) and flags per week (the flagged gate events). Read-only.

On an office of several ports (``central.web.ports``) every figure is counted for the ports given:
coverage by its alarm's gate's port, flags by their event's port, sizing (R6) and fairness by the
escala rows of the ports' gates and the workers registered there (``workers.port``), hours (R8) by
the stevedores registered there (their hours and month-end head counts); consolidated is every port's."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from decimal import Decimal
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.orm import Session

from central import reports
from central.cli_args import FIRST_DAY, LAST_DAY
from central.calls.schema import coverage_alarms
from central.production.hours import LIMIT_HOURS, ledger_start, monthly_return
from central.registry.headcount import month_end_counts
from central.registry.schema import workers
from central.rotation.ports import RotationPorts, workers_in
from central.rotation.service import month_fairness
from central.web.flagsmodel import Filters, flag_rows
from central.web.ports import keeper
from portgate.errors import BadInput
from portgate.timeutil import as_utc


def months_ending(month: str) -> list[dt.date]:
    """The first days of the 12 months ending with ``month`` (``YYYY-MM``), oldest first.
    ``BadInput`` for a malformed month, or one outside the office's work days
    (``central.cli_args.FIRST_DAY..LAST_DAY``: 2000-01..2100-12)."""
    try:
        last = dt.date.fromisoformat(f"{month}-01")
    except ValueError as exc:
        raise BadInput(f"month {month!r} is not YYYY-MM", where="month") from exc
    if not FIRST_DAY.replace(day=1) <= last <= LAST_DAY:
        raise BadInput(f"month {month!r} is outside {FIRST_DAY:%Y-%m}..{LAST_DAY:%Y-%m}", where="month")
    out = []
    for back in range(11, -1, -1):
        y, m = divmod(last.year * 12 + last.month - 1 - back, 12)
        out.append(dt.date(y, m + 1, 1))
    return out


def next_month(first: dt.date) -> dt.date:
    return (first.replace(day=28) + dt.timedelta(days=4)).replace(day=1)


def sizing_series(session: Session, months: list[dt.date], category: str = "vigia",
                  ports: RotationPorts | None = None) -> list[dict]:
    """R6 per month: the trailing 12 months' average shifts per registered worker as of the month's
    end, and the head count that would give 25 each (of ``ports``' view: ``reports.sizing``)."""
    return [reports.sizing(session, next_month(m), category, ports=ports) | {"month": m.strftime("%Y-%m")} for m in months]


def hours_series(session: Session, months: list[dt.date], ports: RotationPorts | None = None) -> list[dict]:
    """R8 per month: stevedores' hours in the month, per stevedore registered at the month's end
    (``central.registry.headcount``, as the semester verdict counts them: not today's count), and
    the month's share of the 1,000 h a semester; with ``ports`` (a view) the hours and head counts
    of the stevedores registered at its ports (``workers.port``)."""
    ends = [next_month(m) - dt.timedelta(days=1) for m in months]
    narrowed = ports is not None and ports.narrowed is not None
    counts = month_end_counts(session, "estivador", ends, ledger_start(session),
                              where=workers_in(ports) if narrowed else None)
    mine = set(session.execute(select(workers.c.registration).where(workers_in(ports))).scalars()) if narrowed else None
    out = []
    for m, registered in zip(months, counts):
        found = monthly_return(session, m.strftime("%Y-%m"))
        total = Decimal(found["total_hours"]) if mine is None else sum(
            (Decimal(r["hours"]) for r in found["stevedores"] if r["registration"] in mine), Decimal(0))
        out.append({"month": m.strftime("%Y-%m"), "total_hours": float(total), "registered": registered,
                    "average_hours": round(float(total) / registered, 1) if registered else None,
                    "limit_month_hours": round(float(LIMIT_HOURS) / 6, 1)})
    return out


def fairness_of(session: Session, month: dt.date, category: str = "vigia",
                ports: RotationPorts | None = None) -> dict:
    """Rotation fairness of ``month`` (``month_fairness``), of ``ports``' view when given."""
    f = month_fairness(session, month.year, month.month, category, ports=ports)
    return {"shifts": dict(sorted(f.shifts.items())), "average": round(f.average, 2), "spread": f.spread,
            "fairest_spread": f.fairest_spread, "target": f.target}


def coverage_by_ship(session: Session, first: dt.date, after: dt.date, tz: ZoneInfo,
                     ports: tuple[str, ...] | None = None, *, served: tuple[str, ...],
                     registered: dict[str, str] | None = None) -> list[tuple[str, int, float]]:
    """Per ship: coverage alarms raised (G11) and their hours without a gangway watchman; with
    ``ports``, only the alarms of those ports' gates (``central.web.ports.keeper`` over ``served``,
    the office's ports, and ``registered``, gate id -> port of the registered gates)."""
    lo = dt.datetime.combine(first, dt.time(), tz).astimezone(dt.UTC)
    hi = dt.datetime.combine(after, dt.time(), tz).astimezone(dt.UTC)
    q = (select(coverage_alarms.c.ship, coverage_alarms.c.period_start, coverage_alarms.c.ended_at,
                coverage_alarms.c.gate_id)
         .where(coverage_alarms.c.period_start >= lo, coverage_alarms.c.period_start < hi))
    keep = keeper(session.connection(), ports, served, registered)
    rows = [r[:3] for r in session.execute(q) if keep is None or keep(r[3])]
    count: Counter = Counter()
    hours: Counter = Counter()
    for ship, start, end in rows:
        count[ship] += 1
        if end is not None:
            hours[ship] += max((as_utc(end) - as_utc(start)).total_seconds(), 0) / 3600
    return [(ship, count[ship], round(hours[ship], 1)) for ship in sorted(count)]


def flags_per_week(session: Session, first: dt.date, after: dt.date, tz: ZoneInfo,
                   ports: tuple[str, ...] | None = None) -> list[tuple[str, dict[str, int]]]:
    """Flagged gate events per ISO week (``2026-W11``) and flag, oldest week first; with ``ports``,
    only those ports' events."""
    rows = flag_rows(session.connection(), Filters(ports=ports), tz, limit=1_000_000)
    weeks: dict[str, Counter] = {}
    for r in rows:
        local = r.occurred_at.astimezone(tz).date()
        if not first <= local < after:
            continue
        y, w, _ = local.isocalendar()
        c = weeks.setdefault(f"{y}-W{w:02d}", Counter())
        for flag in r.flags:
            c[flag] += 1
    return [(k, dict(sorted(v.items()))) for k, v in sorted(weeks.items())]
