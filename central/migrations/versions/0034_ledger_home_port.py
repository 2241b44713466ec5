"""the ledger's home port (issue 37 item 4, several ports' configs on one ledger): ``ledger_home``,
one row naming the home port under which the ledger's NULL ``workers.port`` were read first
(``central.ledger.home.need_served`` records it and refuses a config of another home port while
NULL-port workers remain). Empty on every ledger made before.

Revision ID: 0034
Revises: 0033
Create Date: 2026-12-06 18:45:00
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision = '0034'
down_revision = '0033'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('ledger_home',
                    sa.Column('id', sa.Integer(), autoincrement=False, nullable=False),
                    sa.Column('port', sa.String(length=64), nullable=False),
                    sa.Column('recorded_at', sa.DateTime(timezone=True), nullable=False),
                    sa.PrimaryKeyConstraint('id'))


def downgrade() -> None:
    op.drop_table('ledger_home')
