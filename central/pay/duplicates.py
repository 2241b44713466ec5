"""One current statement per shift (docs/pay.md "Statement versions"): a second current statement
of a shift (a row copied or inserted outside the ledger) is superseded when the shift is stored
again, so it is never listed overdue or paid twice (Lei 9.719 art. 2 §1: one payment per service).

``pick_current(past, st, digest)`` chooses, among the current rows of a shift's history, the one
that stays (the others are the intruders); ``supersede_duplicates`` marks the intruders superseded
by the statement current after the run, with a reason naming the one kept. Migration
``0016_one_current_statement`` does the same once for a whole ledger and adds the partial unique
index that refuses a second current statement from then on.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import update
from sqlalchemy.engine import Connection

from central.ledger.tables import statements


def canonical_id(row: dict) -> str:
    """The id the ledger gives a version: ``<shift_id>@<rulebook>``, ``...#v<n>`` after version 1."""
    base = f"{row['shift_id']}@{row['rulebook']}"
    return base if row["version"] == 1 else f"{base}#v{row['version']}"


def rank(row: dict) -> tuple:
    """Sort key of the current rows of one shift, best first: an id the ledger would have given
    it, then the highest version, then the smallest id (deterministic)."""
    return (row["statement_id"] != canonical_id(row), -row["version"], row["statement_id"])


def pick_current(past: list[dict], digest: str | None = None) -> tuple[dict | None, list[dict]]:
    """``(current, extra)`` of one shift's stored versions (dicts with ``statement_id``,
    ``shift_id``, ``rulebook``, ``version``, ``digest``, ``superseded_at``): the current row that
    stays (``None``: there is none) and the other current rows. Among rows with the ledger's own
    ids, one whose ``digest`` is ``digest`` (the newly computed statement's) is kept first."""
    currents = sorted((r for r in past if r["superseded_at"] is None), key=rank)
    if len(currents) < 2:
        return (currents[0] if currents else None), []
    own = [r for r in currents if r["statement_id"] == canonical_id(r)]
    same = [r for r in own if r["digest"] == digest] if digest is not None else []
    keep = (same or currents)[0]
    return keep, [r for r in currents if r is not keep]


def duplicate_reason(row: dict, kept: str) -> str:
    """The ``superseded_reason`` of an extra current statement."""
    paid = (f"; its payment ({row['paid_ref'] or 'no ref'}) stays on record"
            if row.get("paid_at") is not None else "")
    return (f"second current statement of shift {row['shift_id']} (stored outside the ledger): "
            f"one current statement per shift, {kept} is current{paid}")


def supersede_duplicates(conn: Connection, intruders: list[tuple[dict, str]],
                         kept_ids: dict[str, str], now: dt.datetime) -> None:
    """Mark each ``(row, shift_id)`` of ``intruders`` superseded at ``now`` by ``kept_ids[shift_id]``
    (the statement current after the run). Raises ``SQLAlchemyError`` (the caller's transaction)."""
    for row, shift_id in intruders:
        kept = kept_ids[shift_id]
        conn.execute(update(statements).where(statements.c.statement_id == row["statement_id"])
                     .values(superseded_at=now, superseded_by=kept,
                             superseded_reason=duplicate_reason(row, kept)))
