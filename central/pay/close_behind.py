"""The shift half of a month close in its own transaction, on a thread beside the pay half on
PostgreSQL (issue 32: the first close within 2x its write floor).

A first close writes its shifts and flags with COPY, and the server inserts them (indexes,
triggers) while the client waits; the pay half before it only needs the rebuilt shifts and their
output digests, which are computed before the first write. ``ShiftHalf`` runs the shift half's
transaction (``central.ledger.reclose.rebuild_changed``, through the function it is given) on a
worker thread; ``computed()`` returns once the shifts and digests are known (the ``ready`` call of
``rebuild_changed``, or its end when nothing is rebuilt; on a scope's first close the shifts only,
the ``early`` call: ``Rebuilt.partial``, whose digests follow in ``stored()``'s result), and the caller computes pay while the
server takes the shifts in; ``stored()`` waits for the transaction's commit, and the pay half calls
it once its statements and lines are written, before its own commit (``save_statements``'
``before_commit``): the server takes the statements in while it takes the shifts in, and the
statements are still committed only after the shifts they pay, as when the halves ran one after
the other (a failing shift half rolls them back). The shift half's writes wait for ``write()``
(the pay half about to write: ``save_statements``' ``before_write``; ``stored()`` and leaving the
``with`` block say it too): pay is computed and planned with the client to itself, then both
halves' rows stream to the server together, and the shifts go in while the server checks the
statement lines' foreign keys. The results are the same either way
(``tests/central/pay/test_close_same_on_both.py``).

On SQLite (one writer at a time; a connection kept to its thread) the shift half runs at once, in
the caller's thread, before ``computed()`` returns. The progress steps of the shift half are told
in the caller's thread, in order, by ``computed()`` and ``stored()``. A failure of the shift half
is raised by ``computed()`` or ``stored()``, a database one as ``central.db.store_failure``'s
``StoreError`` (``StoreConflict``: run again) with ``what`` and ``conflict``; leaving the ``with``
block waits for the thread (a failing pay half leaves the shift half to finish: its commit is a
state a failed close can leave, see ``central.pay.close``). Leaving it with an interrupt
(Ctrl-C, SIGTERM's ``Terminated``, raised in the caller's thread wherever it was, or a failure
with one in its chain: ``portgate.interrupts.interrupt_in``) stops the shift half before the
thread is joined: the thread raises ``Stopped`` at its next step, before writing and before its
commit, and the command it has on its connection is cancelled (psycopg's ``cancel_safe``, again
every ``CANCEL_EVERY_S`` until the thread ends: a cancel that lands between two commands is
ignored by the server), so its transaction rolls back and the close ends as interrupted at once,
not after the shift half's writes (issue 32, docs/performance.md, fourteenth pass). Only a commit
already under way when the interrupt came is kept (as before).
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_for

from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from central.db import store_failure
from central.ledger.reclose import Rebuilt
from portgate.interrupts import interrupt_in

#: ``run(conn, step, ready)``: the shift half on ``conn`` (its transaction), telling ``step`` each
#: step done and ``ready`` what it computed before writing (``rebuild_changed``'s arguments).
ShiftRun = Callable[[Connection, Callable[[str], None], Callable[[Rebuilt], None]], Rebuilt]
_WAKE = object()  # queued after either result is set: a waiting caller looks again
#: Seconds between two cancels of the shift half's command once the close is interrupted.
CANCEL_EVERY_S = 0.2


class Stopped(Exception):
    """Raised in the shift half's thread once the close is interrupted: its transaction rolls back."""


