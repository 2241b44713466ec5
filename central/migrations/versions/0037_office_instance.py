"""each office process's instance (issue 37, two offices on one config): ``office_processes.instance``,
the ``--instance`` name of a ``portgate central run`` (``''``: none given, the default instance), and
``office_processes.proc_start``, its process's start time in clock ticks since boot
(``/proc/<pid>/stat``; NULL where it cannot be read), so a starting office tells a live holder of its
port and instance from a dead one (``central.ledger.instance_claim``). Every row made before gets the
default instance and no start time.

Revision ID: 0037
Revises: 0036
Create Date: 2026-12-07 11:30:00
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision = '0037'
down_revision = '0036'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('office_processes', schema=None) as batch_op:
        # a constant default: every existing row is the default instance ('')
        batch_op.add_column(sa.Column('instance', sa.String(length=64), nullable=False, server_default=''))
        batch_op.add_column(sa.Column('proc_start', sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('office_processes', schema=None) as batch_op:
        batch_op.drop_column('proc_start')
        batch_op.drop_column('instance')
