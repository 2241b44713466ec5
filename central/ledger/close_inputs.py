"""Step 2 of the incremental close (``central.ledger.reclose``): every worker's input digest, what
the worker's shifts are rebuilt from (the module docstring of ``reclose`` lists it).

``input_digests(conn, head, month, date_from, date_to, later=)`` places the month's events (a
first close: once, for the digests and the rebuild), reads what the digests cover besides the
events (the recorded chain breaks, the deleted events' breaks, the meal corrections) and digests
it per worker (``digest_inputs``, pure). With ``later`` (a scope's first close on PostgreSQL: every
worker is rebuilt whatever its digest, ``reclose.rebuild_changed``) the pure part is left for the
first read of ``_Inputs.digests``, which the close makes once its pay half writes (issue 32: off
the path to the close's first write; docs/performance.md, thirteenth pass). The digests are the
same either way.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
from collections import defaultdict

import msgspec
from sqlalchemy import select
from sqlalchemy.engine import Connection

from central.ledger.breaks import broken_events, missing_breaks
from central.ledger.corrections import shift_corrections
from central.ledger.shifts import clock_flagged, place_times
from portgate.timeutil import as_utc

_encode = msgspec.msgpack.encode


@dataclasses.dataclass(slots=True)
class _Inputs:
    """The recorded chain breaks (by event id), whether any meal correction is stored at all,
    ``workers`` (the workers with an input digest) and every worker's input digest (``digests``:
    computed from ``pending``, the arguments of ``digest_inputs``, on its first read when they
    were left for later)."""

    _digests: dict[str, str] | None
    broken: dict
    any_fix: bool
    workers: set[str]
    pending: tuple | None = None

    @property
    def digests(self) -> dict[str, str]:
        """Every worker's input digest (``{registration: SHA-256 hex}``)."""
        if self._digests is None:
            self._digests, self.pending = digest_inputs(*self.pending), None
        return self._digests


def input_digests(conn: Connection, head: bytes, month, date_from: dt.date, date_to: dt.date, *,
                  later: bool = False) -> _Inputs:
    """Every worker's input digest of ``month`` (``reclose._Month``; when ``month.full``, its
    events are placed here once, in ``month.placed``, for this step and the rebuild), each after
    ``head`` (``reclose.DIGEST_VERSION`` and the scope). ``later``: the digests are computed on the
    first read of ``digests``, not here (the placings and the reads are done here either way)."""
    # per worker: the raw events, and the placements that are not the event's own trusted time
    # (that one is already in its bytes)
    if month.full:  # every worker is rebuilt: place every event once, for this step and step 4
        month.placed = place_times(month.month)
        flagged = {eid: p for eid, p in month.placed.items() if p[1]}  # = ``clock_flagged(month.month)``
    else:
        flagged = clock_flagged(month.month)
    broken = broken_events(conn)  # a break recorded later (the audit) flags the shift: an input
    missing = missing_breaks(conn)  # a deleted event: an input of every worker tapping at its gate
    fixes, any_fix = _corrections(conn, date_from, date_to)
    args = (head, month.raws, month.taps, flagged, broken, missing, fixes)
    if later:
        workers = {e.payload.registration for e in month.taps}
        workers.discard(None)
        workers.update(fixes)
        return _Inputs(None, broken, any_fix, workers, args)
    digests = digest_inputs(*args)
    return _Inputs(digests, broken, any_fix, set(digests))


def digest_inputs(head: bytes, raws: list[bytes], taps: list, flagged: dict, broken: dict,
                  missing: list, fixes: dict[str, list[tuple]]) -> dict[str, str]:
    """``{registration: input digest}`` (pure): each worker's raw events (``raws``, with their
    decoded ``taps`` in the same order), the clock placements ``flagged`` and the chain ``broken``
    of its events, the ``missing`` breaks at its gates and its meal corrections ``fixes``, after
    ``head``; a worker with corrections only has theirs."""
    mine: dict[str, list[bytes]] = defaultdict(list)
    moved: dict[str, list[tuple[str, str]]] = defaultdict(list)
    gates_of: dict[str, set[str]] = defaultdict(set)
    for raw, e in zip(raws, taps):
        reg = e.payload.registration
        if reg is not None:
            mine[reg].append(raw)
            if missing:
                gates_of[reg].add(e.gate_id)
            if e.event_id in flagged:
                moved[reg].append((e.event_id, repr(flagged[e.event_id])))
            if broken and e.event_id in broken:
                moved[reg].append((e.event_id, repr(broken[e.event_id])))
    inputs = {}
    sha = hashlib.sha256
    for reg, own in mine.items():
        h = sha(head)
        own.sort()  # byte order: a set's digest whatever order the database returns it in
        h.update(b"\0".join(own))  # JSON holds no NUL
        if reg in moved:
            h.update(repr(sorted(moved[reg])).encode())
        if missing and (gone := [m for m in missing if m[0] in gates_of[reg]]):
            h.update(repr(sorted(gone)).encode())
        if reg in fixes:
            h.update(_encode(fixes[reg]))
        inputs[reg] = h.hexdigest()
    for reg, rows in fixes.items():  # corrections of a worker with no events in the window
        if reg not in inputs:
            inputs[reg] = hashlib.sha256(head + _encode(rows)).hexdigest()
    return inputs


def _corrections(conn: Connection, date_from: dt.date, date_to: dt.date) -> tuple[dict[str, list[tuple]], bool]:
    """``(corrections, any)``: the meal corrections (P6) of shifts of the dates, per registration,
    in id order: ``(id, shift_id, value, actor, recorded_at ISO UTC)``; ``any``: whether any meal
    correction is stored at all (of any dates)."""
    c = shift_corrections.c
    out: dict[str, list[tuple]] = defaultdict(list)
    lo, hi = date_from.isoformat(), date_to.isoformat()
    seen = False
    for cid, sid, value, actor, at in conn.execute(
            select(c.id, c.shift_id, c.value, c.actor, c.recorded_at)
            .where(c.field == "meal_worked").order_by(c.id)):
        seen = True
        parts = sid.rsplit("/", 3)
        if len(parts) == 4 and lo <= parts[2] <= hi:
            out[parts[0]].append((cid, sid, bool(value), actor, as_utc(at).isoformat()))
    return out, seen
