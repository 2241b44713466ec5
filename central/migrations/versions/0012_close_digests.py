"""close digests: per worker, the digests of what the last month close read and stored (a
re-close skips the workers whose inputs and stored rows are unchanged)

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-01 15:30:00
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('close_digests',
    sa.Column('scope', sa.String(length=64), nullable=False),
    sa.Column('kind', sa.String(length=8), nullable=False),
    sa.Column('registration', sa.String(length=64), nullable=False),
    sa.Column('input_digest', sa.String(length=64), nullable=False),
    sa.Column('output_digest', sa.String(length=64), nullable=False),
    sa.Column('recorded_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('scope', 'kind', 'registration', name=op.f('pk_close_digests'))
    )


def downgrade() -> None:
    op.drop_table('close_digests')
