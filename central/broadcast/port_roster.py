"""One roster per served port (issue 37 item 4; Lei 12.815 arts. 32-33: each OGMO's registry is its
own, so a gate of one port must not admit a worker registered at another: RULES.md G1).

An office serving several ports (``central.toml`` ``ports``) publishes to each port's gates
(``portgate/v1/{port}/down/roster/...``) only the workers whose ``workers.port`` is that port (NULL:
the home port, the first of ``CentralConfig.served_ports``) and their cards; a card whose holder is
no registered worker (an inspector's card) goes to every port, as before. Each port has its own
version chain, made of the ``downlink_changes`` rows that concern it (``downlink_changes.port``,
0033: the worker's, or a card's holder's, port when the row was made; NULL: the home port; ``*``
a card whose holder is no registered worker, every port's):

- version of port P = ``PORT_BASE + id`` of the newest ``roster``/``cards`` row of P. It only grows
  (a row's port never changes) and is above every single-chain version (``REGISTRY_BASE + id``), so
  a gate that held the all-ports roster of before takes its port's snapshot;
- a delta of P carries P's rows only (``from_version`` = the last version published to P);
- a worker moved from P to Q (``central.registry.worker_ports.set_port``) is a roster ``delete`` row
  of P (P's gates get a fresh snapshot without him: a roster delta has no removal, and a snapshot
  replaces the gate's whole roster) and ``upsert`` rows of Q (his record and cards).

A single-port office keeps the one chain of before (``central.broadcast.registry_source``).
"""

from __future__ import annotations

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from central.registry.api import Change
from central.registry.changes import EVERY_PORT
from central.registry.schema import cards, downlink_changes, workers
from central.registry.store import card_from_row, worker_from_row
from portgate.records import Card, Worker
from portgate.timeutil import as_utc

REGISTRY_BASE = 10**15  # the single chain's base (``registry_source.REGISTRY_BASE``)
PORT_BASE = 2 * REGISTRY_BASE  # per-port versions: above every single-chain version


def _of_port(column, port: str, home: str):
    """SQL: the port ``column`` (NULL: the home port ``home``; ``EVERY_PORT``: every port) is ``port``."""
    if port == home:
        return or_(column == port, column == EVERY_PORT, column.is_(None))
    return column.in_((port, EVERY_PORT))


def newest(session: Session, upto: int, port: str, home: str) -> int:
    """The id (<= ``upto``) of the newest roster-or-cards change row of ``port`` (0 when none)."""
    value = session.execute(select(func.max(downlink_changes.c.id)).where(
        downlink_changes.c.kind.in_(("roster", "cards")), downlink_changes.c.id <= upto,
        _of_port(downlink_changes.c.port, port, home))).scalar()
    return int(value or 0)


def snapshot(session: Session, port: str, home: str) -> tuple[list[Worker], list[Card]]:
    """``(workers, cards)`` of ``port``'s roster: its workers, their cards, and the cards whose
    holder is no registered worker (every port's, as before). Read in the caller's transaction."""
    ws = [worker_from_row(r) for r in session.execute(
        select(workers).where(_of_port(workers.c.port, port, home)).order_by(workers.c.registration))]
    ours = {w.registration for w in ws}
    registered = select(workers.c.registration)
    cs = [card_from_row(r) for r in session.execute(select(cards).order_by(cards.c.uid))
          if r.registration in ours]
    cs += [card_from_row(r) for r in session.execute(
        select(cards).where(cards.c.registration.not_in(registered)).order_by(cards.c.uid))]
    return ws, sorted(cs, key=lambda c: c.uid)


def changes(session: Session, after: int, upto: int, port: str, home: str) -> list[Change]:
    """The roster and cards change rows of ``port`` with ``after < id <= upto``, oldest first."""
    rows = session.execute(select(downlink_changes).where(
        downlink_changes.c.kind.in_(("roster", "cards")), downlink_changes.c.id > after,
        downlink_changes.c.id <= upto, _of_port(downlink_changes.c.port, port, home))
        .order_by(downlink_changes.c.id))
    return [Change(r.id, r.kind, r.op, r.key, r.body, as_utc(r.created_at), r.actor) for r in rows]
