"""read log and audit log indexes: the office's searches of a million taps and of the audit log,
keyset-paged newest first (``central.web.logmodel``): events by time, by gate, by decision and time, by the
card UID of the tap's payload (an expression index) and time; audit rows by time, subject, actor

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-06 08:30:00
"""
from __future__ import annotations

from alembic import op


revision = '0024'
down_revision = '0023'
branch_labels = None
depends_on = None

# the expression central.web.logmodel.tap_uid compiles to, per dialect
UID = {"sqlite": "json_extract(payload, '$.uid')", "postgresql": "(payload ->> 'uid')"}


def upgrade() -> None:
    op.create_index('ix_events_time', 'events', ['occurred_at', 'id'], unique=False)
    op.create_index('ix_events_gate_time', 'events', ['gate_id', 'occurred_at', 'id'], unique=False)
    op.create_index('ix_events_decision_time', 'events', ['decision', 'occurred_at', 'id'], unique=False)
    dialect = op.get_bind().dialect.name
    op.execute(f"CREATE INDEX ix_events_tap_uid ON events ({UID[dialect]}, occurred_at)")
    op.create_index('ix_audit_log_at', 'audit_log', ['at', 'id'], unique=False)
    op.create_index('ix_audit_log_subject', 'audit_log', ['subject', 'id'], unique=False)
    op.create_index('ix_audit_log_actor', 'audit_log', ['actor', 'id'], unique=False)


def downgrade() -> None:
    for name, table in (('ix_audit_log_actor', 'audit_log'), ('ix_audit_log_subject', 'audit_log'),
                        ('ix_audit_log_at', 'audit_log'), ('ix_events_tap_uid', 'events'),
                        ('ix_events_decision_time', 'events'), ('ix_events_gate_time', 'events'),
                        ('ix_events_time', 'events')):
        op.drop_index(name, table_name=table)
