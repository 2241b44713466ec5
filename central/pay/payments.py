"""Payment records kept beside the statements, so that a payment the statements no longer show is
seen (Lei 9.719 art. 2 §1: a service is paid once; a paid mark lost would let it be paid again).

Every ``mark_paid`` (CLI and web) appends, in its own transaction, one ``audit_log`` row
``pay.mark_paid`` (``record_payment``): ``detail = {"statements": [id...], "detail": ref, "paid":
[[statement_id, shift_id, total_cents], ...]}``. ``lost_payments`` reads those rows back and names
the shifts of a period with a statement the log says was paid that is no longer stored (deleted) or
no longer marked paid (``paid_at`` cleared): ``central.pay.versions_save.save_statements`` then stores
the shift's statement on hold for review (``LOST_HOLD``) until the office releases it after checking
the bank. Payment marks stay outside the statements' digest; the log is the second record.

A mistaken mark is undone only by ``statements_store.reverse_paid`` (CLI ``portgate pay
reverse-paid``, the pay page's reversal), which appends a ``pay.reverse_paid`` row naming the marks
it reverses and why: a payment mark the log shows reversed is not a lost payment.

Both rows store the port of the statements they name (``audit_log.port``, issue 37 item 4;
``statements_port``): a statement's port is its worker's (``workers.port``, as on the pay page; a
registration the registry does not hold is the home port's, NULL), so a port's clerk finds his own
marks on the audit log page; a mark naming statements of several ports is ``*`` (every port's).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from sqlalchemy import insert, select
from sqlalchemy.engine import Connection

from central.audit import ALL
from central.ledger.tables import shifts, statements
from central.registry.schema import audit_log, workers

#: The audit action of a payment mark.
PAID_ACTION = "pay.mark_paid"
#: The audit action of a payment mark reversed (a mistaken mark-paid, ``statements_store.reverse_paid``).
REVERSED_ACTION = "pay.reverse_paid"
#: Hold reason of a statement whose shift has a payment the statements no longer show.
LOST_HOLD = "PAYMENT_RECORD_LOST"
#: Ids per query (one bound parameter each).
CHUNK = 900


def statements_port(conn: Connection, ids: Iterable[str]) -> str | None:
    """The ``audit_log.port`` of an entry about statements ``ids``: their workers' one port
    (``workers.port``; None, the home port, for a worker without one or a registration the registry
    does not hold, as the pay page reads it), or ``ALL`` when they are of several ports (or none)."""
    found: set[str | None] = set()
    ids = list(ids)
    for part in _chunks(ids):
        found.update(conn.execute(
            select(workers.c.port).select_from(statements.outerjoin(
                workers, workers.c.registration == statements.c.registration))
            .where(statements.c.statement_id.in_(part)).distinct()).scalars())
    return found.pop() if len(found) == 1 else ALL


def record_payment(conn: Connection, *, actor: str, ids: list[str], rows: dict, ref: str | None,
                   at: dt.datetime) -> None:
    """Append the ``pay.mark_paid`` audit row of statements ``ids`` (``rows``: ``{id: mapping
    with shift_id and total_cents}``) paid at ``at`` with reference ``ref``."""
    conn.execute(insert(audit_log).values(
        at=at, actor=actor, action=PAID_ACTION, subject=f"{len(ids)} statement(s)",
        port=statements_port(conn, ids),
        detail={"statements": list(ids), "detail": ref,
                "paid": [[i, rows[i]["shift_id"], rows[i]["total_cents"]] for i in ids]}))


def _shift_of(statement_id: str) -> str | None:
    """The shift id in a ledger-made statement id (``<shift_id>@<rulebook>[#v<n>]``)."""
    return statement_id.rsplit("@", 1)[0] if "@" in statement_id else None


def record_reversal(conn: Connection, *, actor: str, rows: dict, reason: str, at: dt.datetime) -> None:
    """Append the ``pay.reverse_paid`` audit row of the statements ``rows`` (``{id: mapping with
    shift_id, total_cents, paid_at, paid_ref}``: the marks being reversed) with ``reason``."""
    conn.execute(insert(audit_log).values(
        at=at, actor=actor, action=REVERSED_ACTION, subject=f"{len(rows)} statement(s)",
        port=statements_port(conn, rows),
        detail={"statements": list(rows), "detail": reason,
                "reversed": [[i, r["shift_id"], r["total_cents"],
                              r["paid_at"].isoformat() if r["paid_at"] else None, r["paid_ref"]]
                             for i, r in rows.items()]}))


def _paid_records(conn: Connection) -> dict[str, tuple[str | None, str, str, str | None]]:
    """``{statement_id: (shift_id, at ISO, actor, ref)}`` of every payment the audit log records
    (the first mark of each id since its last audited reversal: a reversed mark is no payment)."""
    out: dict[str, tuple[str | None, str, str, str | None]] = {}
    for at, actor, action, detail in conn.execute(
            select(audit_log.c.at, audit_log.c.actor, audit_log.c.action, audit_log.c.detail)
            .where(audit_log.c.action.in_((PAID_ACTION, REVERSED_ACTION))).order_by(audit_log.c.id)):
        if not isinstance(detail, dict):
            continue
        if action == REVERSED_ACTION:
            for sid in detail.get("statements") or ():
                out.pop(str(sid), None)
            continue
        ref = detail.get("detail")
        shift_of = {str(p[0]): str(p[1]) for p in detail.get("paid") or () if len(p) >= 2}
        for sid in detail.get("statements") or ():
            sid = str(sid)
            if sid not in out:
                out[sid] = (shift_of.get(sid) or _shift_of(sid), at.isoformat() if at else "?",
                            actor, ref if isinstance(ref, str) else None)
    return out


def _chunks(items: list, size: int = CHUNK) -> Iterable[list]:
    for n in range(0, len(items), size):
        yield items[n:n + size]


def lost_payments(conn: Connection, date_from: dt.date, date_to: dt.date) -> dict[str, tuple[str, str]]:
    """``{shift_id: (registration, hold reason)}``: the stored shifts of work dates [date_from,
    date_to] with a statement the audit log records as paid that is not stored any more or not
    marked paid. Raises ``SQLAlchemyError`` (the caller's)."""
    records = _paid_records(conn)
    if not records:
        return {}
    ids = list(records)
    state: dict[str, bool] = {}
    for part in _chunks(ids):
        for sid, paid_at in conn.execute(select(statements.c.statement_id, statements.c.paid_at)
                                         .where(statements.c.statement_id.in_(part))):
            state[sid] = paid_at is not None
    lost: dict[str, list[str]] = {}
    for sid, (shift_id, at, actor, ref) in records.items():
        if shift_id is None or state.get(sid) is True:
            continue
        # one wording whether deleted or un-marked: the statement it comes back as is not paid
        # either, and the hold must read the same at the next close
        lost.setdefault(shift_id, []).append(f"{sid} (paid {at}, {ref or 'no ref'}, by {actor}) is not "
                                             "marked paid in the statements (deleted or un-marked)")
    if not lost:
        return {}
    out: dict[str, tuple[str, str]] = {}
    for part in _chunks(sorted(lost)):
        for shift_id, reg in conn.execute(select(shifts.c.shift_id, shifts.c.registration).where(
                shifts.c.shift_id.in_(part), shifts.c.work_date >= date_from,
                shifts.c.work_date <= date_to)):
            out[shift_id] = (reg, lost_reason(lost[shift_id]))
    return out


def lost_reason(found: list[str]) -> str:
    """The hold reason naming the payment records the statements lost."""
    return (f"{LOST_HOLD}: the audit log records a payment the statements no longer show: "
            f"{'; '.join(found)} (altered outside the ledger); check the bank before paying this "
            "shift again (Lei 9.719 art. 2 §1) / pagamento registrado e perdido: conferir antes de pagar")
