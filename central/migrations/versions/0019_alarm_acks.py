"""alarm acknowledgements: a coverage or reader alarm acknowledged by a person with a comment

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-06 06:10:00
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0019'
down_revision = '0018'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "alarm_acks",
        sa.Column("kind", sa.String(16), primary_key=True),
        sa.Column("alarm_id", sa.Integer, primary_key=True),
        sa.Column("comment", sa.Text, nullable=False),
        sa.Column("actor", sa.String(128), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("alarm_acks")
