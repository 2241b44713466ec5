"""the port a roster change concerns (issue 37 item 4, one roster per served port):
``downlink_changes.port``, written with each ``roster``/``cards`` change row: the worker's port
(``workers.port``; a card's: its holder's) when the row was made, so each port's downlink chain
(``central.broadcast.port_roster``) sees only its own workers' changes and a port's version never
moves back when a worker moves. NULL (every row made before, an escala row, a worker of the home
port) is the office's home port, as ``workers.port`` (0029).

Revision ID: 0033
Revises: 0032
Create Date: 2026-12-06 18:10:00
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision = '0033'
down_revision = '0032'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('downlink_changes', schema=None) as batch_op:
        batch_op.add_column(sa.Column('port', sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('downlink_changes', schema=None) as batch_op:
        batch_op.drop_column('port')
