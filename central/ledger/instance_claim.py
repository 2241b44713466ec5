"""One live ``portgate central run`` per home port and ``--instance`` on a ledger (issue 37).

Two office processes started on one config without distinct ``--instance`` names use the same MQTT
client ids (``central.runner.for_instance``): the broker hands each session to the newer
connection and takes it from the older one, back and forth, and neither ingests steadily. So a
``central run`` claims its home port and instance when it starts (``claim``, in the transaction
that writes its ``office_processes`` row, ``central.ledger.liveness``) and is refused
(``OfficeRunning``, exit 2: systemd's ``RestartPreventExitStatus=2`` does not restart it in a loop)
while another process of the same kind, home port and instance holds it. A holder counts when:

- its heartbeat (``seen_at``) is within ``stale_s`` seconds (``liveness.STALE_S``, 60 s) of now, the
  bound ``liveness.running`` uses; an older row (a process SIGKILLed or on a machine that lost power)
  never blocks a start after that bound; and
- it is not known dead: a row of this host (``socket.gethostname()``) whose pid is not a running
  process (gone, or a zombie not reaped yet) or is another process now (its start time in clock
  ticks since boot, ``proc_start``, differs from the row's: the pid was reused) is dead at once. So
  systemd's restart of a crashed instance 2 s later is not refused by the dead row's recent
  heartbeat. A row of another host can only go stale: its host is not ours to look at.

Dead and stale rows of the claimed key are deleted with the claim. Atomic on both databases
(``_serialise``): PostgreSQL locks ``office_processes`` (``SHARE ROW EXCLUSIVE``: a second claim
waits for the first's commit and then sees its row; readers are not held), SQLite takes its write
lock with a first write (a no-op update) before reading. Times are aware UTC.
"""

from __future__ import annotations

import datetime as dt
import os
import socket
from dataclasses import dataclass

import structlog
from sqlalchemy import and_, delete, insert, inspect, select, text, update
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import SQLAlchemyError

from central.db import make_engine, read_failure
from central.ledger.home import _not_yet_a_ledger
from central.ledger.schema import office_processes
from central.ledger.stored_time import raw, stored_time
from portgate.errors import PortgateError, StoreError

log = structlog.get_logger()

#: the kind of process that claims its home port and instance (``office serve`` rows claim nothing)
CLAIMING = "central run"


class OfficeRunning(PortgateError):
    """Another live ``central run`` of the same home port and instance holds the ledger: this one
    does not start (exit 2). ``holder`` is its row (``Holder``)."""

    def __init__(self, holder: Holder, stale_s: float, age_s: float) -> None:
        self.holder = holder
        who = f"'{holder.instance}'" if holder.instance else "without --instance"
        other = "another --instance NAME" if holder.instance else "--instance NAME"
        super().__init__(
            f"another office {who} of port {holder.home_port} (pid {holder.pid} on host {holder.host}, "
            f"heartbeat {age_s:.0f} s ago) is running on this ledger: start this one with {other} or stop "
            f"that one (an office that died stops counting {stale_s:.0f} s after its last heartbeat)")


@dataclass(frozen=True)
class Holder:
    """A ``central run`` row of the claimed key: its id, ``instance`` (``''``: none), ``home_port``,
    ``host``, ``pid``, ``proc_start`` (ticks since boot, None: unknown) and ``seen_at`` (aware UTC)."""

    id: str
    instance: str
    home_port: str
    host: str
    pid: int
    proc_start: int | None
    seen_at: dt.datetime


def this_host() -> str:
    """The host name stored in a row (at most 255 characters, the column's size)."""
    return socket.gethostname()[:255]


def _stat(pid: int) -> tuple[str, int] | None:
    """Process ``pid``'s state letter and start time in clock ticks since boot (``/proc/<pid>/stat``,
    fields 3 and 22), or None: no such process, or no ``/proc`` to read (not Linux)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()  # after the command name, which may hold spaces
    try:
        return fields[0], int(fields[19])
    except (IndexError, ValueError):
        return None


def proc_start(pid: int) -> int | None:
    """The start time of process ``pid`` in clock ticks since boot, or None: not readable (``_stat``)."""
    found = _stat(pid)
    return found[1] if found is not None else None


def _pid_running(pid: int) -> bool:
    """True if a process ``pid`` exists here (a process of another user too: ``EPERM``)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def known_dead(holder: Holder, host: str) -> bool:
    """True if ``holder``'s process is of ``host`` (this one) and no longer runs: its pid is not a
    running process, or it is another process now (another start time). A row of another host, or one
    whose pid runs with the same or an unknown start time, is not known dead."""
    if holder.host != host or holder.pid <= 0:
        return False
    if holder.pid == os.getpid():
        return holder.proc_start != proc_start(os.getpid())  # an earlier process that had our pid
    if not _pid_running(holder.pid):
        return True
    found = _stat(holder.pid)
    if found is None:  # no /proc here: the pid runs, nothing more is known
        return False
    state, start = found
    return state in ("Z", "X", "x") or (holder.proc_start is not None and holder.proc_start != start)


