"""reader health at the office: each gate's readers as its last status said (gate_status.readers,
JSON) and the reader alarms raised and ended from them (reader_alarms)

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-06 05:30:00
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0018'
down_revision = '0017'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('gate_status') as batch:
        batch.add_column(sa.Column('readers', sa.JSON(), nullable=True))
    op.create_table('reader_alarms',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('gate_id', sa.String(length=64), nullable=False),
    sa.Column('reader_id', sa.String(length=64), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('raised_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('ended_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('detail', sa.Text(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_reader_alarms'))
    )
    op.create_index('ix_reader_alarms_open', 'reader_alarms', ['gate_id', 'reader_id', 'ended_at'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_reader_alarms_open', table_name='reader_alarms')
    op.drop_table('reader_alarms')
    with op.batch_alter_table('gate_status') as batch:
        batch.drop_column('readers')
