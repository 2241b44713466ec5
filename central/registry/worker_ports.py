"""The registry's port (issue 37 item 4, many ports on one ledger; migration 0029).

A worker is registered at one port's OGMO (Lei 12.815 art. 32-33): ``workers.port``, his home port;
his cards follow him (a card's port is its holder's). A case's port is the port of the flagged event's
gate (``cases.port``, written when it is opened). NULL in either column is the office's home port
(``port`` of central.toml, the first of ``CentralConfig.served_ports``): every row made before 0029,
and a worker imported without a port. The port is not in ``portgate.records.Worker`` (a gate never
sees it), but it chooses which port's gates get his record: each change row carries it
(``downlink_changes.port``, 0031) and a move writes the rows that take him from one port's roster to
the other's (``central.broadcast.port_roster``).

``in_ports`` is the SQL test "of these ports" every per-port page applies; ``csv_ports`` /
``csv_problems`` read and check a workers.csv's optional ``port`` column; ``set_port`` writes a
worker's port with an audit row (``worker.port``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from pathlib import Path

from sqlalchemy import and_, or_, select, true, update
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from central.registry import audit_ports
from central.registry.changes import audit, body, record_change
from central.registry.schema import cards, workers
from portgate import tables
from portgate.errors import BadInput
from wire.topics import check_id


def in_ports(column, ports: Sequence[str] | None, served: Sequence[str]):
    """The SQL condition "``column`` (a port column where NULL is the home port) is one of
    ``ports``", for a view of ``ports`` (``request.state.ports``: None on a single-port office) on an
    office serving ``served`` (home port first). ``true()`` when ``ports`` is None or covers every
    served port (an all-ports view filters nothing: a row of a port no longer served stays seen)."""
    if ports is None or set(ports) >= set(served):
        return true()
    wanted = list(dict.fromkeys(ports))
    if served and served[0] in wanted:
        return or_(column.in_(wanted), column.is_(None))
    return and_(column.is_not(None), column.in_(wanted))


def port_of(stored: str | None, served: Sequence[str]) -> str | None:
    """A row's port: its stored ``port``, else the home port ``served[0]`` (None if none served)."""
    return stored or (served[0] if served else None)


def worker_port(conn: Connection | Session, registration: str) -> tuple[bool, str | None]:
    """``(registered, stored port)`` of ``registration`` (the stored port None: the home port)."""
    row = conn.execute(select(workers.c.port).where(workers.c.registration == registration)).first()
    return (False, None) if row is None else (True, row.port)


def worker_in(conn: Connection | Session, registration: str, ports: Sequence[str] | None,
              served: Sequence[str]) -> bool:
    """True when ``registration`` is registered at one of ``ports`` (``in_ports``); False for a
    worker of another port and for no worker at all (the caller answers both alike: 404)."""
    if len(registration) > 64 or "\x00" in registration:
        return False
    return conn.execute(select(workers.c.registration).where(
        workers.c.registration == registration, in_ports(workers.c.port, ports, served))).first() is not None


def card_holder_in(conn: Connection | Session, uid: str, ports: Sequence[str] | None,
                   served: Sequence[str]) -> bool:
    """True when card ``uid``'s holder is a worker of ``ports`` (a card follows its worker)."""
    holder = conn.execute(select(cards.c.registration).where(cards.c.uid == uid)).scalar()
    return holder is not None and worker_in(conn, holder, ports, served)


def check_port(port: str, served: Sequence[str], where: str = "port") -> str:
    """``port`` if it is a topic id (``wire.topics.check_id``) and, when ``served`` is given, one of
    the served ports; ``BadInput`` naming ``where`` otherwise."""
    check_id(port, where)
    if served and port not in served:
        raise BadInput(f"port {port!r} is not one of {', '.join(served)}", where=where)
    return port


def csv_ports(path: str | Path) -> dict[str, str]:
    """``{registration: port}`` of the rows of a workers.csv that give a ``port`` (an empty cell or
    no column: not listed)."""
    out: dict[str, str] = {}
    for _where, row in tables.read_rows(path):
        port = (row.get("port") or "").strip()
        if port:
            out[(row.get("registration") or "").strip()] = port
    return out


