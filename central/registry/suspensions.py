"""A worker's suspensions read from every record, not from the worker row alone (RULES.md R2, R4, G3).

The registration record (``penalties``, kind ``suspension``) keeps every suspension ever given; the
worker row keeps one period (``suspended_from``..``suspended_until``), the one the roster carries to
the gates. Readings (docs/office.md "suspend"):

- the same period given again (same first and last day) is refused, naming the one on the record;
- a period overlapping or adjoining the row's extends it: the row holds their union (the earliest
  first day, the latest last day), so a later suspension never shortens an earlier one;
- a period apart from the row's replaces it only once the row's has ended (its last day before the
  UTC date of ``now``); while it runs or is still ahead it is refused: the row, and so the gates,
  hold one period per worker;
- the dispatch (``central.rotation.service``) reads every record: a worker is suspended on a date
  inside any recorded suspension, whatever the row holds (``with_recorded_suspension``).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterable

from sqlalchemy import select
from sqlalchemy.orm import Session

from central.registry.schema import penalties
from portgate.errors import BadInput
from portgate.records import Worker

ONE_DAY = dt.timedelta(days=1)


def _same_period(session: Session, registration: str, start: dt.date, until: dt.date) -> int | None:
    """The id of a suspension of ``registration`` on the record with exactly ``start``..``until``."""
    return session.execute(select(penalties.c.id).where(
        penalties.c.registration == registration, penalties.c.kind == "suspension",
        penalties.c.starts_on == start, penalties.c.ends_on == until).limit(1)).scalar()


def _apart(worker: Worker, start: dt.date, until: dt.date) -> bool:
    """True if ``start``..``until`` neither overlaps nor adjoins the row's period (a missing bound
    is open)."""
    old_from, old_until = worker.suspended_from, worker.suspended_until
    before = old_until is not None and old_until + ONE_DAY < start
    after = old_from is not None and until + ONE_DAY < old_from
    return before or after


def period_for_row(session: Session, worker: Worker, start: dt.date, until: dt.date,
                   today: dt.date) -> tuple[dt.date | None, dt.date | None]:
    """The worker row's suspension period once ``start``..``until`` is given (module readings).
    ``BadInput`` (``where="--from"``) if the same period is on the record, or if the new one lies
    apart from a row period that has not ended by ``today``."""
    reg = worker.registration
    same = _same_period(session, reg, start, until)
    if same is not None:
        raise BadInput(f"registration {reg} already has the suspension {start}..{until} on its record "
                       f"(penalty {same}): nothing written", where="--from")
    old_from, old_until = worker.suspended_from, worker.suspended_until
    if old_from is None and old_until is None:
        return start, until
    if _apart(worker, start, until):
        if old_until is not None and old_until < today:
            return start, until
        raise BadInput(f"registration {reg} is suspended {old_from or '?'}..{old_until or '?'}: a separate "
                       f"suspension {start}..{until} is given once that one has ended", where="--from")
    first = None if old_from is None else min(old_from, start)
    last = None if old_until is None else max(old_until, until)
    return first, last


def recorded_periods(session: Session, on: dt.date) -> dict[str, tuple[dt.date | None, dt.date | None]]:
    """registration -> a recorded suspension covering ``on`` (bounds inclusive, a missing bound open)."""
    rows = session.execute(select(penalties.c.registration, penalties.c.starts_on, penalties.c.ends_on)
                           .where(penalties.c.kind == "suspension",
                                  (penalties.c.starts_on.is_(None)) | (penalties.c.starts_on <= on),
                                  (penalties.c.ends_on.is_(None)) | (penalties.c.ends_on >= on)))
    return {reg: (start, end) for reg, start, end in rows}


def with_recorded_suspension(session: Session, pool: Iterable[Worker], on: dt.date) -> list[Worker]:
    """``pool`` with each worker suspended on ``on`` by a record (not only by the row) carrying that
    record's period, so ``registration_problems`` (G3/R2) finds them suspended on ``on``."""
    covering = recorded_periods(session, on)
    out = []
    for w in pool:
        period = covering.get(w.registration)
        if period is not None:
            w = dataclasses.replace(w, suspended_from=period[0], suspended_until=period[1])
        out.append(w)
    return out
