"""Step 2 of the incremental close (``central.ledger.reclose``): every worker's input digest, what
the worker's shifts are rebuilt from (the module docstring of ``reclose`` lists it).

``input_digests(conn, scope, month, date_from, date_to, beside=)`` reads what the digests cover
besides the month's events (the recorded chain breaks, the deleted events' breaks, the meal
corrections) and digests it per worker (``digest_inputs``, pure). With ``beside`` (a scope's first
close on PostgreSQL of at least ``BESIDE_MIN_WORKERS`` workers, ``reclose.rebuild_changed``) the
pure part runs in a forked child (``central.ledger.forked``) while the caller rebuilds the shifts:
nothing of the rebuild needs the digests (on a first close every worker is rebuilt), only the
write of the digests after the shifts, which waits for them (``_Inputs.digests``). The digests are
the same either way; a failed child's are computed in the caller.
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
from central.ledger.forked import Forked
from central.ledger.shifts import clock_flagged, place_times
from portgate.timeutil import as_utc

#: Part of every input digest: bump it when the rebuild (``reconstruct``, corrections) changes.
DIGEST_VERSION = b"shifts/2"
#: The fewest workers with events for which a first close digests its inputs in a forked child
#: (below it the fork costs about what it saves; the tests lower it to take that path).
BESIDE_MIN_WORKERS = 500
_encode = msgspec.msgpack.encode


@dataclasses.dataclass(slots=True)
class _Inputs:
    """The recorded chain breaks (by event id), whether any meal correction is stored at all,
    ``workers`` (the workers with an input digest) and every worker's input digest (``digests``:
    waits for the child computing them, if one is: ``pending``)."""

    _digests: dict[str, str] | None
    broken: dict
    any_fix: bool
    workers: set[str] = dataclasses.field(default_factory=set)
    pending: Forked | None = None

    @property
    def digests(self) -> dict[str, str]:
        """Every worker's input digest (the child's result, once it has ended)."""
        if self._digests is None:
            self._digests = self.pending.result()
            self.close()
        return self._digests

    def close(self) -> None:
        """Kill and reap the child computing the digests, if any (its result no longer wanted)."""
        if self.pending is not None:
            self.pending.close()


def input_digests(conn: Connection, scope: str, month, date_from: dt.date, date_to: dt.date, *,
                  beside: bool = False) -> _Inputs:
    """Every worker's input digest of ``month`` (``reclose._Month``; when ``month.full``, its
    events are placed here once, in ``month.placed``, for this step and the rebuild). ``beside``:
    digest them in a forked child when at least ``BESIDE_MIN_WORKERS`` workers have inputs (the
    caller closes the ``_Inputs`` once done with it: the child is killed if still running)."""
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
    args = (DIGEST_VERSION + scope.encode(), month.raws, month.taps, flagged, broken, missing, fixes)
    if beside:
        workers = {e.payload.registration for e in month.taps}
        workers.discard(None)
        workers.update(fixes)
        if len(workers) >= BESIDE_MIN_WORKERS:
            return _Inputs(None, broken, any_fix, workers, Forked(digest_inputs, *args))
    digests = digest_inputs(*args)
    return _Inputs(digests, broken, any_fix, set(digests))


def digest_inputs(head: bytes, raws: list[bytes], taps: list, flagged: dict, broken: dict,
                  missing: list, fixes: dict[str, list[tuple]]) -> dict[str, str]:
    """``{registration: input digest}`` (pure): each worker's raw events (``raws``, with their
    decoded ``taps`` in the same order), the clock placements ``flagged`` and the chain ``broken``
    of its events, the ``missing`` breaks at its gates and its meal corrections ``fixes``, after
    ``head`` (``DIGEST_VERSION`` and the scope); a worker with corrections only has theirs."""
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
