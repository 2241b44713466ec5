"""Derived ledger tables: shifts rebuilt from events, their flags, pay statements and their lines.

Everything here can be rebuilt from ``events`` (append-only) and the rulebooks, except the payment
marks on statements (``paid_at``, ``paid_ref``), which a rebuild keeps: a paid statement is never
replaced. Money is stored as integer cents (exact on SQLite and PostgreSQL alike). Day-wage tables
are not stored: they live in the rulebook TOML files, versioned by effective date.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Date,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
)

from central.db import metadata

shifts = Table(
    "shifts",
    metadata,
    Column("shift_id", String(160), primary_key=True),  # registration/ship/YYYY-MM-DD/HH-HH
    Column("registration", String(64), nullable=False),
    Column("ship", String(32), nullable=False),
    Column("work_date", Date, nullable=False),  # the escala date (local date of the period start)
    Column("period", String(8), nullable=False),
    Column("function", String(32), nullable=False),
    Column("berth", String(16), nullable=False),
    Column("voyage", String(16), nullable=True),
    Column("post", String(64), nullable=True),
    Column("gate_id", String(64), nullable=True),
    Column("period_start", DateTime(timezone=True), nullable=False),
    Column("period_end", DateTime(timezone=True), nullable=False),
    Column("admit_at", DateTime(timezone=True), nullable=True),
    Column("exit_at", DateTime(timezone=True), nullable=True),
    Column("closed_by", String(16), nullable=False),  # exit | period_end | none
    Column("admit_event_id", String(36), nullable=True),
    Column("exit_event_id", String(36), nullable=True),
    Column("meal_worked", Boolean, nullable=False, default=False),
    Column("held", Boolean, nullable=False, default=False),  # not paid until reviewed
    Column("rebuilt_at", DateTime(timezone=True), nullable=False),
)
Index("ix_shifts_work_date", shifts.c.work_date)
Index("ix_shifts_registration", shifts.c.registration, shifts.c.period_start)

shift_flags = Table(
    "shift_flags",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("shift_id", String(160), ForeignKey("shifts.shift_id", ondelete="CASCADE"), nullable=False),
    Column("flag", String(40), nullable=False),  # MISSING_EXIT, DOUBLE_ASSIGNMENT, CLOCK_PLACED, ...
    Column("detail", Text, nullable=False, default=""),
)
Index("ix_shift_flags_shift", shift_flags.c.shift_id)

statements = Table(
    "statements",
    metadata,
    Column("statement_id", String(200), primary_key=True),  # shift_id + "@" + rulebook id
    Column("shift_id", String(160), nullable=False),  # no FK: shifts are rebuilt, statements kept
    Column("registration", String(64), nullable=False),
    Column("rulebook", String(64), nullable=False),
    Column("work_day", Date, nullable=False),
    Column("total_cents", BigInteger, nullable=False),
    Column("flags", Text, nullable=False, default=""),  # comma-separated
    Column("service_end", DateTime(timezone=True), nullable=False),
    Column("due_at", DateTime(timezone=True), nullable=False),  # service end + 48 h (Lei 9.719 art. 2 §1)
    Column("computed_at", DateTime(timezone=True), nullable=False),
    Column("paid_at", DateTime(timezone=True), nullable=True),
    Column("paid_ref", String(128), nullable=True),
    # On hold for the office's review (RULES.md P: an EARLY_EXIT shift, G9): not payable until
    # released; a rebuild keeps the release when the reason is the same.
    Column("hold_reason", Text, nullable=True),
    Column("hold_released_at", DateTime(timezone=True), nullable=True),
    Column("hold_note", String(255), nullable=True),
    # Versions (central.pay.versions): a re-run keeps the earlier statement of the shift, marked
    # superseded with when, by which statement and why; one current statement per shift.
    Column("version", Integer, nullable=False, default=1, server_default="1"),
    Column("digest", String(64), nullable=True),  # SHA-256 of the computed statement (hex)
    Column("computed_by", String(128), nullable=True),  # who ran the pay
    Column("superseded_at", DateTime(timezone=True), nullable=True),  # None: the current one
    Column("superseded_by", String(200), nullable=True),
    Column("superseded_reason", Text, nullable=True),
)
Index("ix_statements_due", statements.c.paid_at, statements.c.due_at)
Index("ix_statements_shift_current", statements.c.shift_id, statements.c.superseded_at)
Index("ix_statements_work_day", statements.c.work_day)
#: One current statement per shift (docs/pay.md "Statement versions", migration 0016).
Index("uq_statements_one_current", statements.c.shift_id, unique=True,
      sqlite_where=statements.c.superseded_at.is_(None),
      postgresql_where=statements.c.superseded_at.is_(None))

statement_lines = Table(
    "statement_lines",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column(
        "statement_id",
        String(200),
        ForeignKey("statements.statement_id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("position", Integer, nullable=False),
    Column("rule", String(16), nullable=False),
    Column("article", String(128), nullable=False),
    Column("description", String(255), nullable=False),
    Column("amount_cents", BigInteger, nullable=False),
)
Index("ix_statement_lines_statement", statement_lines.c.statement_id)

# What the last close read and stored, per worker (``central.ledger.reclose``, ``central.pay.close``):
# a re-close skips a worker whose inputs and stored outputs still have these digests. Derived and
# disposable: a missing or different row only means that worker goes through the full path.
close_digests = Table(
    "close_digests",
    metadata,
    Column("scope", String(64), primary_key=True),  # "YYYY-MM-DD..YYYY-MM-DD@<zone>"
    Column("kind", String(8), primary_key=True),  # shifts | pay
    Column("registration", String(64), primary_key=True),
    Column("input_digest", String(64), nullable=False),  # SHA-256 (hex) of what the rebuild read
    Column("output_digest", String(64), nullable=False),  # SHA-256 (hex) of the rows it left stored
    Column("recorded_at", DateTime(timezone=True), nullable=False),
)
