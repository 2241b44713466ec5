"""workers of a category listed by name: an index on workers(category, name, registration) for the
office's worker list filtered by category (``central.web.registrymodel.worker_list``): without it
the planner reads the whole category through ``ix_workers_category_rotation`` and sorts it (50 ms
for a category of 17,000 of 50,000 workers) instead of walking its first 50 names

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-06 09:30:00
"""
from __future__ import annotations

from alembic import op


revision = '0026'
down_revision = '0025'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('workers', schema=None) as batch_op:
        batch_op.create_index('ix_workers_category_name_registration', ['category', 'name', 'registration'],
                              unique=False)


def downgrade() -> None:
    with op.batch_alter_table('workers', schema=None) as batch_op:
        batch_op.drop_index('ix_workers_category_name_registration')