class ShiftHalf:
    """``run`` in a transaction of ``engine``: on a worker thread on PostgreSQL, at once
    elsewhere. ``told``: the progress callback (``close_month``'s ``progress``); ``what`` and
    ``conflict``: the words of ``store_failure`` for a database failure."""

    def __init__(self, engine: Engine, run: ShiftRun, told: Callable[[str], None], *, what: str,
                 conflict: str) -> None:
        self._run, self._told, self._what, self._conflict = run, told, what, conflict
        self._early: Future = Future()
        self._steps: queue.SimpleQueue = queue.SimpleQueue()
        self._pool: ThreadPoolExecutor | None = None
        self._then_told = False
        self._go = threading.Event()  # the shift half may write (thread only)
        self._stop = threading.Event()  # the close is interrupted: the shift half rolls back
        self._driver = None  # the shift half's psycopg connection while its transaction is open
        if engine.dialect.name == "postgresql":
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="close-shifts")
            self._final = self._pool.submit(self._transaction, engine, self._steps.put)
        else:
            self._final = Future()
            try:
                self._final.set_result(self._transaction(engine, told))
            except Exception as exc:  # raised to the caller by computed()
                self._final.set_exception(exc)
        self._final.add_done_callback(self._ended)

    def __enter__(self) -> ShiftHalf:
        return self

    def __exit__(self, _kind, exc, _tb) -> None:
        if interrupt_in(exc) is not None:  # interrupted (or a failure it caused): stop the shift half
            self._stop.set()
        self._go.set()  # a failing pay half: the shift half goes on to its end
        if self._pool is not None:
            if self._stop.is_set():
                self._cancel_until_ended()
            self._pool.shutdown(wait=True)

    def write(self) -> None:
        """Let the shift half write its rows (PostgreSQL: it waits for this once it has computed
        them; nothing elsewhere)."""
        self._go.set()

    def computed(self) -> Rebuilt:
        """The shift half's result as computed (its ``read`` may still grow: ``stored()`` has the
        final one), once known; the steps done so far told."""
        return self._wait(self._early)

    def stored(self, *then: str) -> Rebuilt:
        """The shift half's final result, once its transaction is committed; every step of it
        told, then (on the first call given them) the caller's steps ``then``, done meanwhile."""
        self._go.set()
        done = self._wait(self._final)
        if then and not self._then_told:
            self._then_told = True
            for name in then:
                self._told(name)
        return done

    def _transaction(self, engine: Engine, step: Callable[[str], None]) -> Rebuilt:
        def told(name: str) -> None:
            self._check()
            step(name)

        try:
            with engine.begin() as conn:
                if self._pool is not None:
                    self._driver = conn.connection.driver_connection
                done = self._run(conn, told, self._ready)
                self._check()  # not committed once interrupted
                return done
        finally:
            self._driver = None

    def _ready(self, computed: Rebuilt) -> None:
        self._early.set_result(computed)
        self._steps.put(_WAKE)
        if self._pool is not None:  # on the thread: write once the pay half does
            self._go.wait()
        self._check()

    def _check(self) -> None:
        if self._stop.is_set():
            raise Stopped("the close was interrupted")

    def _cancel_until_ended(self) -> None:
        """Cancel the shift half's command until its thread ends (``Stopped`` or the cancel's
        error: its transaction rolled back), every ``CANCEL_EVERY_S``."""
        while not self._final.done():
            driver = self._driver
            if driver is not None:
                with contextlib.suppress(Exception):  # closed meanwhile, or the server gone: ends anyway
                    driver.cancel_safe(timeout=5.0)
            wait_for([self._final], timeout=CANCEL_EVERY_S)

    def _ended(self, final: Future) -> None:
        if not self._early.done():  # nothing rebuilt, or a failure before: the end is the result
            if final.exception() is not None:
                self._early.set_exception(final.exception())
            else:
                self._early.set_result(final.result())
        self._steps.put(_WAKE)

    def _wait(self, future: Future) -> Rebuilt:
        while not future.done():
            self._tell(self._steps.get())
        while True:  # the steps queued before it was done
            try:
                self._tell(self._steps.get_nowait())
            except queue.Empty:
                break
        if self._final.done() and self._final.exception() is not None:
            future = self._final  # failed after its shifts were computed: no use going on
        try:
            return future.result()
        except SQLAlchemyError as exc:
            raise store_failure(self._what, exc, self._conflict) from exc

    def _tell(self, item) -> None:
        if item is not _WAKE:
            self._told(item)
