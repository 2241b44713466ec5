"""Checking incoming event messages and writing them to the ledger in one transaction per batch.

``check`` turns one MQTT message into an accepted ``Event`` or a ``DeadLetter`` with the reason:
not a gate topic / wrong port, malformed (not JSON, schema violation, unsupported schema version),
topic/gate mismatch (a gate publishing as another), unknown gate (no key), bad MAC.

``write_batch`` inserts accepted events with ``INSERT ... ON CONFLICT (event_id) DO NOTHING`` (the
SQLite and PostgreSQL dialect inserts), so a redelivered or replayed event is a no-op, inserts the
dead letters, and updates ``gate_progress`` (highest and contiguous sequence per gate). It returns
the rows actually inserted (id, event) so the caller can relay presence for new admits/exits.
"""

from __future__ import annotations

import dataclasses
import datetime as dt

import msgspec
from sqlalchemy import case, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

from central.ingest.keys import KeyRing
from central.ledger.schema import dead_letters, events, gate_progress
from portgate.errors import BadInput
from wire import SCHEMA_VERSION, topics
from wire.events import Event, decode, verify


@dataclasses.dataclass(frozen=True, slots=True)
class DeadLetter:
    topic: str
    reason: str
    raw: bytes
    gate_id: str | None = None
    event_id: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class Accepted:
    topic: str
    event: Event
    raw: bytes


@dataclasses.dataclass(frozen=True, slots=True)
class Gap:
    """Sequences ``seq_from..seq_to`` of ``gate_id`` are missing (more exist after them)."""

    gate_id: str
    seq_from: int
    seq_to: int


def check(topic: str, raw: bytes, port: str, keys: KeyRing) -> Accepted | DeadLetter:
    """Validate one uplink message. Never raises: anything wrong becomes a ``DeadLetter``."""
    try:
        t_port, t_gate, leaf = topics.parse_gate_topic(topic)
    except BadInput:
        return DeadLetter(topic, "not a gate events topic", raw)
    if t_port != port or leaf != "events":
        return DeadLetter(topic, f"topic is not an events topic of port {port}", raw, t_gate)
    try:
        event = decode(raw)
    except BadInput as exc:
        return DeadLetter(topic, f"malformed: {exc.reason}"[:2000], raw, t_gate)
    if event.schema != SCHEMA_VERSION:
        return DeadLetter(topic, f"malformed: unsupported schema {event.schema}", raw, t_gate, event.event_id)
    if event.gate_id != t_gate or event.port != port:
        return DeadLetter(
            topic, f"topic/gate mismatch: event of {event.port}/{event.gate_id} on {topic}", raw, t_gate,
            event.event_id,
        )
    key = keys.key(event.gate_id)
    if key is None:
        return DeadLetter(topic, f"unknown gate {event.gate_id}", raw, event.gate_id, event.event_id)
    if not verify(event, key):
        return DeadLetter(topic, "bad MAC", raw, event.gate_id, event.event_id)
    return Accepted(topic, event, raw)


def _insert(conn: Connection, table):
    return (postgresql if conn.dialect.name == "postgresql" else sqlite).insert(table)


def _row(a: Accepted, received_at: dt.datetime) -> dict:
    e = a.event
    payload = e.payload
    return {
        "event_id": e.event_id,
        "port": e.port,
        "gate_id": e.gate_id,
        "boot_id": e.boot_id,
        "seq": e.seq,
        "occurred_at": e.occurred_at,
        "clock_trusted": e.clock_trusted,
        "mono_ns": e.mono_ns,
        "type": type(payload).__struct_config__.tag,
        "registration": getattr(payload, "registration", None),
        "decision": getattr(payload, "decision", None),
        "payload": msgspec.to_builtins(payload),
        "mac": e.mac,
        "raw": a.raw,
        "received_at": received_at,
    }


def write_batch(
    conn: Connection, accepted: list[Accepted], rejected: list[DeadLetter], received_at: dt.datetime
) -> list[tuple[int, Event]]:
    """Insert a batch inside the caller's transaction; return (ledger id, event) of new rows only.

    Duplicates inside the batch and against the ledger are skipped (first copy wins).
    """
    inserted: list[tuple[int, Event]] = []
    unique: dict[str, Accepted] = {}
    for a in accepted:
        unique.setdefault(a.event.event_id, a)
    if unique:
        by_id = {eid: a.event for eid, a in unique.items()}
        stmt = (
            _insert(conn, events)
            .values([_row(a, received_at) for a in unique.values()])
            .on_conflict_do_nothing(index_elements=["event_id"])
            .returning(events.c.id, events.c.event_id)
        )
        for row_id, event_id in conn.execute(stmt):
            inserted.append((row_id, by_id[event_id]))
    if rejected:
        conn.execute(
            dead_letters.insert(),
            [
                {
                    "received_at": received_at, "topic": d.topic, "reason": d.reason,
                    "gate_id": d.gate_id, "event_id": d.event_id, "raw": d.raw,
                }
                for d in rejected
            ],
        )
    inserted.sort(key=lambda r: r[0])
    return inserted


def update_progress(conn: Connection, gate_ids, now: dt.datetime, *, walk: int = 5000) -> list[Gap]:
    """Advance ``gate_progress`` for ``gate_ids`` from the ledger; return the gaps found.

    ``contiguous_seq`` = all of 1..n are in the ledger; ``highest_seq`` = the largest seen. A gap
    is the first run of missing sequences after ``contiguous_seq``.
    """
    gaps: list[Gap] = []
    for gate_id in sorted(set(gate_ids)):
        current = conn.execute(
            select(gate_progress.c.contiguous_seq).where(gate_progress.c.gate_id == gate_id)
        ).scalar()
        contiguous = current or 0
        seqs = conn.execute(
            select(events.c.seq)
            .where(events.c.gate_id == gate_id, events.c.seq > contiguous)
            .order_by(events.c.seq)
            .limit(walk)
        ).scalars().all()
        next_present = None
        for seq in seqs:
            if seq == contiguous + 1:
                contiguous = seq
            elif seq > contiguous + 1:
                next_present = seq
                break
        highest = conn.execute(select(func.max(events.c.seq)).where(events.c.gate_id == gate_id)).scalar() or 0
        ins = _insert(conn, gate_progress).values(
            gate_id=gate_id, highest_seq=highest, contiguous_seq=contiguous, updated_at=now
        )
        conn.execute(
            ins.on_conflict_do_update(
                index_elements=["gate_id"],
                set_={
                    "highest_seq": case(
                        (ins.excluded.highest_seq > gate_progress.c.highest_seq, ins.excluded.highest_seq),
                        else_=gate_progress.c.highest_seq,
                    ),
                    "contiguous_seq": case(
                        (ins.excluded.contiguous_seq > gate_progress.c.contiguous_seq, ins.excluded.contiguous_seq),
                        else_=gate_progress.c.contiguous_seq,
                    ),
                    "updated_at": ins.excluded.updated_at,
                },
            )
        )
        if next_present is not None:
            gaps.append(Gap(gate_id, contiguous + 1, next_present - 1))
    return gaps


def open_gaps(conn: Connection) -> list[str]:
    """Gates whose highest sequence is beyond their contiguous one (a gap may be open)."""
    return list(
        conn.execute(
            select(gate_progress.c.gate_id).where(gate_progress.c.highest_seq > gate_progress.c.contiguous_seq)
        ).scalars()
    )
