"""Tables of the gate's local store (SQLite through SQLAlchemy Core). See ``edge.store``."""

from __future__ import annotations

from sqlalchemy import Column, Index, Integer, MetaData, String, Table, Text

from portgate.uid import PARTIAL_BITS

metadata = MetaData()

workers = Table(
    "workers",
    metadata,
    Column("registration", String, primary_key=True),
    Column("name", String, nullable=False),
    Column("category", String, nullable=False),
    Column("status", String, nullable=False),
    Column("suspended_from", String),  # ISO date
    Column("suspended_until", String),
    Column("health_exam_date", String),
    Column("booklet_revalidated_year", Integer),
    Column("rotation_number", Integer),
)

cards = Table(
    "cards",
    metadata,
    Column("uid", String, primary_key=True),  # canonical UID
    Column("kind", String, nullable=False),
    Column("registration", String, nullable=False),
    Column("status", String, nullable=False),
)
Index("ix_cards_registration", cards.c.registration)


def low_bits_sql(bits: int) -> str:
    """SQL for the low ``bits`` of ``cards.uid`` as hex (NULL-free; a shorter UID compares unequal
    because its whole text is shorter than ``bits / 4`` digits): the expression the indexes hold."""
    return f"substr(uid, -{bits // 4})"


# Partial reads (DEZ10: low 32 bits, DEZ8/W26: low 24, ``portgate.uid``) are looked up through these
# expression indexes: a read costs one index probe, whatever the size of the roster.
CARD_BITS_INDEXES = tuple(
    f"CREATE INDEX IF NOT EXISTS ix_cards_low{bits} ON cards ({low_bits_sql(bits)})"
    for bits in sorted(set(PARTIAL_BITS.values()))
)

# The per-tap expiry of pending flags (``DELETE ... WHERE at < ?``) seeks instead of scanning.
PENDING_FLAGS_AT_INDEX = "CREATE INDEX IF NOT EXISTS ix_pending_flags_at ON pending_flags (at)"

# Cards confiscated at this gate (G10): effective at once, and kept until the office shows it knows
# of the confiscation: its roster says the card is not active, or its blocklist lists the card.
# (Named "blocklist" since the first store files; office blocks are in ``office_blocks``.) The reason
# of a confiscation here is "confiscated: <reason flag>" (``edge.effects.confiscation_reason``).
blocklist = Table(
    "blocklist",
    metadata,
    Column("uid", String, primary_key=True),
    Column("reason", String, nullable=False),
    Column("at", String, nullable=False),  # ISO UTC
)

# The office's blocklist copy (downlink ``cards``): a snapshot replaces it, a delta adds to it; so a
# card the office no longer lists (returned, found) is no longer blocked here. Upgrade: a file written
# before this table existed kept the office's blocks in ``blocklist``; on opening it, the rows whose
# reason is not a gate confiscation (not "confiscated: <flag>", i.e. the office's plain "confiscated",
# "lost", "replaced") move here, in one transaction (``edge.store._upgrade_blocklist``).
office_blocks = Table(
    "office_blocks",
    metadata,
    Column("uid", String, primary_key=True),
    Column("reason", String, nullable=False),
    Column("at", String, nullable=False),  # ISO UTC
)

escala = Table(
    "escala",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("date", String, nullable=False),  # local ISO date
    Column("period", String, nullable=False),
    Column("ship", String, nullable=False),
    Column("ship_name", String, nullable=False),
    Column("voyage", String, nullable=False),
    Column("berth", String, nullable=False),
    Column("gate_id", String, nullable=False),
    Column("post", String, nullable=False),
    Column("function", String, nullable=False),
    Column("registration", String, nullable=False),
)
Index("ix_escala_registration", escala.c.registration, escala.c.date)
Index("ix_escala_gate", escala.c.gate_id, escala.c.date)
Index(
    "ux_escala_key", escala.c.date, escala.c.period, escala.c.ship, escala.c.post,
    escala.c.registration, unique=True,
)

# Open shifts: origin "local" (admitted at this gate) or "presence" (relayed by the office).
open_shifts = Table(
    "open_shifts",
    metadata,
    Column("registration", String, primary_key=True),
    Column("origin", String, primary_key=True),
    Column("gate_id", String, nullable=False),
    Column("ship", String, nullable=False),
    Column("admitted_at", String, nullable=False),
    Column("dispatch", Text),  # JSON of the EscalaEntry, or NULL
)

last_shift_end = Table(
    "last_shift_end",
    metadata,
    Column("registration", String, primary_key=True),
    Column("ended_at", String, nullable=False),
)

pending_flags = Table(
    "pending_flags",
    metadata,
    Column("uid", String, primary_key=True),
    Column("flag", String, primary_key=True),
    Column("at", String, nullable=False),
)

inspector_session = Table(
    "inspector_session",
    metadata,
    Column("id", Integer, primary_key=True),  # always 1
    Column("boot_id", String, nullable=False),  # a session does not survive a restart
    Column("inspector_uid", String, nullable=False),
    Column("inspector_registration", String, nullable=False),
    Column("until_mono_ns", Integer, nullable=False),
)

versions = Table(
    "versions",
    metadata,
    Column("name", String, primary_key=True),  # roster | cards | escala | presence
    Column("version", Integer, nullable=False),
    Column("updated_at", String),  # ISO UTC or NULL
)

meta = Table(
    "meta",
    metadata,
    Column("key", String, primary_key=True),  # applied_seq: last journal seq applied here
    Column("value", String, nullable=False),
)
