"""Bulk inserts streamed on a writer thread, in the caller's transaction (issue 32: the first month
close on PostgreSQL within 2x its write floor).

A first close's statements and lines go in by COPY, and the server inserts them and checks the
lines' foreign keys at the end of each COPY while the client waits. ``CopyWriter`` runs those
inserts (``central.ledger.bulk.insert_tuples`` of rows already bound) on a thread of its own, in
the order they were handed over, on the connection it is given, so that the caller plans the next
batch while the server takes in the last one. While the writer runs, only the writer uses the
connection: the caller hands batches over (``put``) and waits for the end (``close``) before it
uses the connection again (commit, rollback, another statement).

A failing insert stops the writer: the batches after it are dropped, ``put`` raises the error as
soon as it is known and ``close`` raises it (what ``insert_tuples`` raises: a ``SQLAlchemyError``
subclass, ``IntegrityError`` for a duplicate key); the caller's transaction is then to be rolled
back (nothing of it stored). Leaving the ``with`` block on an exception stops the writer after the
insert under way and waits for the thread (the caller's exception goes on; the writer's, if any,
is dropped).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Sequence

from sqlalchemy import Table
from sqlalchemy.engine import Connection

from central.ledger.bulk import insert_tuples

#: One insert: the table, its column names and the rows (values as ``bind_tuples`` gives them).
Batch = tuple[Table, Sequence[str], Sequence[tuple]]
_END = None  # queued by ``close``: no more batches


class CopyWriter:
    """``insert_tuples(conn, table, names, rows, bound=True)`` of each batch ``put``, in order, on
    a thread named ``name`` (see the module docstring)."""

    def __init__(self, conn: Connection, name: str = "copy-writer") -> None:
        self._conn = conn
        self._todo: queue.SimpleQueue = queue.SimpleQueue()
        self._error: BaseException | None = None
        self._stop = False
        self.batches = 0  # inserts done (rows sent and checked by the server)
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def __enter__(self) -> CopyWriter:
        return self

    def __exit__(self, exc_type, _exc, _tb) -> None:
        if exc_type is not None:  # the caller failed: stop after the insert under way
            self._stop = True
        self._todo.put(_END)
        self._thread.join()

    def put(self, *batches: Batch) -> None:
        """Hand ``batches`` over (inserted one after the other, after the earlier ones); raises the
        writer's error if an earlier insert failed."""
        self._raise()
        self._todo.put(batches)

    def close(self) -> None:
        """Wait until every batch handed over is inserted; raises the first insert's error, if one
        failed (the batches after it were not inserted)."""
        self._todo.put(_END)
        self._thread.join()
        self._raise()

    def _raise(self) -> None:
        if self._error is not None:
            raise self._error

    def _loop(self) -> None:
        while (batches := self._todo.get()) is not _END:
            if self._stop or self._error is not None:
                continue  # dropped: the transaction is rolled back
            try:
                for table, names, rows in batches:
                    insert_tuples(self._conn, table, names, rows, bound=True)
                self.batches += 1
            except BaseException as exc:  # raised in the caller's thread by put() or close()
                self._error = exc
