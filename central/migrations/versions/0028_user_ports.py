"""office users' port scope (issue 37 item 4, many ports on one ledger): ``office_users.ports``,
the ports a user may see: NULL (every user made before) the office's home port (``port`` of
central.toml), ``*`` every port the office serves, else port ids separated by commas
(``central.web.ports``)

Revision ID: 0028
Revises: 0027
Create Date: 2026-12-06 11:10:00
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision = '0028'
down_revision = '0027'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('office_users', schema=None) as batch_op:
        batch_op.add_column(sa.Column('ports', sa.String(length=1000), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('office_users', schema=None) as batch_op:
        batch_op.drop_column('ports')
