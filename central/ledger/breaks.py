"""Shifts built from an event with a recorded chain break (docs/evidence.md, docs/ledger.md):
such a shift gets a CHAIN_BREAK flag (``wire.flags.REVIEW_FLAGS``: paid as computed, its statement
on hold until the office releases it, RULES.md P), so a forged or edited admit/exit is never paid
silently.

    breaks_of(conn, event_ids) -> {event_id: [(kind, gate_id, seq), ...]}   (chain_breaks id order)
    broken_events(conn) -> the same for every event a recorded break names (for close digests)
    missing_windows(conn) -> [(gate_id, seq_from, seq_to, after, before), ...]   (MISSING breaks)
    apply_chain_breaks(conn, shifts) -> shifts with a CHAIN_BREAK flag per broken admit/exit event,
        and per MISSING break of the shift's gate whose time window meets the shift

A MISSING break (``portgate evidence audit``: seqs deleted from the ledger) names no event of the
shift it may have shaped (a deleted exit leaves a MISSING_EXIT shift): its window runs from the
stored event of the gate just before the gap (``after``) to the one just after (``before``; either
``None`` when there is none), and every shift of that gate whose span (admit or period start to exit
or period end) meets the window is held for review.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterable

import datetime as dt

from sqlalchemy import bindparam, select
from sqlalchemy.engine import Connection

from central.ledger.schema import chain_breaks, events
from central.ledger.shifts import Flag, Shift
from portgate.timeutil import as_utc
from wire.flags import ShiftFlag

CHAIN_BREAK = ShiftFlag.CHAIN_BREAK

_BREAKS_QUERY = (
    select(chain_breaks.c.event_id, chain_breaks.c.kind, chain_breaks.c.gate_id, chain_breaks.c.seq_from)
    .where(chain_breaks.c.event_id.in_(bindparam("ids", expanding=True)), chain_breaks.c.kind != "MISSING")
    .order_by(chain_breaks.c.id))
_ALL_QUERY = (
    select(chain_breaks.c.event_id, chain_breaks.c.kind, chain_breaks.c.gate_id, chain_breaks.c.seq_from)
    .where(chain_breaks.c.event_id.is_not(None), chain_breaks.c.kind != "MISSING").order_by(chain_breaks.c.id))


def breaks_of(conn: Connection, event_ids: Iterable[str]) -> dict[str, list[tuple[str, str, int]]]:
    """The recorded chain breaks naming these events: ``{event_id: [(kind, gate_id, seq), ...]}``
    (each break once, in ``chain_breaks`` id order); events without any are absent. A MISSING
    break is not the named event's own (it names the event after the gap): ``missing_windows``."""
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


_MISSING_QUERY = (select(chain_breaks.c.gate_id, chain_breaks.c.seq_from, chain_breaks.c.seq_to)
                  .where(chain_breaks.c.kind == "MISSING").order_by(chain_breaks.c.id))

Window = tuple[str, int, int, "dt.datetime | None", "dt.datetime | None"]


def missing_breaks(conn: Connection) -> list[tuple[str, int, int]]:
    """Every recorded MISSING break as ``(gate_id, seq_from, seq_to)``, each once, in id order."""
    out: list[tuple[str, int, int]] = []
    for gate, a, b in conn.execute(_MISSING_QUERY):
        if (gate, int(a), int(b)) not in out:
            out.append((gate, int(a), int(b)))
    return out


def missing_windows(conn: Connection) -> list[Window]:
    """Each MISSING break with the ``occurred_at`` (aware UTC) of its gate's stored event just
    before and just after the gap (``None`` where none is stored)."""
    out = []
    for gate, a, b in missing_breaks(conn):
        after = conn.execute(select(events.c.occurred_at).where(events.c.gate_id == gate, events.c.seq < a)
                             .order_by(events.c.seq.desc()).limit(1)).scalar()
        before = conn.execute(select(events.c.occurred_at).where(events.c.gate_id == gate, events.c.seq > b)
                              .order_by(events.c.seq).limit(1)).scalar()
        out.append((gate, a, b, None if after is None else as_utc(after), None if before is None else as_utc(before)))
    return out


# a shift without its exit event may have lost it to the gap even when its period ended before the
# gap's window opens (the exit tapped late): its end is taken this much after its period's end
LOST_EXIT_REACH = dt.timedelta(hours=24)


def _meets(s: Shift, after: dt.datetime | None, before: dt.datetime | None) -> bool:
    """Whether ``s`` (at the gap's gate) may have had an event in the window ``after``..``before``:
    its span meets the window, a shift without an exit event reaching ``LOST_EXIT_REACH`` past its
    period's end (its exit may be the deleted event)."""
    start = s.admit_at or s.period_start
    end = s.exit_at or (s.period_end + LOST_EXIT_REACH)
    return (before is None or start <= before) and (after is None or end >= after)


def apply_chain_breaks(conn: Connection, found: list[Shift],
                       broken: dict[str, list[tuple[str, str, int]]] | None = None) -> list[Shift]:
    """``found`` with one CHAIN_BREAK flag on each shift whose admit or exit event has a recorded
    chain break (detail: ``<KIND> on the admit|exit event <id> (gate G seq N): review before
    paying``) or that a MISSING break's window meets (``MISSING seq A..B of gate G (deleted
    between <after> and <before>): ...``). Shifts without one are returned unchanged. ``broken``:
    ``broken_events(conn)`` already read in the caller's transaction (then no query is made for
    the events' own breaks)."""
    if not found:
        return found
    if broken is None:
        broken = breaks_of(conn, [e for s in found for e in (s.admit_event_id, s.exit_event_id) if e])
    windows = missing_windows(conn)
    if not broken and not windows:
        return found
    out = []
    for s in found:
        hits = [f"{kind} on the {side} event {eid} (gate {gate} seq {seq})"
                for side, eid in (("admit", s.admit_event_id), ("exit", s.exit_event_id))
                for kind, gate, seq in broken.get(eid or "", ())]
        hits += [f"MISSING seq {a}..{b} of gate {gate} (deleted between "
                 f"{after.isoformat() if after else 'its first event'} and "
                 f"{before.isoformat() if before else 'its last event'})"
                 for gate, a, b, after, before in windows if gate == s.gate_id and _meets(s, after, before)]
        if not hits:
            out.append(s)
            continue
        flag = Flag(CHAIN_BREAK, "; ".join(hits) + ": review before paying")
        out.append(dataclasses.replace(s, flags=s.flags + (flag,)))
    return out
