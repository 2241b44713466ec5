"""statement versions (superseded kept, one current per shift) and the gates' signed chain:
event links, chain breaks, office receipts

Revision ID: 0009
Revises: 0007
Create Date: 2026-12-01 10:00:00
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0009'
down_revision = '0007'
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
    op.create_table('event_links',
    sa.Column('gate_id', sa.String(length=64), nullable=False),
    sa.Column('seq', sa.BigInteger(), nullable=False),
    sa.Column('event_id', sa.String(length=36), nullable=False),
    sa.Column('hash', sa.String(length=64), nullable=False),
    sa.Column('prev', sa.String(length=64), nullable=False),
    sa.Column('segment', sa.Boolean(), nullable=False),
    sa.PrimaryKeyConstraint('gate_id', 'seq', name=op.f('pk_event_links'))
    )
    op.create_table('chain_breaks',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('gate_id', sa.String(length=64), nullable=False),
    sa.Column('seq_from', sa.BigInteger(), nullable=False),
    sa.Column('seq_to', sa.BigInteger(), nullable=False),
    sa.Column('kind', sa.String(length=32), nullable=False),
    sa.Column('detail', sa.Text(), nullable=False),
    sa.Column('event_id', sa.String(length=36), nullable=True),
    sa.Column('recorded_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_chain_breaks'))
    )
    with op.batch_alter_table('chain_breaks', schema=None) as batch_op:
        batch_op.create_index('ix_chain_breaks_gate', ['gate_id', 'seq_from'], unique=False)
    op.create_table('chain_receipts',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('gate_id', sa.String(length=64), nullable=False),
    sa.Column('seq', sa.BigInteger(), nullable=False),
    sa.Column('head', sa.String(length=64), nullable=False),
    sa.Column('issued_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('body', sa.LargeBinary(), nullable=False),
    sa.Column('sig', sa.String(length=128), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_chain_receipts'))
    )
    with op.batch_alter_table('chain_receipts', schema=None) as batch_op:
        batch_op.create_index('ix_chain_receipts_gate', ['gate_id', 'seq'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('chain_receipts', schema=None) as batch_op:
        batch_op.drop_index('ix_chain_receipts_gate')
    op.drop_table('chain_receipts')
    with op.batch_alter_table('chain_breaks', schema=None) as batch_op:
        batch_op.drop_index('ix_chain_breaks_gate')
    op.drop_table('chain_breaks')
    op.drop_table('event_links')
    with op.batch_alter_table('statements', schema=None) as batch_op:
        batch_op.drop_index('ix_statements_shift_current')
        batch_op.drop_column('superseded_reason')
        batch_op.drop_column('superseded_by')
        batch_op.drop_column('superseded_at')
        batch_op.drop_column('computed_by')
        batch_op.drop_column('digest')
        batch_op.drop_column('version')
