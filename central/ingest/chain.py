"""The office's check of each gate's signed chain on ingest (wire/chain.py, docs/evidence.md).

``signature_problem`` (in ``ledger.check``, per message): for a gate with registered public keys
(``<keys_dir>/<gate>.pub``) the event must carry a signature by one of them, else it becomes a dead
letter (raw bytes kept) whose reason starts ``CHAIN_BREAK <kind> gate <g> seq <n>``. A valid
``SIGNING_KEY`` rollover adds the key it names to the gate's file.

``record`` (in the batch's transaction): every newly inserted signed event gets an ``event_links``
row (its hash and ``prev``); each link between seq n-1 and n is checked once, when the second of the
two arrives (arrival order is free: priority events overtake), and a mismatch or a second event with
the same seq is a ``chain_breaks`` row (PREV_MISMATCH, FORKED); the chain dead letters of the batch
are ``chain_breaks`` rows too (BAD_SIGNATURE, UNSIGNED, UNKNOWN_KEY). Nothing is dropped: the event
stays in ``events`` or in ``dead_letters`` and the break names the gate and the seq range.
"""

from __future__ import annotations

import dataclasses
import datetime as dt

import structlog
from sqlalchemy import and_, or_, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

from central.ledger.schema import chain_breaks, event_links
from wire import chain
from wire.events import Event

log = structlog.get_logger("central.ingest")

PREFIX = "CHAIN_BREAK"


def signature_problem(event: Event, keys) -> str | None:
    """None if the event's signature holds (or the gate has no registered key: HMAC only), else
    the dead letter reason ``CHAIN_BREAK <kind> gate <g> seq <n>: <detail>``. Raises
    ``KeyUnreadable`` from the key ring."""
    pubs = keys.public_keys(event.gate_id)
    if not pubs:
        return None
    where = f"{PREFIX} {{}} gate {event.gate_id} seq {event.seq}: "
    if not event.sig:
        return where.format("UNSIGNED") + "event without signature from a signing gate"
    for key in reversed(pubs):  # the newest key first
        if chain.signature_ok(event, key):
            new = chain.key_change(event)
            if new is not None and chain.fingerprint(new) != chain.fingerprint(key):
                keys.learn_public_key(event.gate_id, new)
            return None
    new = chain.key_change(event)
    if new is not None and chain.signature_ok(event, new):
        return where.format("UNKNOWN_KEY") + (
            f"the gate names key {chain.fingerprint(new)}, not signed by a registered key "
            "(register it with portgate central add-gate --public-key)")
    return where.format("BAD_SIGNATURE") + (
        "signature does not verify with the gate's registered key(s): edited, or forged "
        "without the gate's private key")


@dataclasses.dataclass(frozen=True, slots=True)
class BreakRow:
    gate_id: str
    seq_from: int
    seq_to: int
    kind: str
    detail: str
    event_id: str | None


def _insert(conn: Connection, table):
    return (postgresql if conn.dialect.name == "postgresql" else sqlite).insert(table)


def record(conn: Connection, inserted: list[tuple[int, Event]], rejected, now: dt.datetime) -> list[BreakRow]:
    """Inside the batch's transaction: link rows for the new signed events, and the breaks found
    (also logged as ``CHAIN_BREAK`` warnings). Returns the breaks recorded."""
    found: list[BreakRow] = []
    for d in rejected:
        if d.reason.startswith(PREFIX) and d.gate_id is not None and d.seq is not None:
            kind = d.reason.split()[1]
            found.append(BreakRow(d.gate_id, d.seq, d.seq, kind, d.reason[:2000], d.event_id))
    signed = [e for _row, e in inserted if e.sig]
    if signed:
        rows = {(e.gate_id, e.seq): {
            "gate_id": e.gate_id, "seq": e.seq, "event_id": e.event_id, "hash": chain.event_hash(e),
            "prev": e.prev, "segment": chain.segment_loss(e) is not None} for e in signed}
        found += _links(conn, rows)
    if found:
        conn.execute(chain_breaks.insert(), [{
            "gate_id": b.gate_id, "seq_from": b.seq_from, "seq_to": b.seq_to, "kind": b.kind,
            "detail": b.detail, "event_id": b.event_id, "recorded_at": now} for b in found])
        for b in found:
            log.warning("CHAIN_BREAK", kind=b.kind, gate_id=b.gate_id, seq_from=b.seq_from,
                        seq_to=b.seq_to, detail=b.detail)
    return found


def _links(conn: Connection, rows: dict[tuple[str, int], dict]) -> list[BreakRow]:
    gates: dict[str, list[int]] = {}
    for gate, seq in rows:
        gates.setdefault(gate, []).append(seq)
    cond = or_(*[and_(event_links.c.gate_id == g, event_links.c.seq.between(min(s) - 1, max(s) + 1))
                 for g, s in gates.items()])
    have = {(r["gate_id"], r["seq"]): dict(r) for r in conn.execute(select(event_links).where(cond)).mappings()}
    out: list[BreakRow] = []
    fresh = []
    for key, row in rows.items():
        old = have.get(key)
        if old is not None:
            if old["event_id"] != row["event_id"]:
                out.append(BreakRow(key[0], key[1], key[1], "FORKED",
                                    f"{PREFIX} FORKED gate {key[0]} seq {key[1]}: events {old['event_id']} "
                                    f"and {row['event_id']} both claim it", row["event_id"]))
            continue
        fresh.append(row)
    merged = {**have, **{(r["gate_id"], r["seq"]): r for r in fresh}}
    for row in fresh:
        g, s = row["gate_id"], row["seq"]
        before = merged.get((g, s - 1))
        if before is not None and not row["segment"] and before["hash"] != row["prev"]:
            out.append(_mismatch(g, s - 1, s, row["event_id"]))
        after = have.get((g, s + 1))  # a later seq that arrived first: its link is checked now
        if after is not None and not after["segment"] and after["prev"] != row["hash"]:
            out.append(_mismatch(g, s, s + 1, row["event_id"]))
    if fresh:
        conn.execute(_insert(conn, event_links).on_conflict_do_nothing(
            index_elements=["gate_id", "seq"]), fresh)  # executemany: compiled once
    return out


def _mismatch(gate: str, a: int, b: int, event_id: str) -> BreakRow:
    return BreakRow(gate, a, b, "PREV_MISMATCH",
                    f"{PREFIX} PREV_MISMATCH gate {gate} seq {a}..{b}: prev of seq {b} is not the hash "
                    f"of seq {a} (an event was replaced, or the gate's journal forked)", event_id)
