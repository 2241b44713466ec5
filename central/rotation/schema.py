"""Rotation tables: requisitions, the stored escala, refusals (R3) and each worker's last turn.

``escala`` keeps removed rows (substituted, refused) with ``status = removed`` so the day's history
is never lost; gates see only active rows (a delete change row goes out when one is removed).
``rotation_turns.last_turn`` is the rotation queue: per category, the next worker is the eligible
one with the smallest (last_turn, rotation_number); taking a worker gives them the category's next
turn number, so a skipped worker keeps their place (R1, R2).
"""

from __future__ import annotations

from sqlalchemy import Column, Date, DateTime, ForeignKey, Index, Integer, String, Table, Text

from central.db import metadata

requisitions = Table(
    "requisitions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("ref", String(128), nullable=False),  # the requisitioner's reference or file:line
    Column("date", Date, nullable=False),
    Column("period", String(8), nullable=False),
    Column("operator", String(128), nullable=False),
    Column("ship", String(32), nullable=False),
    Column("ship_name", String(255), nullable=False),
    Column("voyage", String(16), nullable=False),
    Column("berth", String(16), nullable=False),
    Column("gate_id", String(64), nullable=False),
    Column("post", String(64), nullable=False),
    Column("function", String(64), nullable=False),
    Column("category", String(64), nullable=False),
    Column("workers", Integer, nullable=False),
    Column("filled", Integer, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("actor", String(128), nullable=False),
)
Index("ix_requisitions_date", requisitions.c.date)

escala = Table(
    "escala",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("date", Date, nullable=False),
    Column("period", String(8), nullable=False),
    Column("ship", String(32), nullable=False),
    Column("ship_name", String(255), nullable=False),
    Column("voyage", String(16), nullable=False),
    Column("berth", String(16), nullable=False),
    Column("gate_id", String(64), nullable=False),
    Column("post", String(64), nullable=False),
    Column("function", String(64), nullable=False),
    Column("registration", String(64), nullable=False),
    Column("operator", String(128), nullable=False),
    Column("requisition_id", Integer, ForeignKey("requisitions.id"), nullable=True),
    Column("start_at", DateTime(timezone=True), nullable=False),  # UTC bounds of the period
    Column("end_at", DateTime(timezone=True), nullable=False),
    Column("status", String(16), nullable=False),  # active | removed
    Column("prev_turn", Integer, nullable=True),  # the worker's last_turn before this dispatch
    Column("removed_reason", Text, nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
)
Index("ix_escala_date", escala.c.date)
Index("ix_escala_registration_start", escala.c.registration, escala.c.start_at)

refusals = Table(
    "refusals",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("escala_id", Integer, ForeignKey("escala.id"), nullable=False),
    Column("registration", String(64), nullable=False),
    Column("date", Date, nullable=False),
    Column("health_proof", Text, nullable=True),  # reference of the medical proof, if any
    Column("infraction", Integer, nullable=False),  # 1 when recorded as an infraction (R3)
    Column("reason", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("actor", String(128), nullable=False),
)

rotation_turns = Table(
    "rotation_turns",
    metadata,
    Column("registration", String(64), primary_key=True),
    Column("category", String(64), nullable=False),
    Column("last_turn", Integer, nullable=False),
)
