"""workers listed by name: an index on workers(name, registration) for the office's worker list
(keyset paging over 50,000 workers, ``central.web.registrymodel.worker_list``)

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-06 05:30:00
"""
from __future__ import annotations

from alembic import op


revision = '0020'
down_revision = '0019'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('workers', schema=None) as batch_op:
        batch_op.create_index('ix_workers_name_registration', ['name', 'registration'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('workers', schema=None) as batch_op:
        batch_op.drop_index('ix_workers_name_registration')
