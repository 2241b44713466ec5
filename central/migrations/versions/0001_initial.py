"""initial: events, dead letters, gate progress, shifts, flags, statements

Revision ID: 0001
Revises: 
Create Date: 2026-11-30 00:59:53.449683
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('dead_letters',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('received_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('topic', sa.String(length=255), nullable=False),
    sa.Column('reason', sa.Text(), nullable=False),
    sa.Column('gate_id', sa.String(length=64), nullable=True),
    sa.Column('event_id', sa.String(length=36), nullable=True),
    sa.Column('raw', sa.LargeBinary(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_dead_letters'))
    )
    op.create_table('events',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('event_id', sa.String(length=36), nullable=False),
    sa.Column('port', sa.String(length=64), nullable=False),
    sa.Column('gate_id', sa.String(length=64), nullable=False),
    sa.Column('boot_id', sa.String(length=64), nullable=False),
    sa.Column('seq', sa.BigInteger(), nullable=False),
    sa.Column('occurred_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('clock_trusted', sa.Boolean(), nullable=False),
    sa.Column('mono_ns', sa.BigInteger(), nullable=False),
    sa.Column('type', sa.String(length=32), nullable=False),
    sa.Column('registration', sa.String(length=64), nullable=True),
    sa.Column('decision', sa.String(length=16), nullable=True),
    sa.Column('payload', sa.JSON(), nullable=False),
    sa.Column('mac', sa.String(length=64), nullable=False),
    sa.Column('raw', sa.LargeBinary(), nullable=False),
    sa.Column('received_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_events')),
    sa.UniqueConstraint('event_id', name=op.f('uq_events_event_id'))
    )
    with op.batch_alter_table('events', schema=None) as batch_op:
        batch_op.create_index('ix_events_gate_seq', ['gate_id', 'seq'], unique=False)
        batch_op.create_index('ix_events_registration_time', ['registration', 'occurred_at'], unique=False)

    op.create_table('gate_progress',
    sa.Column('gate_id', sa.String(length=64), nullable=False),
    sa.Column('highest_seq', sa.BigInteger(), nullable=False),
    sa.Column('contiguous_seq', sa.BigInteger(), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('gate_id', name=op.f('pk_gate_progress'))
    )
    op.create_table('shifts',
    sa.Column('shift_id', sa.String(length=160), nullable=False),
    sa.Column('registration', sa.String(length=64), nullable=False),
    sa.Column('ship', sa.String(length=32), nullable=False),
    sa.Column('work_date', sa.Date(), nullable=False),
    sa.Column('period', sa.String(length=8), nullable=False),
    sa.Column('function', sa.String(length=32), nullable=False),
    sa.Column('berth', sa.String(length=16), nullable=False),
    sa.Column('voyage', sa.String(length=16), nullable=True),
    sa.Column('post', sa.String(length=64), nullable=True),
    sa.Column('gate_id', sa.String(length=64), nullable=True),
    sa.Column('period_start', sa.DateTime(timezone=True), nullable=False),
    sa.Column('period_end', sa.DateTime(timezone=True), nullable=False),
    sa.Column('admit_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('exit_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('closed_by', sa.String(length=16), nullable=False),
    sa.Column('admit_event_id', sa.String(length=36), nullable=True),
    sa.Column('exit_event_id', sa.String(length=36), nullable=True),
    sa.Column('meal_worked', sa.Boolean(), nullable=False),
    sa.Column('held', sa.Boolean(), nullable=False),
    sa.Column('rebuilt_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('shift_id', name=op.f('pk_shifts'))
    )
    with op.batch_alter_table('shifts', schema=None) as batch_op:
        batch_op.create_index('ix_shifts_registration', ['registration', 'period_start'], unique=False)
        batch_op.create_index('ix_shifts_work_date', ['work_date'], unique=False)

    op.create_table('statements',
    sa.Column('statement_id', sa.String(length=200), nullable=False),
    sa.Column('shift_id', sa.String(length=160), nullable=False),
    sa.Column('registration', sa.String(length=64), nullable=False),
    sa.Column('rulebook', sa.String(length=64), nullable=False),
    sa.Column('work_day', sa.Date(), nullable=False),
    sa.Column('total_cents', sa.BigInteger(), nullable=False),
    sa.Column('flags', sa.Text(), nullable=False),
    sa.Column('service_end', sa.DateTime(timezone=True), nullable=False),
    sa.Column('due_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('computed_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('paid_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('paid_ref', sa.String(length=128), nullable=True),
    sa.PrimaryKeyConstraint('statement_id', name=op.f('pk_statements'))
    )
    with op.batch_alter_table('statements', schema=None) as batch_op:
        batch_op.create_index('ix_statements_due', ['paid_at', 'due_at'], unique=False)
        batch_op.create_index('ix_statements_work_day', ['work_day'], unique=False)

    op.create_table('shift_flags',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('shift_id', sa.String(length=160), nullable=False),
    sa.Column('flag', sa.String(length=40), nullable=False),
    sa.Column('detail', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['shift_id'], ['shifts.shift_id'], name=op.f('fk_shift_flags_shift_id_shifts'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_shift_flags'))
    )
    with op.batch_alter_table('shift_flags', schema=None) as batch_op:
        batch_op.create_index('ix_shift_flags_shift', ['shift_id'], unique=False)

    op.create_table('statement_lines',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('statement_id', sa.String(length=200), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('rule', sa.String(length=16), nullable=False),
    sa.Column('article', sa.String(length=128), nullable=False),
    sa.Column('description', sa.String(length=255), nullable=False),
    sa.Column('amount_cents', sa.BigInteger(), nullable=False),
    sa.ForeignKeyConstraint(['statement_id'], ['statements.statement_id'], name=op.f('fk_statement_lines_statement_id_statements'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_statement_lines'))
    )
    with op.batch_alter_table('statement_lines', schema=None) as batch_op:
        batch_op.create_index('ix_statement_lines_statement', ['statement_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('statement_lines', schema=None) as batch_op:
        batch_op.drop_index('ix_statement_lines_statement')

    op.drop_table('statement_lines')
    with op.batch_alter_table('shift_flags', schema=None) as batch_op:
        batch_op.drop_index('ix_shift_flags_shift')

    op.drop_table('shift_flags')
    with op.batch_alter_table('statements', schema=None) as batch_op:
        batch_op.drop_index('ix_statements_work_day')
        batch_op.drop_index('ix_statements_due')

    op.drop_table('statements')
    with op.batch_alter_table('shifts', schema=None) as batch_op:
        batch_op.drop_index('ix_shifts_work_date')
        batch_op.drop_index('ix_shifts_registration')

    op.drop_table('shifts')
    op.drop_table('gate_progress')
    with op.batch_alter_table('events', schema=None) as batch_op:
        batch_op.drop_index('ix_events_registration_time')
        batch_op.drop_index('ix_events_gate_seq')

    op.drop_table('events')
    op.drop_table('dead_letters')
