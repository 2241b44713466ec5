"""Shifts built from an event with a recorded chain break (docs/evidence.md, docs/ledger.md):
such a shift gets a CHAIN_BREAK flag (``wire.flags.REVIEW_FLAGS``: paid as computed, its statement
on hold until the office releases it, RULES.md P), so a forged or edited admit/exit is never paid
silently.

    breaks_of(conn, event_ids) -> {event_id: [(kind, gate_id, seq), ...]}   (chain_breaks id order)
    broken_events(conn) -> the same for every event a recorded break names (for close digests)
    apply_chain_breaks(conn, shifts) -> shifts with a CHAIN_BREAK flag per broken admit/exit event
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterable

from sqlalchemy import bindparam, select
from sqlalchemy.engine import Connection

from central.ledger.schema import chain_breaks
from central.ledger.shifts import Flag, Shift
from wire.flags import ShiftFlag

CHAIN_BREAK = ShiftFlag.CHAIN_BREAK

_BREAKS_QUERY = (
    select(chain_breaks.c.event_id, chain_breaks.c.kind, chain_breaks.c.gate_id, chain_breaks.c.seq_from)
    .where(chain_breaks.c.event_id.in_(bindparam("ids", expanding=True)))
    .order_by(chain_breaks.c.id))
_ALL_QUERY = (
    select(chain_breaks.c.event_id, chain_breaks.c.kind, chain_breaks.c.gate_id, chain_breaks.c.seq_from)
    .where(chain_breaks.c.event_id.is_not(None)).order_by(chain_breaks.c.id))


def breaks_of(conn: Connection, event_ids: Iterable[str]) -> dict[str, list[tuple[str, str, int]]]:
    """The recorded chain breaks naming these events: ``{event_id: [(kind, gate_id, seq), ...]}``
    (each break once, in ``chain_breaks`` id order); events without any are absent."""
    ids = sorted(set(event_ids))
    out: dict[str, list[tuple[str, str, int]]] = defaultdict(list)
    for chunk in range(0, len(ids), 2000):
        for eid, kind, gate, seq in conn.execute(_BREAKS_QUERY, {"ids": ids[chunk:chunk + 2000]}):
            if (kind, gate, int(seq)) not in out[eid]:
                out[eid].append((kind, gate, int(seq)))
    return dict(out)


def broken_events(conn: Connection) -> dict[str, list[tuple[str, str, int]]]:
    """``breaks_of`` for every event some recorded chain break names (the table is small: one row
    per break, not per event), read in one query."""
    out: dict[str, list[tuple[str, str, int]]] = defaultdict(list)
    for eid, kind, gate, seq in conn.execute(_ALL_QUERY):
        if (kind, gate, int(seq)) not in out[eid]:
            out[eid].append((kind, gate, int(seq)))
    return dict(out)


def apply_chain_breaks(conn: Connection, found: list[Shift],
                       broken: dict[str, list[tuple[str, str, int]]] | None = None) -> list[Shift]:
    """``found`` with one CHAIN_BREAK flag on each shift whose admit or exit event has a recorded
    chain break (detail: ``<KIND> on the admit|exit event <id> (gate G seq N): review before
    paying``). Shifts without one are returned unchanged. ``broken``: ``broken_events(conn)``
    already read in the caller's transaction (then no query is made)."""
    if not found:
        return found
    if broken is None:
        broken = breaks_of(conn, [e for s in found for e in (s.admit_event_id, s.exit_event_id) if e])
    if not broken:
        return found
    out = []
    for s in found:
        hits = [f"{kind} on the {side} event {eid} (gate {gate} seq {seq})"
                for side, eid in (("admit", s.admit_event_id), ("exit", s.exit_event_id))
                for kind, gate, seq in broken.get(eid or "", ())]
        if not hits:
            out.append(s)
            continue
        flag = Flag(CHAIN_BREAK, "; ".join(hits) + ": review before paying")
        out.append(dataclasses.replace(s, flags=s.flags + (flag,)))
    return out
