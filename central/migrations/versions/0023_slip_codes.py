"""slip codes: the random token printed on each payslip (QR code and short URL) that the office's
public verification page looks up (``central.pay.slip_codes``)

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-06 08:10:00
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0023'
down_revision = '0022'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('slip_codes',
    sa.Column('token', sa.String(length=20), nullable=False),
    sa.Column('code', sa.String(length=32), nullable=False),
    sa.Column('registration', sa.String(length=64), nullable=False),
    sa.Column('date_from', sa.Date(), nullable=False),
    sa.Column('date_to', sa.Date(), nullable=False),
    sa.Column('total_cents', sa.BigInteger(), nullable=False),
    sa.Column('header', sa.Text(), nullable=False),
    sa.Column('issued_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('token', name=op.f('pk_slip_codes')),
    sa.UniqueConstraint('code', name=op.f('uq_slip_codes_code'))
    )


def downgrade() -> None:
    op.drop_table('slip_codes')
