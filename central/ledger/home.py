"""The ledger's ports against the config that opens it (issue 37 item 4: several ports, one ledger).

A worker stored without a port (``workers.port`` NULL) is the home port's of the config reading him
(``CentralConfig.port``), and a gate of a port the config does not serve is read as the home port's.
So a config must serve every port the ledger names (``need_served``), and the first config of
several ports, or of a ledger naming a port, to read NULL-port workers records its home port in
``ledger_home`` (0034), and so does the first write under a config of several ports, before it
writes anything (its workers are stored with their port: ``central.registry.worker_ports``); a
config of another home port is refused while such workers remain (``need_home``). ``check_config``
runs both where a ledger is opened for a config: every command given ``--config``
(``central.cli_args.database_arg``), ``portgate central run`` and ``portgate office serve``. A
command that changes the ledger (or, for ``central run``, feeds the gates their port's roster) is
refused; one that only reads is allowed with the warning (its only harm is what it shows:
docs/operations.md, "Which commands check the ledger's ports"). ``central run`` checks the home port
only: one office process per port, each on its own one-port central.toml, is the deployment of
several ports (its ingest stores and publishes its own ports' rows).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path

from sqlalchemy import column, inspect, select, table
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from central.db import make_engine, read_failure
from central.ledger.gate_ports import gate_ports
from central.ledger.schema import events, ledger_home
from portgate.errors import BadInput

#: the columns of ``central.registry.schema.workers`` read here (the registry's package reads the ledger)
_WORKERS = table("workers", column("registration"), column("port"))


class PortsRefused(BadInput):
    """A config that does not fit the ledger's ports (``need_served``, ``need_home``); ``BadInput``
    (where ``--config``). ``code``: ``not_served`` (fields ``ports``, ``served``) or ``other_home``
    (fields ``recorded``, ``home``); a read-only command prints ``cli.ledger.warn_<code>`` instead."""

    def __init__(self, code: str, message: str, **fields: str) -> None:
        super().__init__(message, where="--config")
        self.code = code
        self.fields = fields


def _conn(db: Session | Connection) -> Connection:
    return db.connection() if isinstance(db, Session) else db


def ledger_ports(db: Session | Connection) -> set[str]:
    """Every port the ledger names: the gates' events' ports and the workers' stored ports. More
    than one: the ledger is of several ports, and a dispatch needs the office's ports (its home
    port) to know whose a NULL ``workers.port`` is (``portgate rotation ... --config``)."""
    conn = _conn(db)
    stored = set(conn.execute(select(_WORKERS.c.port).where(_WORKERS.c.port.is_not(None)).distinct()).scalars())
    return stored | set(gate_ports(conn).values())


def need_config(db: Session | Connection) -> None:
    """``BadInput`` (where ``--config``) when the ledger names several ports (``ledger_ports``) and
    the command was given only ``--db``: nothing is dispatched or changed then."""
    found = sorted(ledger_ports(db))
    if len(found) > 1:
        raise BadInput(f"the ledger holds several ports ({', '.join(found)}): give --config central.toml "
                       "(its port and ports) so each requisition is filled from its own port's workers",
                       where="--config")


def need_served(db: Session | Connection, served: Sequence[str], *, record: bool = True,
                every_port: bool = True) -> None:
    """``BadInput`` (where ``--config``) when the ledger names a port (``ledger_ports``: a worker's
    stored port, a gate's events' port) that the config's ``served`` ports (``CentralConfig.served_ports``)
    do not include: its workers or gates would be read as the home port's (a NULL ``workers.port``
    is the home port of the config reading it), and a dispatch could send another port's worker.
    Then ``need_home`` of ``served[0]`` (``record``: may record it). ``every_port`` False (the ingest
    of one office process per port, ``central run``: it reads and writes its own ports' rows only)
    leaves the first check out, never the home port's. Nothing is changed on a refusal;
    the caller should give the config naming every port of the ledger (``ports = [...]``)."""
    named = ledger_ports(db)
    strange = sorted(named - set(served))
    if strange and every_port:
        raise PortsRefused("not_served", f"the ledger holds port(s) {', '.join(strange)} that this config does not "
                           f"serve ({', '.join(served)}): give a central.toml whose ports name every port of "
                           "the ledger, or its workers and gates would be read as the home port's",
                           ports=", ".join(strange), served=", ".join(served))
    if named or len(served) > 1:
        need_home(db, served[0], record=record, claim=len(served) > 1)


def need_home(db: Session | Connection, home: str, *, record: bool = True, claim: bool = False) -> None:
    """The ledger's home port (``ledger_home``, 0034) against the config's ``home``. None recorded:
    ``home`` is recorded when ``record`` and either workers with a NULL ``workers.port`` remain (the
    first config of a ledger of ports to read them claims them) or ``claim`` (a config of several
    ports: its first write records its home port before it writes anything, so a worker a later
    ``--db`` or one-port command stores without a port is still known as this port's). Another
    recorded while NULL-port workers remain: ``BadInput`` (where ``--config``; ``PortsRefused``): a
    NULL port would be read as ``home``'s, not as the port the ledger was filled under.
    Give those workers their port (``registry import --port``, a ``port`` cell) or use that home
    port's config; a wrong record is fixed by hand (docs/operations.md, "The ledger's home port")."""
    conn = _conn(db)
    portless = conn.execute(select(_WORKERS.c.registration).where(_WORKERS.c.port.is_(None)).limit(1)).first()
    recorded = conn.execute(select(ledger_home.c.port).where(ledger_home.c.id == 1)).scalar_one_or_none()
    if recorded is None:
        if not (record and (portless is not None or claim)):
            return
        recorded = _record_home(conn, home)
    if recorded != home and portless is not None:
        raise PortsRefused("other_home", f"the ledger's workers without a port are {recorded}'s (its home port), "
                           f"not {home}'s: give them their port (registry import --port) or use a central.toml "
                           f"whose port is {recorded}", recorded=recorded, home=home)


def _record_home(conn: Connection, home: str) -> str:
    """Insert ``home`` as the ledger's home port unless a concurrent first write or setter
    (``central.ledger.home_port.set_home``) recorded one meanwhile (the insert waits for its
    transaction, then does nothing: no duplicate-key error); returns the port recorded now."""
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    conn.execute(dialect.insert(ledger_home).values(id=1, port=home, recorded_at=dt.datetime.now(dt.UTC))
                 .on_conflict_do_nothing(index_elements=[ledger_home.c.id]))
    return conn.execute(select(ledger_home.c.port).where(ledger_home.c.id == 1)).scalar_one()


def _not_yet_a_ledger(url: str) -> bool:
    """True for a SQLite file that does not exist or is empty (a command that may start a ledger
    makes it; the others refuse it themselves): connecting here would create it."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.query.get("uri") == "true":
        return False
    path = parsed.database
    return path in (None, "", ":memory:") or not Path(path).is_file() or Path(path).stat().st_size == 0


def check_config(database_url: str, served: Sequence[str], *, writes: bool,
                 every_port: bool = True) -> PortsRefused | None:
    """The ledger at ``database_url`` against a config serving ``served`` (home port first,
    ``CentralConfig.served_ports``): ``need_served`` (``every_port``: see there) in a transaction of
    its own, which also records the home port (``need_home``) when ``writes``. ``writes`` (a command
    that changes the ledger or feeds the gates): ``PortsRefused`` (a ``BadInput``: exit 2, nothing
    written) on a mismatch; else the refusal is returned (None when all is well) for the command to
    print as a warning.
    Nothing is checked on a SQLite file that is not there yet or empty, nor on a ledger older than
    0034 (its command migrates it; the next one checks). ``StoreUnavailable``/``StoreError``
    (``central.db.read_failure``: one line) when the ledger cannot be read."""
    if _not_yet_a_ledger(database_url):
        return None
    engine = make_engine(database_url)
    try:
        with engine.begin() as conn:
            if not inspect(conn).has_table("ledger_home"):
                return None
            try:
                need_served(conn, tuple(served), record=writes, every_port=every_port)
            except PortsRefused as exc:
                if writes:
                    raise
                return exc
    except SQLAlchemyError as exc:  # not reachable, not a database: one line (exit 1 or 2)
        raise read_failure(make_url(database_url).render_as_string(hide_password=True), engine.dialect.name,
                           exc) from exc
    finally:
        engine.dispose()
    return None


def ledger_gate_port(database_url: str, gate_id: str) -> str | None:
    """The port the ledger at ``database_url`` knows ``gate_id`` at: the port of its first event
    (``gate_ports``: a gate's port is its events' port, whichever office process or keys dir
    registered it), None when it has sent none. ``portgate central add-gate --config`` refuses to
    register that id at another port. None, without connecting, for a SQLite file that is not there
    yet or empty, and on a database without the events tables (not migrated: no gate known).
    ``StoreUnavailable``/``StoreError`` (``central.db.read_failure``: one line, exit 1 or 2) when
    the ledger cannot be read; the waiting notice is ``make_engine``'s, as for every command."""
    if _not_yet_a_ledger(database_url):
        return None
    engine = make_engine(database_url)
    try:
        with engine.connect() as conn:
            if not inspect(conn).has_table("events"):
                return None
            first = select(events.c.port).where(events.c.gate_id == gate_id).order_by(events.c.seq).limit(1)
            return conn.execute(first).scalar_one_or_none()
    except SQLAlchemyError as exc:  # not reachable, not a database: one line (exit 1 or 2)
        raise read_failure(make_url(database_url).render_as_string(hide_password=True), engine.dialect.name,
                           exc) from exc
    finally:
        engine.dispose()


def ledger_gates(database_url: str) -> dict[str, str]:
    """gate id -> the port the ledger at ``database_url`` has its events at (``gate_ports``: the port
    of its first event), for every gate that has sent one. ``portgate central check-config`` compares
    the keys dirs' registrations with it. ``{}``, without connecting, for a SQLite file that is not
    there yet or empty, and on a database without the ledger's tables (not migrated). Read only.
    ``StoreUnavailable``/``StoreError`` (``central.db.read_failure``: one line) when the ledger
    cannot be read; the caller decides whether that stops it (check-config: a warning line)."""
    if _not_yet_a_ledger(database_url):
        return {}
    engine = make_engine(database_url)
    try:
        with engine.connect() as conn:
            if not inspect(conn).has_table("gate_progress"):
                return {}
            return gate_ports(conn)
    except SQLAlchemyError as exc:  # not reachable, not a database: one line
        raise read_failure(make_url(database_url).render_as_string(hide_password=True), engine.dialect.name,
                           exc) from exc
    finally:
        engine.dispose()
