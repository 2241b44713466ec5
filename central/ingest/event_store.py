"""Checking incoming event messages and writing them to the ledger in one transaction per batch.

``check`` turns one MQTT message into an accepted ``Event`` or a ``DeadLetter`` with the reason
(the pure ``central.ingest.check.check`` with the gate's keys looked up in the ``KeyRing``).

``write_batch`` inserts accepted events with one multi-row ``INSERT ... ON CONFLICT (event_id) DO
NOTHING`` per 1000 events (SQLite) or one binary ``COPY`` and ``INSERT ... SELECT ... RETURNING``
per batch (PostgreSQL), so a redelivered or replayed event is a no-op, and inserts the
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
import itertools
import re
from collections.abc import Sequence

import msgspec
import structlog
from sqlalchemy import func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError

from central.ingest.check import (  # noqa: F401 - MAX_MESSAGE_BYTES and oversize are the store's names too
    MAX_MESSAGE_BYTES, UNKNOWN, Accepted, DeadLetter, GateKeys, oversize, topic_gate)
from central.ingest.check import check as pure_check
from central.ingest.keys import KeyRing, KeyUnreadable
from central.ingest.runs import check_all, finish_batch, prepare_batch, raw_keys
from central.ingest.repair import MAX_GAP_EVENTS, MAX_GAP_RANGES, scan_sequences
from central.ledger.schema import dead_letters, events, gate_losses, gate_progress
from portgate.errors import BadInput
from wire.events import AlertPayload, Event, decode

log = structlog.get_logger("central.ingest")

DEAD_RAW_KEPT = 4096  # bytes of a dead letter's message stored; the rest is named by size and SHA-256


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


def _insert(conn: Connection, table):
    return (postgresql if conn.dialect.name == "postgresql" else sqlite).insert(table)


_COLUMNS = (
    "event_id", "port", "gate_id", "boot_id", "seq", "occurred_at", "clock_trusted", "mono_ns", "type",
    "registration", "decision", "payload", "mac", "raw", "received_at",
)
_ROWS_PER_STATEMENT = 1000  # SQLite: 15 parameters a row, well under its 32766
_json = msgspec.json.Encoder()


# SQLite: a multi-row ``VALUES`` insert that bypasses SQLAlchemy's per-row bind processing (the
# hot path of the ingest): values are converted here as the column types would store them. No
# RETURNING: SQLite would step (and release the GIL) once per returned row; the ids come from
# lastrowid/rowcount instead (``_sqlite_ids``).
_SQLITE_ROW = "(" + ", ".join(["?"] * len(_COLUMNS)) + ")"


def _sqlite_sql(n_rows: int) -> str:
    return (f"INSERT INTO {events.name} ({', '.join(_COLUMNS)}) VALUES "
            + ", ".join([_SQLITE_ROW] * n_rows) + " ON CONFLICT (event_id) DO NOTHING")


# PostgreSQL: the batch goes by one binary ``COPY`` into a temporary table of the connection
# (psycopg writes each row in C, where column array parameters are dumped element by element in
# Python: about half of the writer's CPU per event), then one
# ``INSERT ... SELECT ... ON CONFLICT (event_id) DO NOTHING RETURNING id, event_id`` moves it into
# ``events``. The table is the connection's own (``ON COMMIT DELETE ROWS``) and emptied after each
# use, so a second batch in the same transaction starts from nothing.
_PG_STAGE = "ingest_batch"
_PG_TYPES = (
    "text", "text", "text", "text", "bigint", "timestamptz", "boolean", "bigint", "text", "text", "text",
    "text", "text", "bytea",
)
_PG_CREATE = (f"CREATE TEMPORARY TABLE IF NOT EXISTS {_PG_STAGE} ("
              + ", ".join(f"{c} {t}" for c, t in zip(_COLUMNS, _PG_TYPES)) + ") ON COMMIT DELETE ROWS")
_PG_COPY = f"COPY {_PG_STAGE} ({', '.join(_COLUMNS[:14])}) FROM STDIN (FORMAT BINARY)"
_PG_INSERT = (
    f"INSERT INTO {events.name} ({', '.join(_COLUMNS)}) "
    f"SELECT {', '.join(_COLUMNS[:11])}, payload::json, mac, raw, %s::timestamptz FROM {_PG_STAGE} "
    "ON CONFLICT (event_id) DO NOTHING RETURNING id, event_id"
)


def _pg_insert(conn: Connection, chunk: list[Accepted], received_at: dt.datetime) -> list[tuple[int, str]]:
    """PostgreSQL: insert ``chunk`` (COPY into the staging table, then one INSERT ... SELECT);
    (id, event_id) of the rows really inserted. A value the driver or the server refuses raises
    the SQLAlchemy error of the driver's (``DataError`` for a NUL character, a too long text ...),
    or the driver's ``ValueError``/``OverflowError`` as it is."""
    dbapi = conn.dialect.loaded_dbapi
    driver = conn.connection.driver_connection
    try:
        with driver.cursor() as cur:
            cur.execute(_PG_CREATE)  # (each time: a rolled back transaction takes a new table with it)
            with cur.copy(_PG_COPY) as copy:
                copy.set_types(_PG_TYPES)
                write = copy.write_row
                for a in chunk:
                    write(_event_values(a, a.event.occurred_at))
            cur.execute(_PG_INSERT, (received_at,))
            rows = cur.fetchall()
            cur.execute(f"DELETE FROM {_PG_STAGE}")
    except dbapi.Error as exc:
        raise DBAPIError.instance(_PG_INSERT, None, exc, dbapi.Error, dialect=conn.dialect) from exc
    return rows


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
    ``INSERT ... ON CONFLICT (event_id) DO NOTHING`` (SQLite >= 3.35: a multi-row ``VALUES`` per
    1000 events; PostgreSQL: the batch copied into a staging table, then ``INSERT ... SELECT ...
    RETURNING id, event_id``), so a redelivered,
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
        step = len(fresh) if pg else _ROWS_PER_STATEMENT  # (COPY has no parameter limit)
        for i in range(0, len(fresh), step):
            chunk = fresh[i : i + step]
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
