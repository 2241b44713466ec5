"""billing lines (P8), shift corrections (P6 meal worked recorded by the office), admissions

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 09:30:00
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('billing_lines',
    sa.Column('billing_id', sa.String(length=200), nullable=False),
    sa.Column('source', sa.String(length=16), nullable=False),
    sa.Column('ship', sa.String(length=32), nullable=False),
    sa.Column('work_day', sa.Date(), nullable=False),
    sa.Column('ref', sa.String(length=160), nullable=False),
    sa.Column('registration', sa.String(length=64), nullable=True),
    sa.Column('rule', sa.String(length=16), nullable=False),
    sa.Column('article', sa.String(length=128), nullable=False),
    sa.Column('description', sa.Text(), nullable=False),
    sa.Column('amount_cents', sa.BigInteger(), nullable=False),
    sa.Column('computed_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('billing_id', name=op.f('pk_billing_lines'))
    )
    with op.batch_alter_table('billing_lines', schema=None) as batch_op:
        batch_op.create_index('ix_billing_lines_work_day', ['work_day'], unique=False)
    op.create_table('shift_corrections',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('shift_id', sa.String(length=160), nullable=False),
    sa.Column('field', sa.String(length=32), nullable=False),
    sa.Column('value', sa.Boolean(), nullable=False),
    sa.Column('reason', sa.Text(), nullable=False),
    sa.Column('actor', sa.String(length=128), nullable=False),
    sa.Column('recorded_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_shift_corrections'))
    )
    with op.batch_alter_table('shift_corrections', schema=None) as batch_op:
        batch_op.create_index('ix_shift_corrections_shift', ['shift_id', 'id'], unique=False)
    op.create_table('admissions',
    sa.Column('registration', sa.String(length=64), nullable=False),
    sa.Column('birth_date', sa.Date(), nullable=False),
    sa.Column('nationality', sa.String(length=8), nullable=False),
    sa.Column('registered_on', sa.Date(), nullable=False),
    sa.Column('evidence', sa.JSON(), nullable=False),
    sa.Column('recorded_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('actor', sa.String(length=128), nullable=False),
    sa.ForeignKeyConstraint(['registration'], ['workers.registration'], name=op.f('fk_admissions_registration_workers')),
    sa.PrimaryKeyConstraint('registration', name=op.f('pk_admissions'))
    )


def downgrade() -> None:
    op.drop_table('admissions')
    with op.batch_alter_table('shift_corrections', schema=None) as batch_op:
        batch_op.drop_index('ix_shift_corrections_shift')
    op.drop_table('shift_corrections')
    with op.batch_alter_table('billing_lines', schema=None) as batch_op:
        batch_op.drop_index('ix_billing_lines_work_day')
    op.drop_table('billing_lines')
