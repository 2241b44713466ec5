"""a rate limit shared by every web process of the office (issue 37: the cluster runs several):
``rate_hits``, one row per look-up a limit allowed (``central.web.shared_limit``: the public
payslip verification page's per-client limit), so N processes on one ledger count the same
look-ups instead of allowing N times the limit. Rows older than the limit's window are deleted by
the look-ups themselves. Indexes: ``(name, key, at)`` (one client's count), ``(at)`` (the expiry).

Revision ID: 0032
Revises: 0031
Create Date: 2026-12-06 17:40:00
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision = '0032'
down_revision = '0031'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'rate_hits',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('name', sa.String(length=32), nullable=False),
        sa.Column('key', sa.String(length=64), nullable=False),
        sa.Column('at', sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index('ix_rate_hits_name_key_at', 'rate_hits', ['name', 'key', 'at'], unique=False)
    op.create_index('ix_rate_hits_at', 'rate_hits', ['at'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_rate_hits_at', table_name='rate_hits')
    op.drop_index('ix_rate_hits_name_key_at', table_name='rate_hits')
    op.drop_table('rate_hits')
