"""Checking incoming event messages and keeping the ledger's account of each gate.

``check`` turns one MQTT message into an accepted ``Event`` or a ``DeadLetter`` with the reason
(the pure ``central.ingest.check.check`` with the gate's keys looked up in the ``KeyRing``).

``write_batch`` (``central.ingest.event_insert``, importable from here with ``dead_letter_row`` and
``DEAD_RAW_KEPT``) inserts the accepted events and the dead letters of a batch in one transaction,
a redelivered or replayed event a no-op, and returns the rows actually inserted (id, event) so the
caller can relay presence for new admits/exits. ``update_progress`` updates ``gate_progress``
(highest and contiguous sequence per
gate), in memory from the batch when it simply continues the gate's run, and returns every missing
range of a gate (bounded per round) so one replay round can fill them all. ``record_losses`` turns a
gate's ``STORE_QUARANTINED`` alert (``resumed_at=N lost_after=M``) into a ``gate_losses`` row
``M+1..N-1``: those sequences count as accounted for and are never asked for again.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Sequence

import structlog
from sqlalchemy import func, select
from sqlalchemy.engine import Connection

from central.ingest.check import (  # noqa: F401 - MAX_MESSAGE_BYTES and oversize are the store's names too
    MAX_MESSAGE_BYTES, UNKNOWN, Accepted, DeadLetter, GateKeys, oversize, topic_gate)
from central.ingest.check import check as pure_check
from central.ingest.event_insert import (  # noqa: F401 - write_batch and its dead letters: the store's names too
    DEAD_RAW_KEPT, _insert, _sqlite_datetime, dead_letter_row, write_batch)
from central.ingest.keys import KeyRing, KeyUnreadable
from central.ingest.runs import check_all, finish_batch, prepare_batch, raw_keys
from central.ingest.repair import MAX_GAP_EVENTS, MAX_GAP_RANGES, scan_sequences
from central.ledger.schema import events, gate_losses, gate_progress
from wire.events import AlertPayload, Event

log = structlog.get_logger("central.ingest")



@dataclasses.dataclass(frozen=True, slots=True)
class Gap:
    """Sequences ``seq_from..seq_to`` of ``gate_id`` are missing (more exist after them)."""

    gate_id: str
    seq_from: int
    seq_to: int


def check(topic: str, raw: bytes, port: str, keys: KeyRing,
          verified: tuple[Sequence, Sequence[bool], str] | None = None,
          memo: dict[str, GateKeys] | None = None, decoded: Event | None = None) -> Accepted | DeadLetter:
    """Validate one uplink message (``central.ingest.check.check``) with the keys ``keys`` holds
    for the topic's gate; register the new key of a valid ``SIGNING_KEY`` rollover. Never raises:
    anything wrong becomes a ``DeadLetter``. ``verified``: ``(key list, verdicts, digest)`` computed ahead
    (central/ingest/verify.py), or ``(key list, verdicts, digest, canonical bytes)`` (``batch_verdicts``),
    used only if the gate's key list is still that very list (the canonical bytes, of the very
    ``decoded`` event, whatever the list).
    ``memo``: the keys already looked up for this batch (gate -> ``GateKeys``; a rollover drops
    the gate's entry, so the batch's next events see the new key). ``decoded``: ``decode(raw)``
    already done (``batch_verdicts``)."""
    t_gate = topic_gate(topic, port)
    if not isinstance(t_gate, str):
        known = UNKNOWN
    elif memo is None:
        known = gate_keys(keys, t_gate)
    else:
        known = memo.get(t_gate)
        if known is None:
            known = memo[t_gate] = gate_keys(keys, t_gate)
    if verified is None:
        pre = digest = body = None
    else:
        pre = verified[1] if verified[0] is known.public else None
        digest = verified[2]
        body = verified[3] if len(verified) > 3 and decoded is not None else None
    verdict = pure_check(topic, raw, port, known, pre, decoded, digest, body)
    if isinstance(verdict, Accepted) and verdict.learned is not None:
        keys.learn_public_key(verdict.event.gate_id, verdict.learned)
        if memo is not None:
            memo.pop(verdict.event.gate_id, None)
    return verdict


def batch_verdicts(items: Sequence[tuple[str, bytes]], port: str, keys: KeyRing,
                   memo: dict[str, GateKeys]) -> tuple[list, list[Event | None]]:
    """The writer's own verification of a batch of ``(topic, raw)`` (no helper verdicts):
    ``(verified, decoded)``, one entry per item: ``(key list, verdicts, digest, canonical bytes)`` for
    ``check`` (chain-covered, ``central.ingest.runs.batch_chain``) or None, and the decoded event (None: not decoded
    here, ``check`` decodes it). Only events topics of gates with registered public keys are decoded;
    ``memo`` is filled as ``check`` fills it."""
    raw_of: dict[int, list[bytes]] = {}
    prepared = prepare_batch(items, lambda topic: _topic_keys(topic, port, keys, memo, raw_of))
    return finish_batch(prepared, check_all(prepared.tail_checks())), prepared.decoded


def _topic_keys(topic: str, port: str, keys: KeyRing, memo: dict[str, GateKeys],
                raw_of: dict[int, list[bytes]]) -> tuple:
    """``batch_verdicts``: ``(key list, raw keys newest first)`` of the gate of an events topic with
    registered public keys (``memo`` filled as ``check`` fills it), else ``()``."""
    t_gate = topic_gate(topic, port)
    if not isinstance(t_gate, str):
        return ()
    known = memo.get(t_gate)
    if known is None:
        known = memo[t_gate] = gate_keys(keys, t_gate)
    if not known.public:
        return ()
    held = raw_of.get(id(known.public))
    if held is None:
        held = raw_of[id(known.public)] = raw_keys(known.public)
    return known.public, held


def gate_keys(keys: KeyRing, gate_id: str, *, public: bool = True) -> GateKeys:
    """What ``keys`` holds for ``gate_id`` (file errors as values, for the pure check); without
    ``public``, its HMAC key only."""
    hmac_error = public_error = None
    try:
        key = keys.key(gate_id)
    except KeyUnreadable as exc:
        key, hmac_error = None, str(exc)
    pubs: Sequence = ()
    if key is not None and public:
        try:
            pubs = keys.public_keys(gate_id)
        except KeyUnreadable as exc:
            public_error = str(exc)
    return GateKeys(key, pubs, hmac_error, public_error)


def update_progress(
    conn: Connection,
    gate_ids,
    now: dt.datetime,
    *,
    seen: dict[str, list[int]] | None = None,
    walk: int = 5000,
    max_ranges: int = MAX_GAP_RANGES,
    max_events: int = MAX_GAP_EVENTS,
) -> list[Gap]:
    """Advance ``gate_progress`` for ``gate_ids`` from the ledger; return the gaps found.

    ``contiguous_seq`` = every one of 1..n is in the ledger or inside a recorded ``gate_losses``
    range; ``highest_seq`` = the largest seen. The gaps are the runs of missing sequences after
    ``contiguous_seq`` among the next ``walk`` ledger rows of the gate, at most ``max_ranges`` runs
    and ``max_events`` sequences per gate (the last run is cut to fit), lost ranges left out; the
    caller asks the gate for all of them in one round. Rows beyond the ``walk`` window are found in
    a later round.

    ``seen`` (gate -> sequences of this batch, all now in the ledger) lets the common case skip the
    ledger queries: when the batch continues the gate's contiguous run and nothing beyond it is
    known (``highest_seq``), progress is computed in memory. Otherwise (a hole in the batch, rows
    beyond the batch, a gate without progress row) the ledger is walked, so N workers and
    out-of-order arrival give the same result.
    """
    gaps: list[Gap] = []
    gate_ids = sorted(set(gate_ids))
    if not gate_ids:
        return gaps
    seen = seen or {}
    mark = "%s" if conn.dialect.paramstyle in ("format", "pyformat") else "?"
    known = {
        g: (c, h)
        for g, c, h in conn.exec_driver_sql(_PROGRESS_READ.format(", ".join([mark] * len(gate_ids))),
                                            tuple(gate_ids))
    }
    updates = []
    for gate_id in gate_ids:
        current = known.get(gate_id)
        ahead = _in_memory(current, seen.get(gate_id))
        if ahead is not None:
            contiguous, highest, holes = *ahead, []
        else:
            contiguous, highest, holes = _walk(conn, gate_id, current[0] if current is not None else 0,
                                               walk, max_ranges, max_events)
        updates.append((gate_id, highest, contiguous))
        gaps += [Gap(gate_id, a, b) for a, b in holes]
    at = now if conn.dialect.name == "postgresql" else _sqlite_datetime(now)
    conn.exec_driver_sql(_PROGRESS_UPSERT.replace("?", mark), [(*u, at) for u in updates])
    return gaps


def _in_memory(current: tuple[int, int] | None, batch: list[int] | None) -> tuple[int, int] | None:
    """``(contiguous, highest)`` of a gate whose progress row is ``current`` after ``batch``, when
    the batch continues its contiguous run and nothing beyond it is known; None when the ledger
    must be walked (no progress row, no batch, a hole, rows beyond the run)."""
    if current is None or not batch:
        return None
    contiguous, highest = current
    for seq in sorted(batch):
        if seq == contiguous + 1:
            contiguous = seq
        elif seq > contiguous + 1:
            break
    top = max(highest, max(batch))
    return (contiguous, top) if top == contiguous else None


def _walk(conn: Connection, gate_id: str, contiguous: int, walk: int, max_ranges: int,
          max_events: int) -> tuple[int, int, list[tuple[int, int]]]:
    """``(contiguous, highest, holes)`` of a gate from the ledger: its next ``walk`` sequences after
    ``contiguous`` and its recorded losses (``scan_sequences``), and its highest sequence."""
    seqs = conn.execute(
        select(events.c.seq)
        .where(events.c.gate_id == gate_id, events.c.seq > contiguous)
        .order_by(events.c.seq)
        .limit(walk)
    ).scalars().all()
    losses = conn.execute(
        select(gate_losses.c.seq_from, gate_losses.c.seq_to)
        .where(gate_losses.c.gate_id == gate_id, gate_losses.c.seq_to > contiguous)
        .order_by(gate_losses.c.seq_from)
    ).all()
    window_end = seqs[-1] if len(seqs) >= walk else None
    contiguous, holes = scan_sequences(
        contiguous, seqs, losses, window_end=window_end, max_ranges=max_ranges, max_events=max_events
    )
    highest = conn.execute(select(func.max(events.c.seq)).where(events.c.gate_id == gate_id)).scalar() or 0
    return contiguous, highest, holes


# ``update_progress``'s two statements as driver SQL (SQLAlchemy builds, keys and compiles an
# upsert with two CASE expressions at every call: most of a batch's fixed cost); both databases.
_PROGRESS_READ = (f"SELECT gate_id, contiguous_seq, highest_seq FROM {gate_progress.name} "
                  "WHERE gate_id IN ({})")
_PROGRESS_UPSERT = (
    f"INSERT INTO {gate_progress.name} AS p (gate_id, highest_seq, contiguous_seq, updated_at) "
    "VALUES (?, ?, ?, ?) ON CONFLICT (gate_id) DO UPDATE SET "
    "highest_seq = CASE WHEN excluded.highest_seq > p.highest_seq THEN excluded.highest_seq ELSE p.highest_seq END, "
    "contiguous_seq = CASE WHEN excluded.contiguous_seq > p.contiguous_seq THEN excluded.contiguous_seq "
    "ELSE p.contiguous_seq END, updated_at = excluded.updated_at"
)


def open_gaps(conn: Connection) -> list[str]:
    """Gates whose highest sequence is beyond their contiguous one (a gap may be open)."""
    return list(
        conn.execute(
            select(gate_progress.c.gate_id).where(gate_progress.c.highest_seq > gate_progress.c.contiguous_seq)
        ).scalars()
    )


@dataclasses.dataclass(frozen=True, slots=True)
class Loss:
    """Sequences ``seq_from..seq_to`` of ``gate_id`` were lost with a quarantined journal."""

    gate_id: str
    seq_from: int
    seq_to: int
    event_id: str


_KV = re.compile(r"\b(resumed_at|lost_after)=(-?\d+)\b")


def parse_quarantine(detail: str) -> tuple[int, int] | None:
    """``(resumed_at, lost_after)`` from a journal ``STORE_QUARANTINED`` alert's detail, or None
    (a store quarantine alert, or a detail without both words)."""
    found = dict(_KV.findall(detail))
    if "resumed_at" not in found or "lost_after" not in found:
        return None
    return int(found["resumed_at"]), int(found["lost_after"])


def record_losses(conn: Connection, inserted: list[tuple[int, Event]], now: dt.datetime) -> list[Loss]:
    """Inside the batch's transaction, before ``update_progress``: for each newly inserted journal
    ``STORE_QUARANTINED`` alert (``resumed_at=N lost_after=M``), insert a ``gate_losses`` row
    ``max(M, 0)+1 .. N-1`` (idempotent by the alert's event id). Return the losses recorded.

    The range is only trusted up to the alert itself: ``N`` larger than the alert's own seq (the
    alert is the first event of the fresh journal, so ``N`` equals it) is cut to the alert's seq,
    so a bad detail can never hide sequences the gate has not reached. An empty range records
    nothing (``lost_after=-1 resumed_at=1``: nothing was lost). Docs: docs/gate.md "Quarantine".
    """
    losses: list[Loss] = []
    for _row, event in inserted:
        payload = event.payload
        if not isinstance(payload, AlertPayload) or payload.code != "STORE_QUARANTINED":
            continue
        parsed = parse_quarantine(payload.detail)
        if parsed is None:
            continue
        resumed_at, lost_after = parsed
        seq_from, seq_to = max(lost_after, 0) + 1, min(resumed_at, event.seq) - 1
        if seq_to < seq_from:
            continue
        result = conn.execute(
            _insert(conn, gate_losses)
            .values(
                gate_id=event.gate_id, seq_from=seq_from, seq_to=seq_to, event_id=event.event_id,
                detail=payload.detail[:2000], recorded_at=now,
            )
            .on_conflict_do_nothing(index_elements=["event_id"])
            .returning(gate_losses.c.id)
        )
        if result.first() is not None:  # (rowcount is not reliable with ON CONFLICT on every driver)
            losses.append(Loss(event.gate_id, seq_from, seq_to, event.event_id))
    return losses
