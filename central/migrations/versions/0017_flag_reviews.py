"""flag reviews: an inspector's acknowledgement of a flagged gate event (with a comment) or its
closing as no infraction; the flag queue's state (new / seen / handled) reads it

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-06 05:40:00
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0017'
down_revision = '0016'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "flag_reviews",
        sa.Column("event_id", sa.String(36), primary_key=True),
        sa.Column("outcome", sa.String(16), nullable=False),
        sa.Column("comment", sa.Text, nullable=False),
        sa.Column("actor", sa.String(128), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("flag_reviews")
