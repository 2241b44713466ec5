"""The port of an audit-log entry (issue 37 item 4; ``audit_log.port``, migration 0031).

An entry takes the port of the object it names, looked up when it is written (``resolve``): a
worker's entries (``worker.*``, ``worker_account.*``, ``worker_request.*``, ``enrol.*``: the subject
is a registration) his ``workers.port``; a card's (``card.*``, the subject a UID) its holder's; a
case's (``case.*``) ``cases.port``; a flag review's (``flag.*``, the subject an event id) the event's
port. As ``workers.port``, a stored NULL is the office's home port. Anything else (an office user's
account, a day's dispatch), or an object the office does not hold,
is ``ALL``: shown only to a user who sees every port. The gate's port of an alarm, a ship call or a
shift is given by their writers (``central.ledger.object_ports``), a pay mark's (its statements'
workers') by ``central.pay.payments.statements_port``.

A worker's port may be set in the same transaction that wrote his entries (an addition, an import:
``central.registry.worker_ports.set_port`` runs after them): ``remember`` keeps, per transaction,
the entries whose port came from a worker, and ``follow`` moves them to the worker's new port, so
an entry carries the port its worker has when the command commits.
"""

from __future__ import annotations

from sqlalchemy import select, update
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from central.audit import ALL, audit_log
from central.ledger.object_ports import event_port
from central.registry.schema import cards, cases, workers

WORKER_ACTIONS = ("worker.", "worker_account.", "worker_request.", "enrol.")
_KEY = "portgate.audit_ports"  # session.info: (transaction, {registration: [audit id]})


def resolve(conn: Connection | Session, action: str, subject: str) -> tuple[str | None, str | None]:
    """``(port, registration)`` of an entry ``action`` about ``subject``: its port (a port id, None
    the home port, ``ALL``) and the registration of the worker it follows (None when not a worker's)."""
    if action.startswith(WORKER_ACTIONS):
        row = conn.execute(select(workers.c.port).where(workers.c.registration == subject)).first()
        return (ALL, None) if row is None else (row.port, subject)
    if action.startswith("card."):
        row = conn.execute(select(cards.c.registration, workers.c.port)
                           .join(workers, workers.c.registration == cards.c.registration, isouter=True)
                           .where(cards.c.uid == subject)).first()
        return (ALL, None) if row is None or row.registration is None else (row.port, row.registration)
    if action.startswith("case.") and subject.isdigit() and len(subject) < 19:
        row = conn.execute(select(cases.c.port).where(cases.c.id == int(subject))).first()
        return (ALL, None) if row is None else (row.port, None)
    if action.startswith("flag."):
        return (event_port(conn, subject) or ALL, None)
    return ALL, None


def _written(conn: Connection | Session) -> dict[str, list[int]]:
    """This transaction's entries that follow a worker's port: registration -> audit ids (by
    registration, so ``follow`` is one look-up, not a scan of every entry of a large import)."""
    tx = conn.get_transaction()
    kept = conn.info.get(_KEY)
    if kept is None or kept[0] is not tx:
        kept = (tx, {})
        conn.info[_KEY] = kept
    return kept[1]


def remember(conn: Connection | Session, audit_id: int, registration: str | None) -> None:
    """Keep, for this transaction, that entry ``audit_id`` follows ``registration``'s port."""
    if registration is not None:
        _written(conn).setdefault(registration, []).append(audit_id)


def follow(conn: Connection | Session, registration: str, port: str | None) -> None:
    """Give the entries of this transaction that follow ``registration`` his new ``port``."""
    ids = _written(conn).get(registration, [])
    if ids:
        conn.execute(update(audit_log).where(audit_log.c.id.in_(ids)).values(port=port))
