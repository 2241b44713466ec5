"""the audit log's port (issue 37 item 4, many ports on one ledger): ``audit_log.port``, the port of
the object an entry names, written with the entry (``central.registry.audit_ports``): a worker's (his
``workers.port``), a card's (its holder's), a case's (``cases.port``), a flagged event's
(``events.port``), a shift's, an alarm's, a ship call's (its gate's). As ``workers.port``, NULL is the
office's home port. ``*`` is an entry shown only to a user who sees every port: an entry about no
port's object (an office user, a day's dispatch, a pay mark), and every entry made before this
migration, whose port it cannot know (the configuration's ports are not in the ledger; docs/office.md).
The column's default is ``*`` too, so a writer that names no port never shows an entry to the wrong
port. Index ``(port, id)``: a one-port user's audit log page, newest first.

Revision ID: 0031
Revises: 0030
Create Date: 2026-12-06 17:20:00
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision = '0031'
down_revision = '0030'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # add_column with a constant default: every existing row gets '*' (all-ports users only)
    op.add_column('audit_log', sa.Column('port', sa.String(length=64), nullable=True, server_default='*'))
    op.create_index('ix_audit_log_port', 'audit_log', ['port', 'id'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_audit_log_port', table_name='audit_log')
    with op.batch_alter_table('audit_log', schema=None) as batch_op:
        batch_op.drop_column('port')
