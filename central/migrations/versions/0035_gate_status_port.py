"""each gate's status under its port (issue 37 item 4, many ports on one ledger): ``gate_status``
gets ``port`` and is keyed by ``(port, gate_id)``: a gate id is a topic level under its port
(``portgate/v1/<port>/gate/<gate_id>/status``), and the status message carries its port
(``wire.downlink.GateStatus.port``). A row made before takes the port of that gate's events
(``events.port``); a gate whose events name two ports (a gate moved between ports) gets one row per
port, each a copy of the stored status; a gate that has sent no event keeps its row under the port
``''`` (not known: ``central.ingest.status.store`` replaces it with the gate's port at its next status).
The downgrade keeps one row per gate id, the newest received.

Revision ID: 0035
Revises: 0034
Create Date: 2026-12-07 05:20:00
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision = '0035'
down_revision = '0034'
branch_labels = None
depends_on = None

#: every column of gate_status but the key (as 0004 and 0018 made them)
_COLUMNS = ('state', 'reason', 'boot_id', 'since', 'at', 'sent_seq', 'outbox_depth', 'oldest_unsent_at',
            'clock_trusted', 'copies_updated_at', 'received_at', 'readers')


def _fill_ports(conn) -> None:
    """Each row's gate's event ports: the first (by event row id) on the row, one copy per other port."""
    ports: dict[str, list[str]] = {}
    for gate_id, port in conn.execute(sa.text(
            "SELECT e.gate_id, e.port FROM events e JOIN gate_status s ON s.gate_id = e.gate_id "
            "GROUP BY e.gate_id, e.port ORDER BY e.gate_id, MIN(e.id)")):
        ports.setdefault(gate_id, []).append(port)
    cols = ", ".join(_COLUMNS)
    for gate_id, found in ports.items():
        conn.execute(sa.text("UPDATE gate_status SET port = :p WHERE gate_id = :g"), {"p": found[0], "g": gate_id})
        for other in found[1:]:
            conn.execute(sa.text(f"INSERT INTO gate_status (port, gate_id, {cols}) SELECT :p, gate_id, {cols} "
                                 "FROM gate_status WHERE gate_id = :g AND port = :first"),
                         {"p": other, "g": gate_id, "first": found[0]})


def upgrade() -> None:
    with op.batch_alter_table('gate_status') as batch:
        batch.add_column(sa.Column('port', sa.String(length=64), nullable=False, server_default=''))
    conn = op.get_bind()
    with op.batch_alter_table('gate_status') as batch:
        batch.drop_constraint('pk_gate_status', type_='primary')
    _fill_ports(conn)
    with op.batch_alter_table('gate_status') as batch:
        batch.alter_column('port', server_default=None, existing_type=sa.String(length=64), existing_nullable=False)
        batch.create_primary_key('pk_gate_status', ['port', 'gate_id'])


def downgrade() -> None:
    conn = op.get_bind()
    conn.execute(sa.text(
        "DELETE FROM gate_status WHERE EXISTS (SELECT 1 FROM gate_status n WHERE n.gate_id = gate_status.gate_id "
        "AND (n.received_at > gate_status.received_at OR (n.received_at = gate_status.received_at "
        "AND n.port > gate_status.port)))"))
    with op.batch_alter_table('gate_status') as batch:
        batch.drop_constraint('pk_gate_status', type_='primary')
        batch.drop_column('port')
        batch.create_primary_key('pk_gate_status', ['gate_id'])
