"""worker identifiers: the CPF and PIS/NIS of each worker (bare digits, checked by their check
digits, ``portgate.docbr``) for the payroll CSV and the payslip; nullable (workers registered
before carry none until the office types them)

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-06 08:00:00
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0022'
down_revision = '0021'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('workers', schema=None) as batch_op:
        batch_op.add_column(sa.Column('cpf', sa.String(length=11), nullable=True))
        batch_op.add_column(sa.Column('pis', sa.String(length=11), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('workers', schema=None) as batch_op:
        batch_op.drop_column('pis')
        batch_op.drop_column('cpf')
