"""office web sessions held server-side (logout, new password and disable end them)

Revision ID: 0011
Revises: 0009
Create Date: 2026-12-01 10:30:00
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0011'
down_revision = '0009'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('office_sessions',
    sa.Column('id', sa.String(length=64), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('ended_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['user_id'], ['office_users.id'], name=op.f('fk_office_sessions_user_id_office_users')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_office_sessions'))
    )
    with op.batch_alter_table('office_sessions', schema=None) as batch_op:
        batch_op.create_index('ix_office_sessions_user_id', ['user_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('office_sessions', schema=None) as batch_op:
        batch_op.drop_index('ix_office_sessions_user_id')
    op.drop_table('office_sessions')
