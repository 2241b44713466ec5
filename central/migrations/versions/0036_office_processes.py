"""the office processes running on a ledger (issue 37 item 4, many ports on one ledger):
``office_processes``, one row per ``portgate central run`` / ``portgate office serve`` process,
refreshed while it runs (``central.ledger.liveness``), so ``portgate ledger home-port --set`` can tell
that offices reading the old home port are still running. Empty on every ledger made before.

Revision ID: 0036
Revises: 0035
Create Date: 2026-12-07 05:40:00
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision = '0036'
down_revision = '0035'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('office_processes',
                    sa.Column('id', sa.String(length=32), nullable=False),
                    sa.Column('kind', sa.String(length=16), nullable=False),
                    sa.Column('home_port', sa.String(length=64), nullable=False),
                    sa.Column('host', sa.String(length=255), nullable=False),
                    sa.Column('pid', sa.Integer(), nullable=False),
                    sa.Column('started_at', sa.DateTime(timezone=True), nullable=False),
                    sa.Column('seen_at', sa.DateTime(timezone=True), nullable=False),
                    sa.PrimaryKeyConstraint('id', name=op.f('pk_office_processes')))


def downgrade() -> None:
    op.drop_table('office_processes')