def csv_problems(path: str | Path, allowed: Sequence[str]) -> list[str]:
    """``file:line: ...`` for each ``port`` cell of a workers.csv that is not a topic id or, when
    ``allowed`` is given, not one of ``allowed`` (the served ports, or a web user's ports)."""
    errors = []
    for where, row in tables.read_rows(path):
        port = (row.get("port") or "").strip()
        if not port:
            continue
        try:
            check_id(port, "port")
            if allowed and port not in allowed:
                raise BadInput(f"port {port!r} is not one of {', '.join(allowed)}", where="port")
        except BadInput as exc:
            errors.append(f"{where}: {exc.reason}")
    return errors


def stored_ports(conn: Connection | Session, registrations: Iterable[str]) -> dict[str, str | None]:
    """``{registration: stored port}`` of the registered workers among ``registrations`` (chunks of
    500, under SQLite's parameter limit)."""
    regs = list(dict.fromkeys(registrations))
    out: dict[str, str | None] = {}
    for i in range(0, len(regs), 500):
        out.update(conn.execute(select(workers.c.registration, workers.c.port)
                                .where(workers.c.registration.in_(regs[i:i + 500]))).all())
    return out


def set_port(session: Session, registration: str, port: str | None, *, actor: str, now: dt.datetime,
             served: Sequence[str] = (), audit_home: bool = False) -> bool:
    """Give ``registration`` the port ``port`` (None: the home port). Writes it with one
    ``worker.port`` audit row when it changes what the worker's port is (a NULL and the home port
    ``served[0]`` are the same port); returns whether it wrote. The worker must exist. The audit
    entries of this transaction about him (his addition, his cards) move to ``port`` with him
    (``central.registry.audit_ports.follow``); the older ones keep the port they were written with.
    Under an office of several ports (``served``) the port is stored explicitly, never NULL: a NULL
    one of his is then set to the home port without an audit row (the same port, now written), or,
    with ``audit_home`` (a worker registered before this command: an import giving him his port), with
    a ``worker.port`` audit row ``["", home]`` and True (a row changed; no roster move: same port)."""
    old = session.execute(select(workers.c.port).where(workers.c.registration == registration)).scalar()
    if len(served) > 1:
        port = port or served[0]
    if port_of(old, served) == port_of(port, served):
        if old is None and port is not None and len(served) > 1:
            session.execute(update(workers).where(workers.c.registration == registration).values(port=port))
            if audit_home:
                audit(session, actor=actor, action="worker.port", subject=registration,
                      detail={"changed": {"port": ["", port]}}, now=now)
                return True
        return False
    session.execute(update(workers).where(workers.c.registration == registration).values(port=port))
    audit_ports.follow(session, registration, port)  # his entries of this command: his new port
    audit(session, actor=actor, action="worker.port", subject=registration,
          detail={"changed": {"port": [old or "", port or ""]}}, now=now)
    _moved_changes(session, registration, old, port, actor=actor, now=now)
    return True


def _moved_changes(session: Session, registration: str, old: str | None, new: str | None, *, actor: str,
                   now: dt.datetime) -> None:
    """The change rows of a worker's move (0031): a roster ``delete`` at the old port (its gates
    take a fresh snapshot without him: the roster delta has no removal) and, at the new port, a
    roster ``upsert`` with his record and a cards ``upsert`` of each of his cards (their gates add
    him). Bodies: his ``workers``/``cards`` rows as they are (``body`` of ``Worker``/``Card``)."""
    from central.registry.store import card_from_row, worker_from_row  # lazy: store imports this module

    row = session.execute(select(workers).where(workers.c.registration == registration)).first()
    if row is None:
        return
    record = body(worker_from_row(row))
    record_change(session, "roster", "delete", registration, record, actor=actor, now=now, port=old)
    record_change(session, "roster", "upsert", registration, record, actor=actor, now=now, port=new)
    for card in session.execute(select(cards).where(cards.c.registration == registration).order_by(cards.c.uid)):
        record_change(session, "cards", "upsert", card.uid, body(card_from_row(card)), actor=actor, now=now,
                      port=new)


