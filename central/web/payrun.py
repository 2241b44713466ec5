"""The pay run as the pay page shows it: one row per worker (name, registration, total, state)
holding the worker's statements of the period, and a hold's reasons split into their codes so the
page can link each flag to the flag queue (RULES.md P: an EARLY_EXIT shift waits for review).
Read-only grouping of ``central.pay.statements_read`` views; no pay rule here."""

from __future__ import annotations

import dataclasses
import re
from decimal import Decimal

from central.pay.statements_read import StatementView

#: A worker row's state: every statement paid, some on hold, some paid and some not, none paid.
STATES = ("paid", "on_hold", "partly_paid", "unpaid")
_CODE = re.compile(r"([A-Z][A-Z0-9_]{2,40}): ")


@dataclasses.dataclass(frozen=True, slots=True)
class WorkerRun:
    """One worker's statements of the period: ``total`` of them all (BRL), ``payable`` the ids
    not paid and not on hold (what "mark paid" takes for this worker), ``payable_total`` their
    total, ``state`` one of ``STATES``."""

    registration: str
    name: str
    statements: list[StatementView]
    total: Decimal
    payable: list[str]
    payable_total: Decimal
    state: str


def group(found: list[StatementView], names: dict[str, str]) -> list[WorkerRun]:
    """``found`` (by registration, work day) as one ``WorkerRun`` per worker, by name then
    registration; ``names``: registration -> name (a worker no longer registered shows ``—``)."""
    by_reg: dict[str, list[StatementView]] = {}
    for s in found:
        by_reg.setdefault(s.registration, []).append(s)
    out = []
    for reg, sts in by_reg.items():
        payable = [s for s in sts if not s.paid_at and not s.on_hold]
        paid = [s for s in sts if s.paid_at]
        if len(paid) == len(sts):
            state = "paid"
        elif any(s.on_hold for s in sts):
            state = "on_hold"
        elif paid:
            state = "partly_paid"
        else:
            state = "unpaid"
        out.append(WorkerRun(reg, names.get(reg, "—"), sts, sum((s.total for s in sts), Decimal(0)),
                             [s.statement_id for s in payable], sum((s.total for s in payable), Decimal(0)),
                             state))
    return sorted(out, key=lambda r: (r.name.lower(), r.registration))


def hold_parts(reason: str | None) -> list[tuple[str | None, str]]:
    """A hold reason (``"EARLY_EXIT: exit 40 min before ...; OTHER: ..."``) as ``[(code, detail)]``
    in order; a part with no leading code is ``(None, text)``."""
    if not reason:
        return []
    out: list[tuple[str | None, str]] = []
    for part in reason.split("; "):
        m = _CODE.match(part)
        if m:
            out.append((m.group(1), part[m.end():]))
        elif out and out[-1][0] is not None:
            out[-1] = (out[-1][0], out[-1][1] + "; " + part)  # a detail that holds "; "
        else:
            out.append((None, part))
    return out
