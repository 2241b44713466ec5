"""Checking incoming event messages and writing them to the ledger in one transaction per batch.

``check`` turns one MQTT message into an accepted ``Event`` or a ``DeadLetter`` with the reason:
not a gate topic / wrong port, malformed (not JSON, schema violation, unsupported schema version),
topic/gate mismatch (a gate publishing as another), unknown gate (no key), bad MAC.

``write_batch`` inserts accepted events with one multi-row ``INSERT ... ON CONFLICT (event_id) DO
NOTHING RETURNING`` per 1000 events, so a redelivered or replayed event is a no-op, and inserts the
dead letters. It returns the rows actually inserted (id, event) so the caller can relay presence for
new admits/exits. ``update_progress`` updates ``gate_progress`` (highest and contiguous sequence per
gate), in memory from the batch when it simply continues the gate's run.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import hmac
import itertools

import msgspec
from sqlalchemy import case, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

from central.ingest.keys import KeyRing
from central.ledger.schema import dead_letters, events, gate_progress
from portgate.errors import BadInput
from wire import SCHEMA_VERSION, topics
from wire.events import Event, canonical_bytes, decode


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
    if not _verify(event, key, raw):
        return DeadLetter(topic, "bad MAC", raw, event.gate_id, event.event_id)
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


class _Dialect:
    """Per-dialect pieces of the raw multi-row insert (built once per dialect, then cached).

    The events insert bypasses SQLAlchemy's per-row bind processing (the hot path of the ingest):
    values are converted here exactly as the column types would store them (SQLite: datetimes via
    the ``DateTime`` type's own bind processor; the payload JSON encoded once by msgspec).
    """

    def __init__(self, dialect) -> None:
        self.pg = dialect.name == "postgresql"
        mark = "%s" if self.pg else "?"
        self.one_row = "(" + ", ".join([mark] * len(_COLUMNS)) + ")"
        self.head = f"INSERT INTO {events.name} ({', '.join(_COLUMNS)}) VALUES "
        # PostgreSQL returns the inserted rows in the same round trip. SQLite would step (and release
        # the GIL) once per RETURNING row, which a busy MQTT network thread turns into a wait per
        # row; there the ids come from lastrowid/rowcount instead (see ``_sqlite_ids``).
        self.tail = " ON CONFLICT (event_id) DO NOTHING" + (" RETURNING id, event_id" if self.pg else "")
        self.datetime = events.c.occurred_at.type.dialect_impl(dialect).bind_processor(dialect) or _identity
        if not self.pg:
            self.datetime = _sqlite_datetime
        if self.pg:
            from psycopg.types.json import Json

            self.json = lambda text: Json(text, dumps=_identity)
        else:
            self.json = _identity

    def sql(self, n_rows: int) -> str:
        return self.head + ", ".join([self.one_row] * n_rows) + self.tail


def _identity(value):
    return value


def _sqlite_datetime(value: dt.datetime) -> str:
    """What SQLAlchemy's SQLite ``DateTime`` stores (``YYYY-MM-DD HH:MM:SS.ffffff``, the fields as
    given, no offset), at a tenth of the cost of its bind processor."""
    return value.isoformat(" ", "microseconds")[:26]


_dialects: dict[str, _Dialect] = {}


def _dialect(conn: Connection) -> _Dialect:
    d = _dialects.get(conn.dialect.name)
    if d is None:
        d = _dialects[conn.dialect.name] = _Dialect(conn.dialect)
    return d


def _values(a: Accepted, d: _Dialect, received_at) -> tuple:
    e = a.event
    payload = e.payload
    return (
        e.event_id, e.port, e.gate_id, e.boot_id, e.seq, d.datetime(e.occurred_at), e.clock_trusted,
        e.mono_ns, type(payload).__struct_config__.tag, getattr(payload, "registration", None),
        getattr(payload, "decision", None), d.json(_json.encode(payload).decode()), e.mac, a.raw, received_at,
    )


def write_batch(
    conn: Connection, accepted: list[Accepted], rejected: list[DeadLetter], received_at: dt.datetime
) -> list[tuple[int, Event]]:
    """Insert a batch inside the caller's transaction; return (ledger id, event) of new rows only,
    in ledger id order.

    Duplicates inside the batch (first copy wins) and against the ledger are skipped: one
    multi-row ``INSERT ... ON CONFLICT (event_id) DO NOTHING RETURNING id, event_id`` per 1000
    events (SQLite >= 3.35 and PostgreSQL), so a redelivered, replayed or concurrently inserted
    event is a no-op and only the rows really inserted come back.
    """
    inserted: list[tuple[int, Event]] = []
    unique: dict[str, Accepted] = {}
    for a in accepted:
        unique.setdefault(a.event.event_id, a)
    if unique:
        d = _dialect(conn)
        at = d.datetime(received_at)
        fresh = list(unique.values())
        for i in range(0, len(fresh), _ROWS_PER_STATEMENT):
            chunk = fresh[i : i + _ROWS_PER_STATEMENT]
            params = tuple(itertools.chain.from_iterable(_values(a, d, at) for a in chunk))
            result = conn.exec_driver_sql(d.sql(len(chunk)), params)
            rows = result.all() if d.pg else _sqlite_ids(conn, result, chunk, received_at)
            inserted += [(row_id, unique[event_id].event) for row_id, event_id in rows]
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
    conn: Connection, gate_ids, now: dt.datetime, *, seen: dict[str, list[int]] | None = None, walk: int = 5000
) -> list[Gap]:
    """Advance ``gate_progress`` for ``gate_ids`` from the ledger; return the gaps found.

    ``contiguous_seq`` = all of 1..n are in the ledger; ``highest_seq`` = the largest seen. A gap
    is the first run of missing sequences after ``contiguous_seq``.

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
        next_present = None
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
