"""statement hold for the office's review (EARLY_EXIT, RULES.md P and G9)

Revision ID: 0006
Revises: 0004
Create Date: 2026-12-01 09:30:00
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0006'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('statements', schema=None) as batch_op:
        batch_op.add_column(sa.Column('hold_reason', sa.Text(), nullable=True))
        batch_op.add_column(sa.Column('hold_released_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('hold_note', sa.String(length=255), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('statements', schema=None) as batch_op:
        batch_op.drop_column('hold_note')
        batch_op.drop_column('hold_released_at')
        batch_op.drop_column('hold_reason')
