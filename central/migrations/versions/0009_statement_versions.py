"""statement versions: superseded statements are kept, one current per shift (issue 20)

Revision ID: 0009
Revises: 0006
Create Date: 2026-12-01 10:00:00
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0009'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('statements', schema=None) as batch_op:
        batch_op.add_column(sa.Column('version', sa.Integer(), nullable=False, server_default='1'))
        batch_op.add_column(sa.Column('digest', sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column('computed_by', sa.String(length=128), nullable=True))
        batch_op.add_column(sa.Column('superseded_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('superseded_by', sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column('superseded_reason', sa.Text(), nullable=True))
        batch_op.create_index('ix_statements_shift_current', ['shift_id', 'superseded_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('statements', schema=None) as batch_op:
        batch_op.drop_index('ix_statements_shift_current')
        batch_op.drop_column('superseded_reason')
        batch_op.drop_column('superseded_by')
        batch_op.drop_column('superseded_at')
        batch_op.drop_column('computed_by')
        batch_op.drop_column('digest')
        batch_op.drop_column('version')
