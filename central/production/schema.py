"""Ledger tables of production pay (rules E1-E6, C1-C6), written by ``central.production.store``.

Money is stored as whole cents (``BigInteger``) so SQLite and PostgreSQL both keep it exact and SQL
can sum it; quantities as thousandths of their unit (the tally allows 3 decimal places); the exact
quota value and quotas as decimal text. One ``production_gangs`` row per gang, ship date (unique on
gang id + date: importing a gang twice is refused). Everything else hangs off it.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    Date,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from central.db import metadata

production_gangs = Table(
    "production_gangs",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("gang_id", String(64), nullable=False),
    Column("work_date", Date, nullable=False),
    Column("ship", String(64), nullable=False),
    Column("period", String(8), nullable=False),
    Column("rulebook", String(64), nullable=False),
    Column("rulebook_version", Date, nullable=False),  # effective_from of the version used
    Column("labour_cents", BigInteger, nullable=False),  # E1
    Column("tonnes_milli", BigInteger, nullable=False),
    Column("total_quotas", String(32), nullable=False),  # exact decimal text
    Column("quota_value", String(64), nullable=False),  # exact decimal text (never rounded)
    Column("rounding_difference_cents", BigInteger, nullable=False),  # labour − Σ rounded shares
    Column("billing_cents", BigInteger, nullable=False),  # C5
    Column("service_end", DateTime(timezone=True), nullable=False),
    Column("source", String(255), nullable=False),  # "csv" or "bus:<message_id>"
    Column("imported_at", DateTime(timezone=True), nullable=False),
    UniqueConstraint("gang_id", "work_date", name="uq_production_gangs_gang_date"),
)

production_members = Table(
    "production_members",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("gang_row", Integer, ForeignKey("production_gangs.id"), nullable=False),
    Column("registration", String(64), nullable=False),
    Column("role", String(64), nullable=False),
    Column("boarded", String(3), nullable=False),  # yes | no (absent members kept for the audit)
    Column("quotas", String(32), nullable=False),
    Column("minutes_worked", String(32), nullable=False),
    Column("total_cents", BigInteger, nullable=False),
    Column("disputed_cents", BigInteger, nullable=False),  # E6: recorded as disputed, deposited
    Column("payable_cents", BigInteger, nullable=False),  # E6: undisputed part, due by due_at
    Column("due_at", DateTime(timezone=True), nullable=True),
)
Index("ix_production_members_registration", production_members.c.registration)

production_lines = Table(
    "production_lines",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("gang_row", Integer, ForeignKey("production_gangs.id"), nullable=False),
    Column("section", String(8), nullable=False),  # labour | member | billing
    Column("registration", String(64), nullable=True),  # member lines only
    Column("seq", Integer, nullable=False),  # order within the section (and member)
    Column("rule", String(8), nullable=False),
    Column("article", String(128), nullable=False),
    Column("description", Text, nullable=False),
    Column("amount_cents", BigInteger, nullable=False),
)
Index("ix_production_lines_registration_rule", production_lines.c.registration, production_lines.c.rule)

production_inputs = Table(
    "production_inputs",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("gang_row", Integer, ForeignKey("production_gangs.id"), nullable=False),
    Column("kind", String(16), nullable=False),  # tally | interruption | dispute | flag | extra (C9)
    Column("what", String(64), nullable=False),  # cargo class, interruption kind, disputed rule
    Column("registration", String(64), nullable=True),  # dispute only
    Column("value", String(32), nullable=True),  # quantity, minutes, disputed amount (decimal text)
    Column("note", Text, nullable=True),  # dispute reason
    Column("source", String(255), nullable=False),  # tally.csv:4, message m1 tally[0]
)

TABLES = (production_gangs, production_members, production_lines, production_inputs)
