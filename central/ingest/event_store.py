"""Checking incoming event messages and writing them to the ledger in one transaction per batch.

``check`` turns one MQTT message into an accepted ``Event`` or a ``DeadLetter`` with the reason:
not a gate topic / wrong port, malformed (not JSON, schema violation, unsupported schema version),
topic/gate mismatch (a gate publishing as another), unknown gate (no key), bad MAC, and for a gate
with a registered signing key a bad or missing signature (``CHAIN_BREAK ...``, central.ingest.chain).

``write_batch`` inserts accepted events with one multi-row ``INSERT ... ON CONFLICT (event_id) DO
NOTHING RETURNING`` per 1000 events, so a redelivered or replayed event is a no-op, and inserts the
dead letters. It returns the rows actually inserted (id, event) so the caller can relay presence for
new admits/exits. ``update_progress`` updates ``gate_progress`` (highest and contiguous sequence per
gate), in memory from the batch when it simply continues the gate's run, and returns every missing
range of a gate (bounded per round) so one replay round can fill them all. ``record_losses`` turns a
gate's ``STORE_QUARANTINED`` alert (``resumed_at=N lost_after=M``) into a ``gate_losses`` row
``M+1..N-1``: those sequences count as accounted for and are never asked for again.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import hmac
import itertools
import re

import msgspec
import structlog
from sqlalchemy import case, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

from central.ingest import chain as chain_check
from central.ingest.keys import KeyRing, KeyUnreadable
from central.ledger.schema import dead_letters, events, gate_losses, gate_progress
from portgate.errors import BadInput
from wire import SCHEMA_VERSION, topics
from wire.events import AlertPayload, Event, canonical_bytes, decode

log = structlog.get_logger("central.ingest")

MAX_MESSAGE_BYTES = 131_072  # an uplink message larger than this is refused before decoding
DEAD_RAW_KEPT = 4096  # bytes of a dead letter's message stored; the rest is named by size and SHA-256
MAX_GAP_RANGES = 50  # missing ranges returned per gate per round (one ReplayCommand each)
MAX_GAP_EVENTS = 10_000  # missing sequences returned per gate per round, in total


@dataclasses.dataclass(frozen=True, slots=True)
class DeadLetter:
    topic: str
    reason: str
    raw: bytes
    gate_id: str | None = None
    event_id: str | None = None
    seq: int | None = None  # set on a chain break (central.ingest.chain)


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


def oversize(topic: str, raw: bytes, gate_id: str | None = None) -> DeadLetter | None:
    """A ``DeadLetter`` if ``raw`` is longer than ``MAX_MESSAGE_BYTES`` (never decoded), else None."""
    if len(raw) <= MAX_MESSAGE_BYTES:
        return None
    return DeadLetter(topic, f"oversize: {len(raw)} bytes, more than {MAX_MESSAGE_BYTES}", raw, gate_id)


def check(topic: str, raw: bytes, port: str, keys: KeyRing) -> Accepted | DeadLetter:
    """Validate one uplink message. Never raises: anything wrong becomes a ``DeadLetter``. A message
    over ``MAX_MESSAGE_BYTES`` is refused before it is decoded."""
    t_gate = _event_topics.get((topic, port))
    if t_gate is None:
        try:
            t_port, t_gate, leaf = topics.parse_gate_topic(topic)
        except BadInput:
            return DeadLetter(topic, "not a gate events topic", raw)
        if t_port != port or leaf != "events":
            return DeadLetter(topic, f"topic is not an events topic of port {port}", raw, t_gate)
        if len(_event_topics) < 100_000:
            _event_topics[(topic, port)] = t_gate
    too_big = oversize(topic, raw, t_gate)
    if too_big is not None:
        return too_big
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
    try:
        key = keys.key(event.gate_id)
    except KeyUnreadable as exc:
        return DeadLetter(topic, str(exc), raw, event.gate_id, event.event_id)
    if key is None:
        return DeadLetter(topic, f"unknown gate {event.gate_id}", raw, event.gate_id, event.event_id)
    if not _verify(event, key, raw):
        return DeadLetter(topic, "bad MAC", raw, event.gate_id, event.event_id)
    try:
        broken = chain_check.signature_problem(event, keys)
    except KeyUnreadable as exc:
        return DeadLetter(topic, str(exc), raw, event.gate_id, event.event_id)
    if broken is not None:
        return DeadLetter(topic, broken, raw, event.gate_id, event.event_id, event.seq)
    return Accepted(topic, event, raw)


_event_topics: dict[tuple[str, str], str] = {}  # (valid events topic, port) -> gate id
_macs: dict[bytes, hmac.HMAC] = {}  # key -> HMAC-SHA256 with the key already absorbed


def _verify(event: Event, key: bytes, raw: bytes) -> bool:
    """``wire.events.verify`` with the keyed HMAC state cached per key (``copy()`` per message).

    Fast path: a gate sends ``encode(event)``, i.e. the canonical bytes with the ``mac`` value
    filled in, so blanking that value in the wire bytes gives the canonical bytes without
    re-encoding. If that does not verify (another encoder, or a forged MAC), the canonical bytes are
    computed from the decoded event as ``wire.events.verify`` does, so the verdict is the same.
    """
    base = _macs.get(key)
    if base is None:
        base = _macs[key] = hmac.new(key, digestmod=hashlib.sha256)
    quoted = event.mac.encode()
    candidate = raw.replace(b'"mac":"' + quoted + b'"', b'"mac":""', 1)
    if event.sig:  # a signed event: the signature is blanked in the canonical bytes too
        candidate = candidate.replace(b'"sig":"' + event.sig.encode() + b'"', b'"sig":""', 1)
    if candidate is not raw and len(candidate) != len(raw):
        mac = base.copy()
        mac.update(candidate)
        if hmac.compare_digest(mac.hexdigest().encode(), quoted):
            return True
    mac = base.copy()
    mac.update(canonical_bytes(event))
    return hmac.compare_digest(mac.hexdigest(), event.mac)


def _insert(conn: Connection, table):
    return (postgresql if conn.dialect.name == "postgresql" else sqlite).insert(table)


_COLUMNS = (
    "event_id", "port", "gate_id", "boot_id", "seq", "occurred_at", "clock_trusted", "mono_ns", "type",
    "registration", "decision", "payload", "mac", "raw", "received_at",
)
_ROWS_PER_STATEMENT = 1000  # 15 parameters a row: well under SQLite's 32766 and PostgreSQL's 65535
_json = msgspec.json.Encoder()


# SQLite: a multi-row ``VALUES`` insert that bypasses SQLAlchemy's per-row bind processing (the
# hot path of the ingest): values are converted here as the column types would store them. No
# RETURNING: SQLite would step (and release the GIL) once per returned row; the ids come from
# lastrowid/rowcount instead (``_sqlite_ids``).
_SQLITE_ROW = "(" + ", ".join(["?"] * len(_COLUMNS)) + ")"


def _sqlite_sql(n_rows: int) -> str:
    return (f"INSERT INTO {events.name} ({', '.join(_COLUMNS)}) VALUES "
            + ", ".join([_SQLITE_ROW] * n_rows) + " ON CONFLICT (event_id) DO NOTHING")


# PostgreSQL: one array parameter per column (``unnest``), so the statement text is short and
# fixed. psycopg parses a statement's placeholders in Python and caches that only for short
# statements: a 15,000-placeholder ``VALUES`` list was re-parsed for every batch and cost the
# writer about 100 us per event (profiled), more than everything else it does.
_PG_TYPES = (
    "text", "text", "text", "text", "bigint", "timestamptz", "boolean", "bigint", "text", "text", "text",
    "text", "text", "bytea",
)
_PG_INSERT = (
    f"INSERT INTO {events.name} ({', '.join(_COLUMNS)}) "
    f"SELECT {', '.join(_COLUMNS[:11])}, payload::json, mac, raw, %s::timestamptz FROM unnest("
    + ", ".join(f"%b::{t}[]" for t in _PG_TYPES)  # binary: no text escaping of each element
    + f") AS u({', '.join(_COLUMNS[:14])}) ON CONFLICT (event_id) DO NOTHING RETURNING id, event_id"
)


def _pg_insert(conn: Connection, chunk: list[Accepted], received_at: dt.datetime) -> list[tuple[int, str]]:
    """PostgreSQL: insert ``chunk`` as column arrays; (id, event_id) of the rows really inserted."""
    rows = [_event_values(a, a.event.occurred_at) for a in chunk]
    columns = [list(column) for column in zip(*rows)]
    return conn.exec_driver_sql(_PG_INSERT, (received_at, *columns)).all()


def _event_values(a: Accepted, occurred_at) -> tuple:
    """The 14 event columns of ``_COLUMNS`` (all but ``received_at``), ``occurred_at`` as given."""
    e = a.event
    payload = e.payload
    return (
        e.event_id, e.port, e.gate_id, e.boot_id, e.seq, occurred_at, e.clock_trusted, e.mono_ns,
        type(payload).__struct_config__.tag, getattr(payload, "registration", None),
        getattr(payload, "decision", None), _json.encode(payload).decode(), e.mac, a.raw,
    )


def _sqlite_datetime(value: dt.datetime) -> str:
    """What SQLAlchemy's SQLite ``DateTime`` stores (``YYYY-MM-DD HH:MM:SS.ffffff``, no offset), at a
    tenth of the cost of its bind processor; in UTC, which is how the ledger reads it back (a gate
    sending another offset must not shift the time). Raises ``OverflowError`` for an instant
    outside years 1-9999 in UTC (the event becomes an ``unstorable`` dead letter)."""
    if value.utcoffset():
        value = value.astimezone(dt.UTC)
    return value.isoformat(" ", "microseconds")[:26]


def write_batch(
    conn: Connection, accepted: list[Accepted], rejected: list[DeadLetter], received_at: dt.datetime
) -> list[tuple[int, Event]]:
    """Insert a batch inside the caller's transaction; return (ledger id, event) of new rows only,
    in ledger id order.

    Duplicates inside the batch (first copy wins) and against the ledger are skipped: one
    ``INSERT ... ON CONFLICT (event_id) DO NOTHING`` per 1000 events (SQLite >= 3.35: a multi-row
    ``VALUES``; PostgreSQL: column arrays with ``RETURNING id, event_id``), so a redelivered,
    replayed or concurrently inserted event is a no-op and only the rows really inserted come back.
    """
    inserted: list[tuple[int, Event]] = []
    unique: dict[str, Accepted] = {}
    for a in accepted:
        unique.setdefault(a.event.event_id, a)
    if unique:
        pg = conn.dialect.name == "postgresql"
        at = _sqlite_datetime(received_at)
        fresh = list(unique.values())
        for i in range(0, len(fresh), _ROWS_PER_STATEMENT):
            chunk = fresh[i : i + _ROWS_PER_STATEMENT]
            if pg:
                rows = _pg_insert(conn, chunk, received_at)
            else:
                params = tuple(itertools.chain.from_iterable(
                    (*_event_values(a, _sqlite_datetime(a.event.occurred_at)), at) for a in chunk))
                rows = _sqlite_ids(conn, conn.exec_driver_sql(_sqlite_sql(len(chunk)), params), chunk, received_at)
            inserted += [(row_id, unique[event_id].event) for row_id, event_id in rows]
    if rejected:
        conn.execute(dead_letters.insert(), [dead_letter_row(d, received_at) for d in rejected])
    inserted.sort(key=lambda r: r[0])
    return inserted


def dead_letter_row(d: DeadLetter, received_at: dt.datetime) -> dict:
    """The ``dead_letters`` row of ``d``: texts fitted to their columns; a message longer than
    ``DEAD_RAW_KEPT`` bytes keeps only its first ``DEAD_RAW_KEPT`` and the reason ends with
    ``[raw: first K of N bytes, sha256 HEX]`` (the hash of the whole message)."""
    raw, reason = d.raw, _fit(d.reason, 4000)
    if len(raw) > DEAD_RAW_KEPT:
        reason += f" [raw: first {DEAD_RAW_KEPT} of {len(raw)} bytes, sha256 {hashlib.sha256(raw).hexdigest()}]"
        raw = raw[:DEAD_RAW_KEPT]
    return {"received_at": received_at, "topic": _fit(d.topic, 255), "reason": reason,
            "gate_id": _fit(d.gate_id, 64), "event_id": _fit(d.event_id, 36), "raw": raw}


def _fit(text: str | None, size: int) -> str | None:
    """A dead letter's text as every database stores it: NUL characters (refused by PostgreSQL)
    shown as U+FFFD and cut to the column's size. The raw bytes keep the exact message; a dead
    letter the database refused would be retried forever and stall the ingest."""
    if text is None:
        return None
    return text.replace("\x00", "\ufffd")[:size]


def _sqlite_ids(conn: Connection, result, chunk: list[Accepted], at: dt.datetime) -> list[tuple[int, str]]:
    """(id, event_id) of the rows one SQLite multi-row insert really inserted.

    When every row was inserted (the usual case) SQLite gave them consecutive rowids in VALUES
    order under the write lock (new rowid = largest + 1), ending at ``lastrowid``; one single-row
    query confirms the first one. Otherwise (duplicates, or the check fails) the rows are looked up
    by event id and this batch's ``received_at``.
    """
    n, last = result.rowcount, result.lastrowid
    if n == len(chunk) and last:
        first = conn.exec_driver_sql(
            "SELECT id FROM events WHERE event_id = ?", (chunk[0].event.event_id,)
        ).scalar()
        if first == last - n + 1:
            return [(first + i, a.event.event_id) for i, a in enumerate(chunk)]
    if n == 0:
        return []
    return list(
        conn.execute(
            select(events.c.id, events.c.event_id).where(
                events.c.event_id.in_([a.event.event_id for a in chunk]), events.c.received_at == at
            )
        )
    )


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
    beyond the batch, a gate without progress row) the ledger is walked as before, so N workers and
    out-of-order arrival give the same result.
    """
    gaps: list[Gap] = []
    gate_ids = sorted(set(gate_ids))
    if not gate_ids:
        return gaps
    seen = seen or {}
    known = {
        g: (c, h)
        for g, c, h in conn.execute(
            select(gate_progress.c.gate_id, gate_progress.c.contiguous_seq, gate_progress.c.highest_seq)
            .where(gate_progress.c.gate_id.in_(gate_ids))
        )
    }
    for gate_id in gate_ids:
        current = known.get(gate_id)
        contiguous, highest = current if current is not None else (0, 0)
        batch = seen.get(gate_id)
        holes: list[tuple[int, int]] = []
        fast = False
        if current is not None and batch:
            for seq in sorted(batch):
                if seq == contiguous + 1:
                    contiguous = seq
                elif seq > contiguous + 1:
                    break
            top = max(highest, max(batch))
            if top == contiguous:  # nothing beyond the run: no ledger walk needed
                highest, fast = top, True
        if not fast:
            contiguous = current[0] if current is not None else 0
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
        gaps += [Gap(gate_id, a, b) for a, b in holes]
    return gaps


