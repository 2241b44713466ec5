"""The office processes running on a ledger (issue 37 item 4, many ports on one ledger; 0036).

``portgate central run`` and ``portgate office serve`` read the ledger's home port when they start
(``central.ledger.home.check_config``) and keep it: a home port set while they run
(``portgate ledger home-port --set``) would leave them on the old one (their roster, their clerks'
view of the workers without a port). So each of them keeps a row in ``office_processes`` while it
runs (``Liveness``): written at its start, ``seen_at`` refreshed every ``REFRESH_S`` seconds by a
daemon thread, deleted at a clean stop. ``running`` lists the rows seen within ``STALE_S`` seconds:
a process killed without its stop (``kill -9``, a power cut) stops refreshing and is no longer
counted after ``STALE_S`` seconds; its row stays, ignored, until a later start of any office
process deletes it (rows not refreshed for ``PRUNE_S`` seconds).

A ``central run`` also claims its home port and ``--instance`` with its first write (0037,
``central.ledger.instance_claim``): it does not start while another live one holds them
(``OfficeRunning``, exit 2), and a database error at that write stops it (exit 1 or 2, it cannot tell
whether it may run). Any other failure to write the row (a database that went away) never stops the
office: it is logged (``office.liveness_failed``) and the next refresh tries again (the row is
written again if it is missing; a ``central run`` whose row another start of its instance took over
meanwhile stops instead, ``Liveness._beat``). Times are the processes' own UTC clocks (the offices and the
command are expected to keep NTP time: ``STALE_S`` is far above any sane skew). A ``seen_at`` more
than ``stale_s`` seconds ahead of the reader's clock (a process whose clock ran fast, a row written by
hand) is stale too: otherwise it would be counted as running for as long as the skew lasts.

A stored time the office cannot read (``central.ledger.stored_time``) (a SQLite row edited by hand: ``seen_at = 'garbage'``) is
``StoreError`` naming the table, the column and the value (``stored_time``; exit 2), never a
traceback; a starting process's prune deletes such rows (logged), as it deletes old ones.
"""

from __future__ import annotations

import datetime as dt
import os
import secrets
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass

import structlog
from sqlalchemy import delete, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import SQLAlchemyError

from central.db import make_engine, read_failure
from central.ledger.instance_claim import CLAIMING, OfficeRunning, claim, proc_start, this_host
from central.ledger.schema import office_processes
from central.ledger.stored_time import raw, stored_time
from portgate.errors import StoreError

log = structlog.get_logger()

REFRESH_S = 10.0  #: seconds between two refreshes of a running process's ``seen_at``
STALE_S = 60.0  #: a row not refreshed for this many seconds is not a running process
PRUNE_S = 24 * 3600.0  #: rows not refreshed for this long are deleted when a process starts


@dataclass(frozen=True)
class OfficeProcess:
    """One running office process: ``kind`` ("central run" or "office serve"), the ``home_port`` of
    its config, ``host`` and ``pid``, ``started_at`` and ``seen_at`` (aware UTC)."""

    id: str
    kind: str
    home_port: str
    host: str
    pid: int
    started_at: dt.datetime
    seen_at: dt.datetime


def running(conn: Connection, now: dt.datetime, stale_s: float = STALE_S) -> list[OfficeProcess]:
    """The office processes whose row was refreshed within ``stale_s`` seconds of ``now`` (aware
    UTC) and not more than ``stale_s`` seconds after it (clock skew, module doc), oldest start first.
    Read in Python (a handful of rows): SQLite keeps no offset. ``StoreError`` for a row whose times
    are not times (``stored_time``)."""
    low, high = now - dt.timedelta(seconds=stale_s), now + dt.timedelta(seconds=stale_s)
    t = office_processes.c
    found = [OfficeProcess(r.id, r.kind, r.home_port, r.host, r.pid, stored_time("office_processes", "started_at",
                                                                                r.started_at),
                           stored_time("office_processes", "seen_at", r.seen_at))
             for r in conn.execute(select(t.id, t.kind, t.home_port, t.host, t.pid, raw(t.started_at),
                                          raw(t.seen_at)))]
    return sorted((p for p in found if low <= p.seen_at <= high), key=lambda p: (p.started_at, p.id))


