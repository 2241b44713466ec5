"""ledger change counters: one counter per derived table (shifts, shift_flags, statements,
statement_lines) bumped by triggers after every write, so a re-close knows whether the stored rows
changed since the last close without reading them

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-01 16:10:00
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0014'
down_revision = '0013'
branch_labels = None
depends_on = None

WATCHED = ("shifts", "shift_flags", "statements", "statement_lines")
OPS = ("INSERT", "UPDATE", "DELETE")


def upgrade() -> None:
    op.create_table('ledger_changes',
    sa.Column('name', sa.String(length=64), nullable=False),
    sa.Column('n', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('name', name=op.f('pk_ledger_changes'))
    )
    for name in WATCHED:
        op.execute(f"INSERT INTO ledger_changes (name, n) VALUES ('{name}', 0)")
    if op.get_context().dialect.name == "postgresql":
        op.execute("""
CREATE OR REPLACE FUNCTION ledger_changes_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('portgate.changed_' || TG_TABLE_NAME, true) IS DISTINCT FROM 'y' THEN
        INSERT INTO ledger_changes (name, n) VALUES (TG_TABLE_NAME, 1)
        ON CONFLICT (name) DO UPDATE SET n = ledger_changes.n + 1;
        PERFORM set_config('portgate.changed_' || TG_TABLE_NAME, 'y', true);
    END IF;
    RETURN NULL;
END $$""")
        for name in WATCHED:
            op.execute(f"CREATE TRIGGER {name}_changes AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE "
                       f"ON {name} FOR EACH STATEMENT EXECUTE FUNCTION ledger_changes_bump()")
        return
    for name in WATCHED:
        for kind in OPS:
            op.execute(f"CREATE TRIGGER {name}_changes_{kind.lower()} AFTER {kind} ON {name} "
                       f"FOR EACH ROW BEGIN INSERT INTO ledger_changes (name, n) VALUES ('{name}', 1) "
                       "ON CONFLICT (name) DO UPDATE SET n = n + 1; END")


def downgrade() -> None:
    if op.get_context().dialect.name == "postgresql":
        for name in WATCHED:
            op.execute(f"DROP TRIGGER IF EXISTS {name}_changes ON {name}")
        op.execute("DROP FUNCTION IF EXISTS ledger_changes_bump()")
    else:
        for name in WATCHED:
            for kind in OPS:
                op.execute(f"DROP TRIGGER IF EXISTS {name}_changes_{kind.lower()}")
    op.drop_table('ledger_changes')
