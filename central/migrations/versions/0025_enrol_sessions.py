"""enrol sessions: enrol mode on a chosen gate (issue 34), the card the gate read and who bound it

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-06 08:00:00
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0025'
down_revision = '0024'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('enrol_sessions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('registration', sa.String(length=64), nullable=False),
    sa.Column('gate_id', sa.String(length=64), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('state', sa.String(length=16), nullable=False),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('until', sa.DateTime(timezone=True), nullable=False),
    sa.Column('started_by', sa.String(length=128), nullable=False),
    sa.Column('uid', sa.String(length=32), nullable=True),
    sa.Column('read_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('event_id', sa.String(length=36), nullable=True),
    sa.Column('ended_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('ended_by', sa.String(length=128), nullable=True),
    sa.ForeignKeyConstraint(['registration'], ['workers.registration'],
                            name=op.f('fk_enrol_sessions_registration_workers')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_enrol_sessions'))
    )
    with op.batch_alter_table('enrol_sessions', schema=None) as batch_op:
        batch_op.create_index('ix_enrol_sessions_registration', ['registration'], unique=False)
        batch_op.create_index('ix_enrol_sessions_gate_state', ['gate_id', 'state'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('enrol_sessions', schema=None) as batch_op:
        batch_op.drop_index('ix_enrol_sessions_gate_state')
        batch_op.drop_index('ix_enrol_sessions_registration')
    op.drop_table('enrol_sessions')
