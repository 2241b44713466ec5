"""Where a worker's ledger writer (central/ingest/writer.py) runs, behind one small interface:
``submit(batch_id, items)`` hands a batch over, ``on_outcome(outcome)`` (called on the link's own
thread) reports each commit and each gap-scan report, ``stop(timeout)`` lets the writer finish the
batches already handed over, ``alive()`` tells the watchdog.

``WriterProcess`` (``[ingest] writer = "process"``, the default): a child process over a duplex
pipe, started with multiprocessing's "forkserver" method (forked from a clean server process, never
from this threaded one). If the child dies (killed, out of memory, a bug), the link logs
``ingest.writer_died``, starts a new one after a back-off (1 s doubling to 30 s) and hands it every
batch not yet reported, in order: those messages were not acknowledged, and the ``event_id``
dedupe makes the ones already committed no-ops.

``WriterThread`` (``writer = "thread"``): the same writer on a thread of the worker's process.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import socket
import threading
import time
from collections.abc import Callable

import structlog
from sqlalchemy.engine import Engine

from central.config import CentralConfig
from central.ingest import writer, writer_process
from central.ingest.keys import KeyRing

log = structlog.get_logger("central.ingest")

OnOutcome = Callable[[writer.Outcome], None]
RESTORE_BATCH = -1  # id of the batch of ``restore()`` messages a restarted child gets (nothing to acknowledge)
MAX_DEATHS = 5
_context = None


def _forkserver():
    global _context
    if _context is None:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["central.ingest.writer_process", "central.db", "portgate.logs"])
        _context = ctx
    return _context


def _widen(conn, size: int = 4 << 20) -> None:
    """Ask for a socket send buffer that holds a whole batch (the kernel caps it at
    ``net.core.wmem_max``): a batch is handed over from paho's network thread, whose send then
    returns at once instead of waiting for the writer's reader thread to take it."""
    sock = socket.socket(fileno=os.dup(conn.fileno()))
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, size)
    except OSError:
        pass  # best effort: a smaller buffer only means a short wait in the send
    finally:
        sock.close()


class WriterProcess:
    """The writer in a child process; ``restarts`` counts the children started after a death."""

    def __init__(self, config: CentralConfig, index: int, on_outcome: OnOutcome,
                 restore: Callable[[], list[tuple[str, bytes]]] = lambda: []) -> None:
        self.config = config
        self.index = index
        self.on_outcome = on_outcome
        self.restore = restore  # messages a new child must see again (the gates' statuses)
        self.restarts = 0
        self.deaths_in_a_row = 0  # deaths without an outcome in between (a batch that kills it)
        self._unanswered: dict[int, list] = {}  # batch id -> items, in hand-over order
        self._lock = threading.Lock()  # the pipe's sending end and _unanswered, across a restart
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._proc = None
        self._conn = None

    def start(self) -> WriterProcess:
        self._spawn()
        self._thread = threading.Thread(target=self._run, name=f"ingest-writer-link-{self.index}", daemon=True)
        self._thread.start()
        return self

    def _spawn(self) -> None:
        ctx = _forkserver()
        ours, theirs = ctx.Pipe()
        proc = ctx.Process(target=writer_process.run_process, args=(theirs, self.config, self.index, os.getpid()),
                           name=f"portgate-ingest-writer-{self.index}", daemon=True)
        proc.start()
        theirs.close()
        _widen(ours)
        self._proc, self._conn = proc, ours

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def submit(self, batch_id: int, items: list[tuple[str, bytes]]) -> None:
        with self._lock:
            self._unanswered[batch_id] = items
            try:
                self._conn.send((batch_id, items))
            except OSError:
                pass  # the child is gone: _run starts a new one and hands it this batch again

    def _run(self) -> None:
        delay = 1.0
        while True:
            try:
                out = self._conn.recv()
            except (EOFError, OSError):
                if self._stopping.is_set():
                    return
                self._proc.join(1.0)
                if self._stopping.is_set():
                    return
                self.deaths_in_a_row += 1
                log.error("ingest.writer_died", worker=self.index, exitcode=self._proc.exitcode,
                          unanswered_batches=len(self._unanswered), restart_in_s=delay)
                if self._stopping.wait(delay):
                    return
                delay = min(delay * 2, 30.0)
                self._restart()
                continue
            delay = 1.0
            self.deaths_in_a_row = 0
            if out.batch_id is not None:
                with self._lock:
                    self._unanswered.pop(out.batch_id, None)
            self.on_outcome(out)

    def _restart(self) -> None:
        with self._lock:
            self._conn.close()
            self._spawn()
            self.restarts += 1
            items = self.restore()
            batches = [*self._unanswered.items(), *([(RESTORE_BATCH, items)] if items else [])]
            for batch_id, items in batches:
                try:
                    self._conn.send((batch_id, items))
                except OSError:
                    break  # died again: the next round of _run restarts it
        log.warning("ingest.writer_restarted", worker=self.index, pid=self._proc.pid,
                    resent_batches=len(self._unanswered))

    def stop(self, timeout: float = 10.0) -> None:
        """Let the child commit what it was handed, then end it; killed at ``timeout`` (which also
        frees a sender blocked on a full pipe)."""
        self._stopping.set()
        deadline = time.monotonic() + timeout
        if self._lock.acquire(timeout=timeout):
            try:
                self._conn.send(None)
            except OSError:
                pass
            finally:
                self._lock.release()
        if self._thread is not None:
            self._thread.join(max(0.0, deadline - time.monotonic()))
        self._proc.join(max(0.0, deadline - time.monotonic()))  # its pipe closes a moment before it ends
        if self._proc.is_alive():
            log.warning("ingest.writer_killed", worker=self.index, reason=f"not finished after {timeout:.1f} s")
            self._proc.kill()
        self._proc.join(5.0)
        self._conn.close()

    def alive(self) -> bool:
        """The link's thread runs and the writer is not dying again and again on the same batch
        (``MAX_DEATHS`` in a row: the watchdog then stops, the service is restarted and it shows)."""
        return self._thread is not None and self._thread.is_alive() and self.deaths_in_a_row < MAX_DEATHS


class WriterThread:
    """The writer on a thread of this process (same ``LedgerWriter``, same outcomes)."""

    def __init__(self, config: CentralConfig, engine: Engine, keys: KeyRing, index: int,
                 on_outcome: OnOutcome) -> None:
        self.index = index
        self.on_outcome = on_outcome
        self.restarts = 0
        self._stopping = threading.Event()
        self.writer = writer.LedgerWriter(config, engine, keys, index=index, abandon=self._stopping.is_set,
                                          notify=on_outcome)
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def start(self) -> WriterThread:
        self.writer.start()
        self._thread = threading.Thread(target=self._run, name=f"ingest-writer-{self.index}", daemon=True)
        self._thread.start()
        return self

    def submit(self, batch_id: int, items: list[tuple[str, bytes]]) -> None:
        self._queue.put((batch_id, items))

    def _run(self) -> None:
        try:
            while True:
                try:
                    item = self._queue.get(timeout=self.writer.scan_every_s)
                except queue.Empty:
                    item = ()
                if item is None:
                    return
                if item:
                    self.on_outcome(self.writer.process(*item))
                report = self.writer.scan()
                if report is not None:
                    self.on_outcome(report)
        except writer.Abandoned:
            return  # stopping while the database is down: not acknowledged, redelivered later
        finally:
            self.writer.close()

    def stop(self, timeout: float = 10.0) -> None:
        self._stopping.set()
        self._queue.put(None)
        if self._thread is not None:
            self._thread.join(timeout)

    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()
