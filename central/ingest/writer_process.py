"""The ingest writer's child process (``[ingest] writer = "process"``, central/ingest/link.py):
its entry point ``run_process``, the thread reading the worker's batches ahead (``_read_ahead``),
the batches already waiting committed together (``coalesce``), the verdicts the signature helpers
computed ahead, and the exits (the worker gone, an unexpected error: ``_or_exit``). The writer it
drives is ``central.ingest.writer.LedgerWriter``.
"""

from __future__ import annotations

import os
import queue
import signal
import threading

import structlog

from central.config import CentralConfig
from central.db import make_engine
from central.ingest.keys import KeyRing
from central.ingest.verify import Verifier
from central.ingest.writer import Abandoned, LedgerWriter, Outcome
from portgate.gctune import tune_for_service
from portgate.logs import configure_logging

log = structlog.get_logger("central.ingest")


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _read_ahead(conn, verifier: Verifier | None = None) -> queue.SimpleQueue:
    """Read the worker's batches as soon as they come, on a thread, into a queue: the worker hands
    them over from paho's network thread, which must not wait for a commit to finish before its
    send completes. The queue holds at most what the broker's receive maximum lets the worker hold
    unacknowledged. Each batch goes in as ``(batch_id, items, pending)``: already prepared and its
    signatures handed to ``verifier`` (None: none). End of file or a broken pipe is put in the queue as the
    exception."""
    inbox: queue.SimpleQueue = queue.SimpleQueue()

    def read() -> None:
        try:
            while True:
                message = conn.recv()
                if message:
                    batch_id, items = message
                    message = (batch_id, items, verifier.submit(items) if verifier is not None else None)
                inbox.put(message)
                if message is None:
                    return
        except (EOFError, OSError) as exc:
            inbox.put(exc)

    threading.Thread(target=read, name="ingest-writer-reader", daemon=True).start()
    return inbox


MAX_COALESCED = 5000  # messages of batches already waiting for the writer committed together
_NOTHING = object()


def coalesce(first: tuple, inbox: queue.SimpleQueue, limit: int = MAX_COALESCED) -> tuple[list, object]:
    """``first`` (``(batch_id, items, pending)``) and the batches already waiting behind it in
    ``inbox``, while the total stays within ``limit`` messages: a writer that fell behind commits
    them in one transaction (the statements, progress, receipts and commit of a batch are paid
    once), in arrival order, and answers each batch. Returns ``(group, held)``: ``held`` is the
    entry taken that does not join (the stop ``None``, an exception, a batch that does not fit),
    or ``_NOTHING``."""
    group, n = [first], len(first[1])
    while True:
        try:
            nxt = inbox.get_nowait()
        except queue.Empty:
            return group, _NOTHING
        if not nxt or isinstance(nxt, BaseException) or n + len(nxt[1]) > limit:
            return group, nxt
        group.append(nxt)
        n += len(nxt[1])


def _or_exit(work, *args):
    """Run the writer's ``work``; an unexpected error is logged with its traceback and ends the
    process with status 1 (the link logs the death and starts a new writer). Without this, an
    ``OSError`` from the work (a file it reads) would pass for the worker's pipe closing: a silent
    exit with status 0."""
    try:
        return work(*args)
    except Abandoned:
        raise
    except Exception:
        log.exception("ingest.writer_failed")
        raise SystemExit(1) from None


def run_process(conn, config: CentralConfig, index: int, worker_pid: int) -> None:
    """Entry point of the writer child process (``multiprocessing``, central/ingest/link.py).

    Reads ``(batch_id, items)`` from ``conn`` (read ahead on a thread) and answers each with an
    ``Outcome`` once committed (batches already waiting are committed together: ``coalesce``; the
    last one's outcome carries the counts); between batches, runs the periodic gap scan and reports it (``Outcome(batch_id=None)``).
    ``None`` from the worker: finish and exit. The worker gone (end of file on ``conn``, or process
    ``worker_pid`` no longer there while a commit is being retried): exit without acknowledging
    anything. SIGINT and SIGTERM are ignored: the
    worker decides when its writer stops (after the batches already handed over).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    configure_logging(json=config.log_json, level=config.log_level,  # every thread of this process
                      fields={"service": "central", "port": config.port, "worker": index, "role": "writer"})
    engine = make_engine(config.database_url, existing_file=True)  # the ledger there is: never a new empty file
    keys = KeyRing(config.keys_dir)
    verifier = Verifier(keys, config.port, config.ingest.verify_processes).start()
    writer = LedgerWriter(config, engine, keys, index=index,
                          abandon=lambda: _gone(worker_pid), notify=conn.send).start()
    tune_for_service(inherited=True)  # forked from the forkserver: its heap is not walked
    inbox = _read_ahead(conn, verifier)
    try:
        _serve(conn, inbox, writer, verifier)
    except (EOFError, OSError, Abandoned):
        pass  # the worker is gone: nothing more can be acknowledged
    finally:
        writer.close()
        verifier.close()
        engine.dispose()


def _serve(conn, inbox: queue.SimpleQueue, writer: LedgerWriter, verifier: Verifier) -> None:
    """``run_process``'s loop: each batch (with those waiting behind it) committed and answered,
    then the periodic scan, until the worker's ``None``. Raises what the reader put in the queue
    (``EOFError``, ``OSError``: the worker is gone) and ``Abandoned``."""
    held = _NOTHING
    while True:
        message, held = _next(inbox, held, writer.scan_every_s)
        if message is None:
            return
        if isinstance(message, BaseException):
            raise message
        if message:
            group, held = coalesce(message, inbox)
            _commit_group(conn, writer, verifier, group)
        report = _or_exit(writer.scan)
        if report is not None:
            conn.send(report)


def _next(inbox: queue.SimpleQueue, held, timeout_s: float) -> tuple[object, object]:
    """``(message, held)``: the entry ``coalesce`` held back if any, else the next one within
    ``timeout_s`` (``()`` when none came: time for the scan)."""
    if held is not _NOTHING:
        return held, _NOTHING
    try:
        return inbox.get(timeout=timeout_s), _NOTHING
    except queue.Empty:
        return (), _NOTHING


def _commit_group(conn, writer: LedgerWriter, verifier: Verifier, group: list) -> None:
    """Commit a ``coalesce`` group in one transaction and answer each of its batches: the earlier
    ones with an empty ``Outcome``, the last one with the counts."""
    items = [item for _id, part, _pending in group for item in part]
    verified, decoded = _verdicts(verifier, group)
    out = _or_exit(writer.process, group[-1][0], items, verified, decoded)
    for batch_id, _part, _pending in group[:-1]:  # committed in the same transaction
        conn.send(Outcome(batch_id, {}, False, out.open_gaps))
    conn.send(out)


def _verdicts(verifier: Verifier, group: list) -> tuple[list | None, list | None]:
    """``(verified, decoded)`` of the group's items, one each in order, from the signature helpers'
    answers (``Verifier.verdicts``; ``None`` for a batch they did not take), or ``(None, None)``
    when they took none."""
    parts = [(verifier.verdicts(pending), len(part)) for _id, part, pending in group]
    if not any(v is not None for v, _n in parts):
        return None, None
    verified = [x for v, n in parts for x in (v[0] if v is not None else [None] * n)]
    decoded = [x for v, n in parts for x in (v[1] if v is not None else [None] * n)]
    return verified, decoded