class Liveness:
    """``with Liveness(url, "office serve", "santos"):`` keeps this process's row while the block
    runs (module doc). ``refresh_s``: seconds between refreshes; ``clock``: aware UTC now;
    ``instance``: a ``central run``'s ``--instance`` (``''``: none); ``on_lost``: called (from the
    refresh thread) when another process took this one's instance over (``_beat``).

    A SIGTERM whose handler is the default (death) when the block starts (in the main thread) gets
    one that deletes the row first and then dies of the signal as before: uvicorn (``office serve``)
    puts the default handler back and raises the signal again after its shutdown, which would
    otherwise end the process without leaving the block. A handler set inside the block
    (``central run``'s ``done.set``) replaces it and the block ends normally."""

    def __init__(self, database_url: str, kind: str, home_port: str, *, instance: str = "",
                 refresh_s: float = REFRESH_S, clock=lambda: dt.datetime.now(dt.UTC),
                 on_lost: Callable[[], None] | None = None) -> None:
        self.id = secrets.token_hex(16)
        self.kind, self.home_port, self.refresh_s, self.clock = kind, home_port, refresh_s, clock
        self.instance, self.on_lost = instance, on_lost
        self._url = database_url
        self._engine = None
        self._stop = threading.Event()
        self._closed = False
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Liveness:
        self._engine = make_engine(self._url, existing_file=True)
        try:
            self._start()
        except BaseException:
            self._engine.dispose()
            raise
        self._thread = threading.Thread(target=self._run, name="office-liveness", daemon=True)
        self._thread.start()
        main = threading.current_thread() is threading.main_thread()
        if main and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            signal.signal(signal.SIGTERM, self._terminated)
        return self

    def __exit__(self, *exc) -> None:
        if signal.getsignal(signal.SIGTERM) == self._terminated:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
        self._close()

    def _terminated(self, signum, _frame) -> None:
        """SIGTERM with no other handler: the row deleted, then the default death (exit status as before)."""
        self._close()
        signal.signal(signum, signal.SIG_DFL)
        signal.raise_signal(signum)

    def _close(self) -> None:
        """Stop refreshing and delete the row (once; a database error logged)."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        try:
            with self._engine.begin() as conn:
                conn.execute(delete(office_processes).where(office_processes.c.id == self.id))
        except SQLAlchemyError as error:
            log.warning("office.liveness_failed", step="stop", error=str(error).splitlines()[0][:300])
        finally:
            self._engine.dispose()

    def _run(self) -> None:
        while not self._stop.wait(self.refresh_s):
            self._beat()

    def _row(self, now: dt.datetime) -> dict:
        """This process's ``office_processes`` values, ``seen_at`` and ``started_at`` ``now``."""
        return dict(id=self.id, kind=self.kind, home_port=self.home_port, instance=self.instance,
                    host=this_host(), pid=os.getpid(), proc_start=proc_start(os.getpid()), started_at=now,
                    seen_at=now)

    def _start(self) -> None:
        """The first write: this process's row, a ``central run`` claiming its home port and
        instance first (``instance_claim.claim``: ``OfficeRunning`` raised, nothing written), then the
        rows not refreshed for ``PRUNE_S`` deleted. A database error is logged and left to the next
        refresh, except for a ``central run``: ``StoreUnavailable`` (exit 1, systemd retries) or
        ``StoreError`` (exit 2, ``central.db.read_failure``), as it cannot tell whether it may run."""
        now = self.clock()
        try:
            with self._engine.begin() as conn:
                for gone in claim(conn, self._row(now), now=now, stale_s=STALE_S):
                    log.info("office.instance_taken_over", instance=gone.instance, host=gone.host, pid=gone.pid,
                             seen_at=gone.seen_at.isoformat())
                self._prune(conn, now)
        except SQLAlchemyError as error:
            if self.kind == CLAIMING:
                where = self._engine.url.render_as_string(hide_password=True)
                raise read_failure(where, self._engine.dialect.name, error) from error
            log.warning("office.liveness_failed", step="start", error=str(error).splitlines()[0][:300])

    def _beat(self) -> None:
        """Refresh this process's ``seen_at``; its row written again if missing (deleted by hand, or
        taken over by a ``central run`` that found it stale: this process could not write it for
        ``STALE_S``), a ``central run``'s through ``claim`` again. A live other holder of its home port
        and instance there: ``office.instance_lost`` logged, the refreshes end and ``on_lost`` is
        called (``central run``: its SIGTERM, a clean stop), so two processes never keep one
        instance. A database error is logged, never raised."""
        now = self.clock()
        try:
            with self._engine.begin() as conn:
                done = conn.execute(update(office_processes).where(office_processes.c.id == self.id)
                                    .values(seen_at=now)).rowcount
                if not done:
                    claim(conn, self._row(now), now=now, stale_s=STALE_S)
        except SQLAlchemyError as error:
            log.warning("office.liveness_failed", step="refresh", error=str(error).splitlines()[0][:300])
        except OfficeRunning as lost:
            log.error("office.instance_lost", error=str(lost))
            self._stop.set()
            if self.on_lost is not None:
                self.on_lost()

    @staticmethod
    def _prune(conn: Connection, now: dt.datetime) -> None:
        """Delete the rows not refreshed for ``PRUNE_S`` and those whose ``seen_at`` is not a time."""
        cutoff = now - dt.timedelta(seconds=PRUNE_S)
        old = []
        for r in conn.execute(select(office_processes.c.id, raw(office_processes.c.seen_at))):
            try:
                if stored_time("office_processes", "seen_at", r.seen_at) < cutoff:
                    old.append(r.id)
            except StoreError as error:
                log.warning("office.liveness_unreadable_row", error=str(error))
                old.append(r.id)
        if old:
            conn.execute(delete(office_processes).where(office_processes.c.id.in_(old)))
