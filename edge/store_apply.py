"""The state the gate derives from its own journal, in the gate's local store (``edge.store``):
open shifts at this gate, last shift ends, pending flags, confiscations and the inspector session,
applied one journal event at a time (``apply``) or in the gate loop's group commit (``batch``,
``commit``, ``rollback``), with the journal seq applied (``applied_seq``) in the same transaction.
A mixin of ``edge.store.Store``: it works on the store's connection, lock and caches.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import heapq
import sqlite3
from collections.abc import Iterator
from typing import TYPE_CHECKING

import structlog

from edge.effects import Effects
from edge.store_rows import _iso, _open_row
from portgate.errors import StoreError

if TYPE_CHECKING:
    from edge.store import Store

log = structlog.get_logger("edge.store")

FLAG_TTL = dt.timedelta(hours=24)


class JournalApply:
    """The derived state of ``edge.store.Store`` (see there for the attributes it shares)."""

    # -- derived state (from the gate's own journal) -----------------------------------------------

    @property
    def applied_seq(self) -> int:
        """The last journal seq whose effects are in this store (boot replay starts after it)."""
        return self._applied_seq

    @contextlib.contextmanager
    def batch(self) -> Iterator[Store]:
        """Group apply for the gate loop's group commit (``edge.loop``): inside the block ``apply``
        changes the caches at once (and keeps the shift ends it records), so the next read of
        the batch is decided on them, and queues its statements; ``commit`` writes them all, with
        the last ``applied_seq``, in one transaction; ``rollback`` (or leaving the block without
        ``commit``) undoes them and reloads the caches from the file. Holds the store's lock for
        the whole block (the downlink's writes wait; they would otherwise commit the batch's
        statements early, before the journal). Not re-entrant."""
        with self._lock:
            self._deferred = True
            try:
                yield self
            finally:
                self._deferred = False
                self._ahead = None
                if self._dirty:
                    self._undo()

    def commit(self) -> None:
        """Write and commit the statements ``apply`` queued inside ``batch`` (no fsync:
        ``synchronous=NORMAL``; the journal is the record, re-applied at boot). Raises
        ``StoreError`` if a statement or the commit failed: then nothing of the batch is in the file and the caches are reloaded
        from it (the caller re-applies the journal events after ``applied_seq``)."""
        with self._lock:
            if not self._dirty:
                return
            try:
                for sql, params in self._queued:
                    self._db.execute(sql, params)
                self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('applied_seq', ?)",
                                  (str(self._applied_seq),))
                self._db.commit()
            except sqlite3.Error as exc:
                self._undo()
                raise StoreError(f"store apply failed: {exc}") from exc
            self._dirty = False
            self._queued.clear()
            self._ends.clear()

    def rollback(self) -> None:
        """Drop the statements ``apply`` queued inside ``batch`` and reload the caches (the journal
        did not commit their events)."""
        with self._lock:
            if self._dirty:
                self._undo()

    def _undo(self) -> None:
        try:
            self._db.rollback()
        except sqlite3.Error:
            log.exception("store_rollback_failed")
        self._dirty = False
        self._queued.clear()
        self._ends.clear()
        self._ahead = None
        try:
            self._load_caches()
        except sqlite3.Error:
            log.exception("store_reload_failed")

    def apply(self, seq: int, fx: Effects) -> None:
        """Apply the effects of journal event ``seq`` in one transaction together with
        ``applied_seq``; inside ``batch`` the transaction is the batch's (committed by ``commit``).
        Events at or below ``applied_seq`` are ignored (idempotent replay). Raises ``StoreError``
        outside a batch (nothing changed); inside one a fault is the batch's ``commit``'s."""
        if seq <= self._applied_seq:
            return

        stmts = self._statements(fx)  # queued or run at once on this hot path: it runs after every read
        with self._lock:
            if self._deferred:  # written by commit(); the caches below change now
                self._dirty = True
                self._queued.extend(stmts)
                if fx.close is not None:
                    self._ends[fx.close[0]] = fx.close[1]
            else:
                stmts.append(("INSERT OR REPLACE INTO meta (key, value) VALUES ('applied_seq', ?)",
                              (str(seq),)))
                try:
                    for sql, params in stmts:
                        self._db.execute(sql, params)
                    self._db.commit()
                except sqlite3.Error as exc:
                    self._db.rollback()
                    raise StoreError(f"store apply failed: {exc}") from exc
        self._apply_to_caches(fx)
        self._applied_seq = seq

    def _statements(self, fx: Effects) -> list[tuple[str, tuple]]:
        """The SQL statements (with their parameters) that write ``fx`` into the file."""
        stmts: list[tuple[str, tuple]] = []
        if fx.close is not None:
            reg, ended = fx.close
            stmts.append(("DELETE FROM open_shifts WHERE registration = ? AND origin = 'local'", (reg,)))
            stmts.append(("INSERT OR REPLACE INTO last_shift_end (registration, ended_at) VALUES (?, ?)",
                          (reg, _iso(ended))))
        if fx.open is not None:
            r = _open_row(fx.open, "local")
            stmts.append(("INSERT OR REPLACE INTO open_shifts (registration, origin, gate_id, ship,"
                          " admitted_at, dispatch) VALUES (?, ?, ?, ?, ?, ?)",
                          (r["registration"], r["origin"], r["gate_id"], r["ship"], r["admitted_at"],
                           r["dispatch"])))
        for uid, flag, at in fx.flags:
            stmts.append(("INSERT OR REPLACE INTO pending_flags (uid, flag, at) VALUES (?, ?, ?)",
                          (uid, flag, _iso(at))))
        if fx.flags:
            stmts.append(("DELETE FROM pending_flags WHERE at < ?", (_iso(fx.flags[0][2] - FLAG_TTL),)))
        if fx.block is not None:
            stmts.append(("DELETE FROM pending_flags WHERE uid = ?", (fx.block[0],)))
            stmts.append(("INSERT OR REPLACE INTO blocklist (uid, reason, at) VALUES (?, ?, ?)",
                          (fx.block[0], fx.block[1], _iso(fx.block[2]))))
        if fx.inspector is not None or fx.end_inspector:
            stmts.append(("DELETE FROM inspector_session", ()))
        if fx.inspector is not None:
            i = fx.inspector
            stmts.append(("INSERT INTO inspector_session (id, boot_id, inspector_uid,"
                          " inspector_registration, until_mono_ns) VALUES (1, ?, ?, ?, ?)",
                          (self.boot_id, i.inspector_uid, i.inspector_registration, i.until_mono_ns)))
        return stmts

    def _apply_to_caches(self, fx: Effects) -> None:
        """Change the in-memory mirrors (open shifts, pending flags, confiscations, inspector
        session) as ``fx`` says; the next read is decided on them."""
        if fx.close is not None:
            self._open.pop((fx.close[0], "local"), None)
        if fx.open is not None:
            self._open[(fx.open.registration, "local")] = fx.open
        for uid, flag, at in fx.flags:
            self._flags[uid][flag] = at
            heapq.heappush(self._flag_heap, (at, uid, flag))
        if fx.flags:
            self._expire_flags(fx.flags[0][2] - FLAG_TTL)
        if fx.block is not None:
            self._blocked[fx.block[0]] = fx.block[1]
            self._flags.pop(fx.block[0], None)  # the confiscation consumed the pending flags
        if fx.end_inspector:
            self._inspector = None
        if fx.inspector is not None:
            self._inspector = fx.inspector

    def _expire_flags(self, cutoff: dt.datetime) -> None:
        """Drop the cached pending flags raised before ``cutoff`` (aware UTC): pops the heap while
        its oldest entry is older, so a tap costs O(expired · log n), not a walk of every flag."""
        heap = self._flag_heap
        while heap and heap[0][0] < cutoff:
            _at, uid, flag = heapq.heappop(heap)
            flags = self._flags.get(uid)
            if flags is None:
                continue
            current = flags.get(flag)
            if current is not None and current < cutoff:
                del flags[flag]
                if not flags:
                    del self._flags[uid]