def scan_sequences(
    contiguous: int,
    seqs,
    losses,
    *,
    window_end: int | None = None,
    max_ranges: int = MAX_GAP_RANGES,
    max_events: int = MAX_GAP_EVENTS,
) -> tuple[int, list[tuple[int, int]]]:
    """Pure: from ``contiguous`` (all of 1..contiguous accounted for), the sorted present sequences
    ``seqs`` (> contiguous) and the lost ranges ``losses`` [(from, to) inclusive], return the new
    contiguous sequence and the missing runs [(from, to) inclusive] (at most ``max_ranges`` runs and
    ``max_events`` sequences; the last run cut to fit). ``window_end``: ``seqs`` is only known up to
    this sequence (a ``LIMIT``-ed read), so lost ranges starting after it are ignored for now.
    """
    covered = [(s, s) for s in seqs]
    covered += [(a, b) for a, b in losses if b > contiguous and (window_end is None or a <= window_end + 1)]
    covered.sort()
    cursor = contiguous  # every sequence <= cursor is present or lost
    first_hole: int | None = None
    holes: list[tuple[int, int]] = []
    budget = max_events
    for a, b in covered:
        if a > cursor + 1:
            if first_hole is None:
                first_hole = cursor
            if len(holes) < max_ranges and budget > 0:
                hi = min(a - 1, cursor + budget)
                holes.append((cursor + 1, hi))
                budget -= hi - cursor
        cursor = max(cursor, b)
    return (first_hole if first_hole is not None else cursor), holes


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