def import_problems(session: Session, workers_csv: str | Path | None, card_holders: Iterable[tuple[str, str]],
                    file_regs: Iterable[str], *, allowed: Sequence[str] = (),
                    scope: Sequence[str] | None = None, served: Sequence[str] = ()) -> list[str]:
    """The ``file:line: ...`` refusals of an import's ports: a workers.csv ``port`` cell that is not
    a topic id or not one of ``allowed`` (``csv_problems``); with ``scope`` (a web user's view of some
    ports, ``in_ports``), a workers.csv row restating a worker registered at another port, and a
    cards.csv row (``card_holders``: ``(where, registration)``) of a worker of another port (a clerk
    imports his port's registry only). ``file_regs``: the workers.csv's registrations."""
    errors = csv_problems(workers_csv, allowed) if workers_csv else []
    if scope is None or set(scope) >= set(served):
        return errors
    in_file = set(file_regs)
    holders = {reg for _where, reg in card_holders} - in_file
    stored = stored_ports(session, [*in_file, *holders])
    mine = set(scope)

    def foreign(reg: str) -> bool:
        return reg in stored and port_of(stored[reg], served) not in mine

    if workers_csv:
        errors += [f"{where}: registration {reg} is a worker of another port"
                   for where, row in tables.read_rows(workers_csv)
                   if foreign(reg := (row.get("registration") or "").strip())]
    errors += [f"{where}: registration {reg} is a worker of another port"
               for where, reg in card_holders if reg not in in_file and foreign(reg)]
    return errors


def foreign_holders(conn: Connection | Session, registrations: Iterable[str], *,
                    scope: Sequence[str] | None, served: Sequence[str]) -> set[str]:
    """The ``registrations`` registered at a port outside ``scope`` (a web user's view of some of
    the ``served`` ports); empty when ``scope`` is None or sees every served port."""
    if scope is None or set(scope) >= set(served):
        return set()
    stored = stored_ports(conn, registrations)
    return {reg for reg, port in stored.items() if port_of(port, served) not in set(scope)}


def other_port_card(uid: str, registration: str) -> str:
    """The refusal of an import row giving ``registration`` the card ``uid`` registered to a worker
    of another port (outside the importing user's view): it names the card and the row's
    registration, never the holder (another port's registry is not the clerk's to read)."""
    return (f"card {uid} is registered at another port: an import does not give it to "
            f"{registration} (give {registration} a card with a new uid)")


def apply_import(session: Session, workers_csv: str | Path, default: str | None, *, actor: str,
                 now: dt.datetime, served: Sequence[str] = (), restated: Iterable[str] = (),
                 fresh: Iterable[str] = ()) -> set[str]:
    """Give each worker of an accepted workers.csv his row's ``port`` cell, else ``default`` (None:
    a worker keeps his port, a new one stays NULL, the home port; under an office of several ports,
    ``served``, a worker the import writes keeps his stored port and a NULL one becomes the home port
    ``served[0]``, stored) with ``set_port``; returns the registrations whose port was written with
    an audit row (counted as workers changed). ``restated``: the rows restating a worker exactly;
    given no port (no cell, ``default`` None) nothing is written for them, so a NULL port stays NULL
    (the recorded home port's, ``central.ledger.home``) and "nothing changed" stays true. Given one,
    a NULL port becomes it with a ``worker.port`` audit row, the home port included (``audit_home``:
    "give them their port", docs/operations.md); ``fresh``, the workers this import adds, excepted
    (their ``worker.import`` entry already says it)."""
    given = csv_ports(workers_csv)
    several, restated, fresh = len(served) > 1, set(restated), set(fresh)
    kept = stored_ports(session, [(r.get("registration") or "").strip() for _w, r in tables.read_rows(workers_csv)]) \
        if several else {}
    moved = set()
    for _where, row in tables.read_rows(workers_csv):
        reg = (row.get("registration") or "").strip()
        if given.get(reg, default) is None and reg in restated:
            continue  # nothing written for him: his port (NULL: the home port's) as it is
        port = given.get(reg, default) or ((kept.get(reg) or served[0]) if several else None)
        if port is not None and set_port(session, reg, port, actor=actor, now=now, served=served,
                                         audit_home=reg not in fresh):
            moved.add(reg)
    return moved
