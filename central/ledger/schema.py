"""Ledger tables that the MQTT ingest writes and everything else reads.

``events`` is append-only: one row per gate event, deduplicated by ``event_id``, keeping the gate's
MAC and the exact wire bytes. ``dead_letters`` keeps anything rejected with the reason and the raw
payload. ``gate_progress`` tracks per-gate sequence numbers to detect gaps. ``gate_status`` keeps each gate's newest retained status (online/offline, boot id, outbox depth,
clock, copies, readers) under its port (key: port + gate id), as the office's ingest receives it; ``reader_alarms`` the readers in fault they reported. ``gate_losses`` records
sequence ranges a gate reported lost with a quarantined journal (never replayed; skipped by gaps).
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Index,
    UniqueConstraint,
    Integer,
    LargeBinary,
    String,
    Table,
    Text,
)

from central.db import metadata

events = Table(
    "events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("event_id", String(36), nullable=False, unique=True),
    Column("port", String(64), nullable=False),
    Column("gate_id", String(64), nullable=False),
    Column("boot_id", String(64), nullable=False),
    Column("seq", BigInteger, nullable=False),
    Column("occurred_at", DateTime(timezone=True), nullable=False),  # aware UTC
    Column("clock_trusted", Boolean, nullable=False),
    Column("mono_ns", BigInteger, nullable=False),
    Column("type", String(32), nullable=False),  # payload tag: tap | confiscation | reader | alert | coverage
    Column("registration", String(64), nullable=True),  # from the payload, for lookups
    Column("decision", String(16), nullable=True),  # tap decision: admit | exit | deny | inspector | aboard
    Column("payload", JSON, nullable=False),  # the payload as a JSON object
    Column("mac", String(64), nullable=False),
    Column("raw", LargeBinary, nullable=False),  # exact wire bytes
    Column("received_at", DateTime(timezone=True), nullable=False),
)
Index("ix_events_gate_seq", events.c.gate_id, events.c.seq)
Index("ix_events_registration_time", events.c.registration, events.c.occurred_at)
# the office's read log (0024, central/web/logmodel.py), keyset-paged newest first; 0024 also
# indexes the tap payload's card UID (an expression index, written per dialect there)
Index("ix_events_time", events.c.occurred_at, events.c.id)
Index("ix_events_gate_time", events.c.gate_id, events.c.occurred_at, events.c.id)
Index("ix_events_decision_time", events.c.decision, events.c.occurred_at, events.c.id)

dead_letters = Table(
    "dead_letters",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("received_at", DateTime(timezone=True), nullable=False),
    Column("topic", String(255), nullable=False),
    Column("reason", Text, nullable=False),  # e.g. "bad MAC", "malformed: ...", "unknown gate g9"
    Column("gate_id", String(64), nullable=True),
    Column("event_id", String(36), nullable=True),
    Column("raw", LargeBinary, nullable=False),
)

gate_progress = Table(
    "gate_progress",
    metadata,
    Column("gate_id", String(64), primary_key=True),
    Column("highest_seq", BigInteger, nullable=False),  # highest sequence seen
    Column("contiguous_seq", BigInteger, nullable=False),  # all of 1..contiguous_seq are in events
    Column("updated_at", DateTime(timezone=True), nullable=False),
)

gate_status = Table(
    "gate_status",
    metadata,
    # a gate id is a topic level under its port: the status's own port (``GateStatus.port``) is part
    # of the key (0035); '' for a row made before 0035 of a gate that had sent no event (port not known)
    Column("port", String(64), primary_key=True),
    Column("gate_id", String(64), primary_key=True),
    Column("state", String(16), nullable=False),  # online | offline
    Column("reason", String(16), nullable=False),  # birth | will | graceful | progress
    Column("boot_id", String(64), nullable=False),
    Column("since", DateTime(timezone=True), nullable=False),  # when it entered this state
    Column("at", DateTime(timezone=True), nullable=False),  # the status message's own time
    Column("sent_seq", BigInteger, nullable=True),
    Column("outbox_depth", Integer, nullable=True),
    Column("oldest_unsent_at", DateTime(timezone=True), nullable=True),
    Column("clock_trusted", Boolean, nullable=True),
    Column("copies_updated_at", DateTime(timezone=True), nullable=True),
    Column("received_at", DateTime(timezone=True), nullable=False),
    # each configured reader's health as the status said ([{reader_id, kind, state, since, last_read_at,
    # detail}], times ISO 8601 UTC); None: the gate did not say
    Column("readers", JSON, nullable=True),
)

# a reader in fault as the gates' statuses report it (``central.ledger.reader_alarms``): raised when a
# status says "fault", ended when one says "ok" again
reader_alarms = Table(
    "reader_alarms",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("gate_id", String(64), nullable=False),
    Column("reader_id", String(64), nullable=False),
    Column("kind", String(16), nullable=False),  # control | badge | ?
    Column("raised_at", DateTime(timezone=True), nullable=False),  # when the reader went into fault
    Column("ended_at", DateTime(timezone=True), nullable=True),  # when it was ok again
    Column("detail", Text, nullable=False),  # the driver's words (pt-BR)
)
Index("ix_reader_alarms_open", reader_alarms.c.gate_id, reader_alarms.c.reader_id, reader_alarms.c.ended_at)

gate_losses = Table(
    "gate_losses",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("gate_id", String(64), nullable=False),
    Column("seq_from", BigInteger, nullable=False),  # first lost sequence (lost_after + 1)
    Column("seq_to", BigInteger, nullable=False),  # last lost sequence (resumed_at - 1), inclusive
    Column("event_id", String(36), nullable=False),  # the STORE_QUARANTINED alert that reported it
    Column("detail", Text, nullable=False),  # the alert's detail, as sent
    Column("recorded_at", DateTime(timezone=True), nullable=False),
    UniqueConstraint("event_id"),
)
Index("ix_gate_losses_gate_seq", gate_losses.c.gate_id, gate_losses.c.seq_from)

# The signed chain of each gate (central.ingest.chain, docs/evidence.md): one row per signed event
# (its hash and the ``prev`` it names), the breaks found on ingest, and the office's signed receipts.
# ``event_links`` is one B-tree on SQLite (WITHOUT ROWID: the rows live in the primary-key index);
# the event of a link is ``events`` at the same (gate_id, seq), the first stored (lowest id).
event_links = Table(
    "event_links",
    metadata,
    Column("gate_id", String(64), primary_key=True),
    Column("seq", BigInteger, primary_key=True),
    Column("hash", LargeBinary(32), nullable=False),  # SHA-256 of the event's canonical bytes (32 bytes)
    Column("prev", LargeBinary(32), nullable=False),  # the event's ``prev``, 32 bytes
    Column("segment", Boolean, nullable=False, default=False),  # a quarantine segment start
    sqlite_with_rowid=False,
)

chain_breaks = Table(
    "chain_breaks",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("gate_id", String(64), nullable=False),
    Column("seq_from", BigInteger, nullable=False),
    Column("seq_to", BigInteger, nullable=False),
    Column("kind", String(32), nullable=False),  # BAD_SIGNATURE, UNSIGNED, FORKED, PREV_MISMATCH, ...
    Column("detail", Text, nullable=False),
    Column("event_id", String(36), nullable=True),
    Column("recorded_at", DateTime(timezone=True), nullable=False),
)
Index("ix_chain_breaks_gate", chain_breaks.c.gate_id, chain_breaks.c.seq_from)

chain_receipts = Table(
    "chain_receipts",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("gate_id", String(64), nullable=False),
    Column("seq", BigInteger, nullable=False),  # every seq 1..seq is in the ledger or a recorded loss
    Column("head", String(64), nullable=False),  # hash of the event at seq
    Column("issued_at", DateTime(timezone=True), nullable=False),
    Column("body", LargeBinary, nullable=False),  # the signed statement (canonical JSON)
    Column("sig", String(128), nullable=False),  # hex Ed25519 signature of body by the office key
)
Index("ix_chain_receipts_gate", chain_receipts.c.gate_id, chain_receipts.c.seq)

# The home port the ledger's NULL ports were filled under (0034): one row, written by the first
# office command of several ports that reads NULL-port workers (central.ledger.home.need_served);
# a config of another home port is refused while NULL-port workers remain.
ledger_home = Table(
    "ledger_home",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),  # always 1
    Column("port", String(64), nullable=False),
    Column("recorded_at", DateTime(timezone=True), nullable=False),
)

# The office processes running on this ledger (0036, ``central.ledger.liveness``): one row per
# ``portgate central run`` / ``portgate office serve`` process, written at its start, its ``seen_at``
# refreshed every ``liveness.REFRESH_S`` seconds and the row deleted at a clean stop. A row seen within
# ``liveness.STALE_S`` seconds is a running office (``portgate ledger home-port --set`` refuses then);
# an older one is a process that died without its stop. ``instance`` and ``proc_start`` (0037): the
# ``--instance`` of a ``central run`` ('' = none) and its process's start in clock ticks since boot:
# one live ``central run`` per home port and instance (``central.ledger.instance_claim``).
office_processes = Table(
    "office_processes",
    metadata,
    Column("id", String(32), primary_key=True),  # a random hex id of the process's run
    Column("kind", String(16), nullable=False),  # "central run" | "office serve"
    Column("home_port", String(64), nullable=False),  # the port of its central.toml (its home port)
    Column("host", String(255), nullable=False),
    Column("pid", Integer, nullable=False),
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("seen_at", DateTime(timezone=True), nullable=False),  # refreshed while it runs (aware UTC)
    Column("instance", String(64), nullable=False, server_default=""),  # --instance; '' = none given
    Column("proc_start", BigInteger, nullable=True),  # /proc/<pid>/stat starttime (ticks); NULL: unknown
)
