"""The ledger's home port read and set by a command (``portgate ledger home-port``; issue 37 item 4,
several ports on one ledger): the port its workers without a port (``workers.port`` NULL) belong to
(``ledger_home``, 0034; ``central.ledger.home`` records it on a first write and refuses a config of
another home port). Before, a wrong record was fixed by SQL only.

Setting it is a change of the registry's meaning, so it is refused unless the result is clear:

- the port must be one the config serves (``CentralConfig.served_ports``): an office that does not
  run that port cannot speak for its workers;
- while workers without a port remain, moving the home port to another port than the one they are
  read as today (the recorded one, else the config's ``port``: with no record a NULL port is the
  home port of the config reading it) makes them that other port's workers: its rosters, its
  rotation, its clerks. On a shared ledger the other ports' users expect their workers to stay
  where they are unless someone said so: ``move_portless`` must be given (``--move-portless``);
  giving those workers their port (``registry import --port``) is the alternative that moves nobody.
- the same port again changes nothing (no audit row).
- office processes running on the ledger (``central.ledger.liveness.running``: a ``central run`` or
  ``office serve`` that refreshed its row within ``STALE_S`` seconds) read the home port when they
  started and would keep the old one: refused unless ``force`` (``--force``), and then the audit
  row names them. Stopping them first, then starting them again, is what an operator is told to do.

A change writes an ``audit_log`` row (action ``ledger.home-port``, port ``*``: every port's users'
concern) in the same transaction.
"""

from __future__ import annotations

import datetime as dt
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace

from sqlalchemy import column, func, insert, select, table, text, update
from sqlalchemy.engine import Connection

from central.audit import ALL, audit_log
from central.ledger.liveness import OfficeProcess, running
from central.ledger.stored_time import raw, stored_time
from central.ledger.schema import ledger_home
from portgate.errors import BadInput

#: the columns of ``central.registry.schema.workers`` read here (the registry's package reads the ledger)
_WORKERS = table("workers", column("registration"), column("port"))


@dataclass(frozen=True)
class HomePort:
    """What the ledger says: ``recorded`` (None: no record), ``recorded_at`` (aware UTC or None) and
    ``portless``, the number of workers stored without a port (read as the home port's);
    ``running``: the office processes running when ``set_home`` changed it with ``force``."""

    recorded: str | None
    recorded_at: dt.datetime | None
    portless: int
    running: tuple[OfficeProcess, ...] = ()


class HomeRefused(BadInput):
    """``set_home`` refused, nothing written. ``code``: ``not_served`` (fields ``port``,
    ``served``), ``other_spelling`` (``port``, ``served``, ``meant``: a served port's code written
    in other letter case or with accents), ``moves_portless`` (``port``, ``now``, ``n``) or
    ``offices_running`` (``port``, ``n``; ``processes``: the running ``OfficeProcess`` list); the command words it
    (``cli.ledger.home_<code>``). ``BadInput``: exit 2."""

    def __init__(self, code: str, message: str, processes: Sequence[OfficeProcess] = (), **fields: str) -> None:
        super().__init__(message, where="--set")
        self.code = code
        self.fields = fields
        self.processes = tuple(processes)


def _folded(name: str) -> str:
    """``name`` without letter case, accents or blanks: ``"Paranaguá "`` -> ``"paranagua"``."""
    return "".join(c for c in unicodedata.normalize("NFKD", name.strip().casefold()) if not unicodedata.combining(c))


def read_home(conn: Connection) -> HomePort:
    """The ledger's recorded home port and its count of workers without a port. ``StoreError``
    (exit 2) for a ``recorded_at`` that is not a time (``liveness.stored_time``)."""
    row = conn.execute(select(ledger_home.c.port, raw(ledger_home.c.recorded_at)).where(ledger_home.c.id == 1)).first()
    portless = conn.execute(select(func.count()).select_from(_WORKERS).where(_WORKERS.c.port.is_(None))).scalar_one()
    at = stored_time("ledger_home", "recorded_at", row.recorded_at) if row is not None else None
    return HomePort(row.port if row is not None else None, at, int(portless))


