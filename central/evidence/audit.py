"""The audit of every stored signed event's own signature (docs/evidence.md "What ingest checks").

Ingest verifies one signature per run of a gate's linked events (``central.ingest.runs``): the
content of an event inside a run is proven by its successor's signature, its own ``sig`` bytes
are not checked there. ``audit`` checks them after commit, at low priority (``portgate evidence
audit`` runs at nice 19): each signed event of the ledger after ledger id ``after_id`` whose
signature holds for none of its gate's registered keys is a ``chain_breaks`` row
``BAD_SIGNATURE`` (``detail`` starts ``CHAIN_BREAK BAD_SIGNATURE gate G seq N: audit: ``), once per
event (an audit run again records nothing new).

``bad_signatures`` is the pure part: stored rows and key lists in, the breaks out.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Iterable, Sequence

from sqlalchemy import and_, select
from sqlalchemy.engine import Engine

from central.ingest.check import PREFIX, BreakRow
from central.ingest.keys import KeyRing, KeyUnreadable
from central.ledger.schema import chain_breaks, events
from portgate.errors import BadInput
from wire import chain
from wire.events import decode

PAGE = 2000  # ledger rows read and checked per transaction


@dataclasses.dataclass(frozen=True, slots=True)
class AuditReport:
    checked: int  # signed events whose own signature was verified
    last_id: int  # the highest ledger id examined (pass it as ``after_id`` next time)
    recorded: list[BreakRow]  # new BAD_SIGNATURE breaks


def bad_signatures(rows: Iterable[tuple[str, bytes]], pubs_of: Callable[[str], Sequence]) -> tuple[int, list[BreakRow]]:
    """``(checked, breaks)`` for stored ``(gate_id, raw)`` rows: a signed event of a gate with
    registered keys (``pubs_of(gate)``, oldest first; empty: HMAC only, skipped) whose signature
    holds for none of them is a BAD_SIGNATURE break. Rows that do not decode are skipped (the
    ledger only holds decoded events)."""
    checked, out = 0, []
    for gate, raw in rows:
        pubs = pubs_of(gate)
        if not pubs:
            continue
        try:
            ev = decode(raw)
        except BadInput:
            continue
        if not ev.sig:
            continue
        checked += 1
        if not any(chain.signature_ok(ev, k) for k in reversed(pubs)):
            out.append(BreakRow(ev.gate_id, ev.seq, ev.seq, "BAD_SIGNATURE",
                                f"{PREFIX} BAD_SIGNATURE gate {ev.gate_id} seq {ev.seq}: audit: event "
                                f"{ev.event_id} is stored but its own signature does not verify with the "
                                "gate's registered key(s) (its sig bytes were replaced after signing)",
                                ev.event_id))
    return checked, out


def audit(engine: Engine, keys: KeyRing, *, after_id: int = 0, now: dt.datetime) -> AuditReport:
    """Check the own signature of every signed event with ledger id > ``after_id`` and record each
    failure not yet recorded as a ``chain_breaks`` row (one transaction per ``PAGE`` rows). A gate
    whose key file cannot be read is skipped (``KeyUnreadable`` is the ingest's to report)."""

    def pubs_of(gate: str) -> Sequence:
        try:
            return keys.public_keys(gate)
        except KeyUnreadable:
            return ()

    checked, last, recorded = 0, after_id, []
    while True:
        with engine.begin() as conn:
            rows = conn.execute(select(events.c.id, events.c.gate_id, events.c.raw)
                                .where(events.c.id > last).order_by(events.c.id).limit(PAGE)).all()
            if not rows:
                break
            n, found = bad_signatures(((r.gate_id, bytes(r.raw)) for r in rows), pubs_of)
            checked, last = checked + n, rows[-1].id
            for b in found:
                held = conn.execute(select(chain_breaks.c.id).where(and_(
                    chain_breaks.c.gate_id == b.gate_id, chain_breaks.c.seq_from == b.seq_from,
                    chain_breaks.c.kind == b.kind, chain_breaks.c.event_id == b.event_id))).first()
                if held is None:
                    conn.execute(chain_breaks.insert().values(
                        gate_id=b.gate_id, seq_from=b.seq_from, seq_to=b.seq_to, kind=b.kind,
                        detail=b.detail, event_id=b.event_id, recorded_at=now))
                    recorded.append(b)
    return AuditReport(checked, last, recorded)
