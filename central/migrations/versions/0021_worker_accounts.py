"""worker accounts: an office user of role worker bound to one registration, the single-use
activation codes (stored as SHA-256) the office prints for them, and the workers' refusals of a
dispatch for health reasons (R3) with a photo of the certificate, pending the office's decision

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-06 05:30:00
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0021'
down_revision = '0020'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('worker_accounts',
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('registration', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['registration'], ['workers.registration'],
                            name=op.f('fk_worker_accounts_registration_workers')),
    sa.ForeignKeyConstraint(['user_id'], ['office_users.id'], name=op.f('fk_worker_accounts_user_id_office_users')),
    sa.PrimaryKeyConstraint('user_id', name=op.f('pk_worker_accounts')),
    sa.UniqueConstraint('registration', name=op.f('uq_worker_accounts_registration'))
    )
    op.create_table('worker_activations',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('code_hash', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('used_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('actor', sa.String(length=128), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['office_users.id'],
                            name=op.f('fk_worker_activations_user_id_office_users')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_worker_activations')),
    sa.UniqueConstraint('code_hash', name=op.f('uq_worker_activations_code_hash'))
    )
    with op.batch_alter_table('worker_activations', schema=None) as batch_op:
        batch_op.create_index('ix_worker_activations_user_id', ['user_id'], unique=False)
    op.create_table('worker_requests',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('registration', sa.String(length=64), nullable=False),
    sa.Column('escala_id', sa.Integer(), nullable=False),
    sa.Column('reason', sa.Text(), nullable=False),
    sa.Column('filename', sa.String(length=255), nullable=False),
    sa.Column('content_type', sa.String(length=64), nullable=False),
    sa.Column('photo', sa.LargeBinary(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('decided_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('decided_by', sa.String(length=128), nullable=True),
    sa.Column('refusal_id', sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(['escala_id'], ['escala.id'], name=op.f('fk_worker_requests_escala_id_escala')),
    sa.ForeignKeyConstraint(['registration'], ['workers.registration'],
                            name=op.f('fk_worker_requests_registration_workers')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_worker_requests'))
    )
    with op.batch_alter_table('worker_requests', schema=None) as batch_op:
        batch_op.create_index('ix_worker_requests_registration', ['registration'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('worker_requests', schema=None) as batch_op:
        batch_op.drop_index('ix_worker_requests_registration')
    op.drop_table('worker_requests')
    with op.batch_alter_table('worker_activations', schema=None) as batch_op:
        batch_op.drop_index('ix_worker_activations_user_id')
    op.drop_table('worker_activations')
    op.drop_table('worker_accounts')