def _serialise(conn: Connection) -> None:
    """Take the ledger's home-port record for this transaction before reading it, so two setters
    (or a setter and a first write recording it, ``central.ledger.home.need_home``) run one after
    the other, the second reading what the first wrote: PostgreSQL locks the table (``SHARE ROW
    EXCLUSIVE``: conflicts with another setter's lock and with an uncommitted insert or update of
    the row; readers are not held); SQLite takes its write lock with a first write (a no-op update;
    the driver begins the transaction before it, not before a read). Waits for the other
    transaction (SQLite: its busy timeout, then ``OperationalError`` "database is locked")."""
    if conn.dialect.name == "postgresql":
        conn.execute(text("LOCK TABLE ledger_home IN SHARE ROW EXCLUSIVE MODE"))
    else:
        conn.execute(update(ledger_home).where(ledger_home.c.id == 1).values(port=ledger_home.c.port))


def _running_offices(conn: Connection, port: str, now: dt.datetime, force: bool) -> list[OfficeProcess]:
    """The office processes running on the ledger (``liveness.running``); ``HomeRefused``
    (``offices_running``) when there are some and not ``force``."""
    live = running(conn, now)
    if live and not force:
        names = ", ".join(f"{p.kind} on {p.host} (pid {p.pid})" for p in live)
        raise HomeRefused("offices_running", f"{len(live)} office process(es) run on this ledger ({names}) and would "
                          f"keep the old home port: stop them first, or give --force", processes=live,
                          port=port, n=str(len(live)))
    return live


def set_home(conn: Connection, port: str, *, served: Sequence[str], move_portless: bool, actor: str,
             now: dt.datetime, force: bool = False) -> HomePort:
    """Record ``port`` as the ledger's home port, in the caller's transaction; returns what was
    there before (``read_home``). ``served``: the config's ports, its home port first. Raises
    ``HomeRefused`` (nothing written) for a port not in ``served``, or for one that would make the
    workers without a port another port's than today's (the record, else ``served[0]``) when
    ``move_portless`` is False, or while office processes run on the ledger (``liveness.running``)
    when ``force`` is False (with ``force`` the change is made and its audit row names them, as does
    the returned ``running``). ``BadInput`` (where ``--actor``) for an empty ``actor``. Unchanged
    (no write, no audit row) when ``port`` is already recorded. Serialised with any other setter
    (``_serialise``): a second one waits and then reads the first's record; SQLAlchemy's
    ``IntegrityError``/``OperationalError`` (a lock given up) reach the caller
    (``portgate ledger home-port``: "changed meanwhile, run again", exit 1)."""
    if not actor or not actor.strip():
        raise BadInput("actor is required (who sets the ledger's home port)", where="--actor")
    if port not in served:
        meant = next((code for code in served if _folded(code) == _folded(port)), None)
        if meant is not None:  # "Santos", "Paranaguá": the port's name, not its code
            raise HomeRefused("other_spelling", f"port {port!r} is unknown: a port is named by its code "
                              f"({', '.join(served)}); did you mean {meant}?", port=repr(port),
                              served=", ".join(served), meant=meant)
        raise HomeRefused("not_served", f"port {port!r} is not served by this config ({', '.join(served)}): "
                          "give a central.toml whose ports name it", port=repr(port), served=", ".join(served))
    _serialise(conn)
    before = read_home(conn)
    if before.recorded == port:
        return before
    live = _running_offices(conn, port, now, force)
    now_read_as = before.recorded or served[0]
    if before.portless and port != now_read_as and not move_portless:
        raise HomeRefused("moves_portless", f"{before.portless} worker(s) without a port are {now_read_as}'s "
                          f"today; making {port} the home port makes them {port}'s: give them their port "
                          f"(registry import --port {now_read_as}) or confirm with --move-portless",
                          port=port, now=now_read_as, n=str(before.portless))
    if before.recorded is None:
        conn.execute(insert(ledger_home).values(id=1, port=port, recorded_at=now))
    else:
        conn.execute(update(ledger_home).where(ledger_home.c.id == 1).values(port=port, recorded_at=now))
    detail = {"changed": {"port": [before.recorded or "", port]}, "portless_workers": before.portless}
    if live:  # --force: who was left on the old home port
        detail["forced_while_running"] = [f"{p.kind} {p.host} pid {p.pid} (home {p.home_port})" for p in live]
    conn.execute(insert(audit_log).values(
        at=now, actor=actor.strip(), action="ledger.home-port", subject="ledger_home", port=ALL, detail=detail))
    return replace(before, running=tuple(live))
