"""Ship calls and coverage alarms (RULES.md G11, 83.611 arts. 5-8).

- ``ship_calls``: a ship's stay in port as the office keeps it (``ships.csv`` import or the web
  form): IMO, name, voyage (``long_haul | cabotage``), berth, the gate at its gangway, arrival and
  departure (departure empty while the ship is still in port).
- ``coverage_alarms``: one row per COVERAGE_GAP raised by the office: the ship call, the period
  whose start it concerns, when it was raised (period start + grace), when it ended (a watchman
  admitted at the ship's gate) and the event that ended it.
- ``alarm_acks``: an alarm acknowledged by a person, with a comment (``central.calls.acks``): one
  row per alarm (``kind`` coverage | reader, its id), the latest acknowledgement.
"""

from __future__ import annotations

from sqlalchemy import Column, DateTime, ForeignKey, Index, Integer, String, Table, Text, UniqueConstraint

from central.db import metadata

ship_calls = Table(
    "ship_calls",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("ship", String(32), nullable=False),  # IMO number
    Column("ship_name", String(255), nullable=False, default=""),
    Column("voyage", String(16), nullable=False),  # long_haul | cabotage
    Column("berth", String(16), nullable=False),  # berthed | anchored
    Column("gate_id", String(64), nullable=True),
    Column("arrival", DateTime(timezone=True), nullable=False),
    Column("departure", DateTime(timezone=True), nullable=True),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Column("actor", String(128), nullable=False),
)
Index("ix_ship_calls_ship", ship_calls.c.ship, ship_calls.c.arrival)

coverage_alarms = Table(
    "coverage_alarms",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("call_id", Integer, ForeignKey("ship_calls.id"), nullable=False),
    Column("ship", String(32), nullable=False),
    Column("gate_id", String(64), nullable=True),
    Column("period_start", DateTime(timezone=True), nullable=False),
    Column("raised_at", DateTime(timezone=True), nullable=False),
    Column("ended_at", DateTime(timezone=True), nullable=True),
    Column("ended_by_event", String(36), nullable=True),
    UniqueConstraint("call_id", "period_start", name="uq_coverage_alarms_call_period"),
)
Index("ix_coverage_alarms_open", coverage_alarms.c.ended_at)

alarm_acks = Table(
    "alarm_acks",
    metadata,
    Column("kind", String(16), primary_key=True),  # coverage | reader
    Column("alarm_id", Integer, primary_key=True),
    Column("comment", Text, nullable=False),
    Column("actor", String(128), nullable=False),
    Column("at", DateTime(timezone=True), nullable=False),
)