def _serialise(conn: Connection) -> None:
    """Hold the other claims (and heartbeats) of ``office_processes`` until this transaction ends
    (module doc): PostgreSQL ``LOCK TABLE ... SHARE ROW EXCLUSIVE``, SQLite a first write."""
    if conn.dialect.name == "postgresql":
        conn.execute(text("LOCK TABLE office_processes IN SHARE ROW EXCLUSIVE MODE"))
    else:
        conn.execute(update(office_processes).where(office_processes.c.id == "").values(pid=office_processes.c.pid))


def _seen(value: object) -> dt.datetime:
    """A row's ``seen_at`` (``liveness.stored_time``); one that is not a time reads as long ago
    (logged): the row is deleted with the claim, as a starting process's prune deletes it."""
    try:
        return stored_time("office_processes", "seen_at", value)
    except StoreError as error:
        log.warning("office.liveness_unreadable_row", error=str(error))
        return dt.datetime.min.replace(tzinfo=dt.UTC)


def _holders(conn: Connection, home_port: str, instance: str | None) -> list[Holder]:
    """The ``central run`` rows of ``home_port`` and ``instance`` (None: every instance), oldest
    heartbeat first."""
    t = office_processes.c
    which = and_(t.kind == CLAIMING, t.home_port == home_port)
    rows = conn.execute(select(t.id, t.instance, t.home_port, t.host, t.pid, t.proc_start, raw(t.seen_at))
                        .where(which if instance is None else and_(which, t.instance == instance)))
    found = [Holder(r.id, r.instance, r.home_port, r.host, r.pid, r.proc_start, _seen(r.seen_at)) for r in rows]
    return sorted(found, key=lambda h: (h.seen_at, h.id))


def _live(holder: Holder, now: dt.datetime, stale_s: float, host: str) -> bool:
    """True if ``holder`` holds its key (module doc): a heartbeat within ``stale_s`` seconds of
    ``now`` (either side: clock skew) and not known dead on ``host`` (this one)."""
    fresh = now - dt.timedelta(seconds=stale_s) <= holder.seen_at <= now + dt.timedelta(seconds=stale_s)
    return fresh and not known_dead(holder, host)


def live_instances(database_url: str, home_port: str, *, now: dt.datetime, stale_s: float) -> list[Holder]:
    """The live ``central run`` processes of ``home_port`` on the ledger at ``database_url``, every
    instance, by instance name (``portgate central check-config`` names them). Read only; ``[]`` without connecting for
    a SQLite file that is not there yet or empty, and on a ledger older than 0037.
    ``StoreUnavailable``/``StoreError`` (``central.db.read_failure``) when it cannot be read."""
    if _not_yet_a_ledger(database_url):
        return []
    engine = make_engine(database_url)
    try:
        with engine.connect() as conn:
            seen = inspect(conn)
            if not seen.has_table("office_processes") or \
                    "instance" not in {c["name"] for c in seen.get_columns("office_processes")}:
                return []
            live = [h for h in _holders(conn, home_port, None) if _live(h, now, stale_s, this_host())]
            return sorted(live, key=lambda h: (h.instance, h.host, h.pid))
    except SQLAlchemyError as exc:
        raise read_failure(make_url(database_url).render_as_string(hide_password=True), engine.dialect.name,
                           exc) from exc
    finally:
        engine.dispose()


def claim(conn: Connection, row: dict, *, now: dt.datetime, stale_s: float) -> list[Holder]:
    """Write ``row`` (this process's ``office_processes`` values: ``kind``, ``home_port``,
    ``instance``...) in the caller's transaction; for a ``central run`` first refuse it while a live
    holder of the same home port and instance is there (module doc): ``OfficeRunning`` (nothing
    written). Returns the dead, stale or unreadable holders it deleted. SQLAlchemy's errors reach
    the caller."""
    gone: list[Holder] = []
    if row["kind"] == CLAIMING:
        _serialise(conn)
        host = this_host()
        for holder in _holders(conn, row["home_port"], row["instance"]):
            if _live(holder, now, stale_s, host):
                age = max(0.0, (now - holder.seen_at).total_seconds())
                raise OfficeRunning(holder, stale_s, age)
            gone.append(holder)
        if gone:
            conn.execute(delete(office_processes).where(office_processes.c.id.in_([h.id for h in gone])))
    conn.execute(insert(office_processes).values(**row))
    return gone
