"""Month-end head counts of a category of the registry (R8, DL 2.032 art. 6; RULES.md R8 as amended).

A worker is registered at a month's end when he was registered on or before that day and not
cancelled by then:

- registered: his admission record's ``registered_on`` (``central.registry.admission_store``); a
  worker with no admission record (no registration date on file) counts from the first month the
  ledger holds (``ledger_start``, given by the caller: for R8 the month of the first stevedoring
  gang stored);
- cancelled: ``workers.cancelled_on`` on or before the month's end; a worker whose status is
  ``cancelled`` with no date on file is counted in no month (when he left is not known);
- a suspended worker is still registered (R8 reading) and counts.

The category is the worker's current one (the registry keeps no category history).

    registered_at(end, registered_on, cancelled_on, status, ledger_start) -> bool   (pure)
    month_end_counts(session, category, month_ends, ledger_start) -> [int, ...]
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from central.registry.admission_store import admissions
from central.registry.schema import workers


def registered_at(end: dt.date, registered_on: dt.date | None, cancelled_on: dt.date | None,
                  status: str, ledger_start: dt.date | None) -> bool:
    """True when a worker counts as registered on ``end`` (a month's last day; see the module
    doc). ``ledger_start``: first day of the first month the ledger holds, or None (an empty
    ledger: a worker with no registration date then counts in no month). Pure."""
    since = registered_on if registered_on is not None else ledger_start
    if since is None or since > end:
        return False
    if cancelled_on is not None:
        return end < cancelled_on
    return status != "cancelled"


def month_end_counts(session: Session, category: str, month_ends: Sequence[dt.date],
                     ledger_start: dt.date | None, where=None) -> list[int]:
    """How many workers of ``category`` were registered at each day of ``month_ends``
    (``registered_at``), in the order given; ``where``: an SQL condition on ``workers`` they must
    meet too (a view's ports, ``central.registry.worker_ports.in_ports``), None: none."""
    rows = session.execute(
        select(admissions.c.registered_on, workers.c.cancelled_on, workers.c.status)
        .select_from(workers.outerjoin(admissions, admissions.c.registration == workers.c.registration))
        .where(workers.c.category == category, *(() if where is None else (where,)))).all()
    return [sum(1 for on, cancelled, status in rows if registered_at(end, on, cancelled, status, ledger_start))
            for end in month_ends]
