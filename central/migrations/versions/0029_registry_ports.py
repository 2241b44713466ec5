"""the registry's port (issue 37 item 4, many ports on one ledger): ``workers.port``, the port whose
OGMO registered the worker (Lei 12.815 art. 32-33: a worker is registered at one port's OGMO, his
cards follow him), and ``cases.port``, the port of the flagged event's gate. NULL (every row made
before, and a row imported without a port) is the office's home port (``port`` of central.toml), as
``office_users.ports`` (0028): the migration cannot read the configuration, and a NULL follows the
configuration's home port. A case whose event is in the ledger takes its event's port
(``events.port``); the others stay NULL (home). Indexes: the worker list of one port by name
(``ix_workers_port_name_registration``), the cases of one port (``ix_cases_port_status``).

Revision ID: 0029
Revises: 0028
Create Date: 2026-12-06 14:30:00
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision = '0029'
down_revision = '0028'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # add_column alone: SQLite's ALTER TABLE ADD COLUMN, no copy of the table (its 0027 triggers stay)
    with op.batch_alter_table('workers', schema=None) as batch_op:
        batch_op.add_column(sa.Column('port', sa.String(length=64), nullable=True))
    with op.batch_alter_table('cases', schema=None) as batch_op:
        batch_op.add_column(sa.Column('port', sa.String(length=64), nullable=True))
    op.execute(
        "UPDATE cases SET port = (SELECT e.port FROM events e "
        "WHERE e.event_id = COALESCE(cases.source_event_id, cases.event_id)) "
        "WHERE COALESCE(cases.source_event_id, cases.event_id) IS NOT NULL")
    op.create_index('ix_workers_port_name_registration', 'workers', ['port', 'name', 'registration'])
    op.create_index('ix_cases_port_status', 'cases', ['port', 'status'])


def downgrade() -> None:
    op.drop_index('ix_cases_port_status', table_name='cases')
    op.drop_index('ix_workers_port_name_registration', table_name='workers')
    if op.get_bind().dialect.name == "sqlite":  # SQLite 3.35's DROP COLUMN: no copy of the table,
        op.execute("ALTER TABLE cases DROP COLUMN port")  # which would drop workers' 0027 triggers
        op.execute("ALTER TABLE workers DROP COLUMN port")
        return
    op.drop_column('cases', 'port')
    op.drop_column('workers', 'port')
