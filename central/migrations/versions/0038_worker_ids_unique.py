"""one CPF and one PIS/NIS per registration (the fresh tester's finding: the add-worker form took a
CPF another worker held): unique indexes ``ux_workers_cpf`` and ``ux_workers_pis`` on ``workers``
(NULLs repeat on SQLite and PostgreSQL alike). A person on two registrations could be dispatched to
two ships at once (G5), and the registry import, the add and the edit forms refuse a number another
registration holds (``central.registry.ids``); the indexes keep two forms submitted at once from
both taking one.

A ledger already holding a number on two registrations (made before the forms checked it) is not
upgraded: the migration refuses, listing each number and its registrations, and leaves the ledger
as it was (the whole upgrade is one transaction, ``central.ledger.migrate``). Which registration
keeps the number is the office's decision, not a migration's: correct the others (the previous
release's edit form, or ``portgate registry import`` of a row giving the right number) and migrate
again.

Revision ID: 0038
Revises: 0037
Create Date: 2026-12-07 20:30:00
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from portgate.errors import StoreError

revision = '0038'
down_revision = '0037'
branch_labels = None
depends_on = None

#: At most this many repeated numbers are listed (", … +N" for the others: no words to translate).
LISTED = 20


def _repeated(conn) -> list[str]:
    """``cpf 00000000191: V001/V921`` for each number two or more registrations hold, compared by
    its digits (the registry stores bare digits since 0022; a value written around it, formatted or
    padded with spaces, is the same number and would slip past a unique index of the text)."""
    found = []
    for field in ("cpf", "pis"):
        held: dict[str, list[str]] = {}
        for value, reg in conn.execute(sa.text(
                f"SELECT {field}, registration FROM workers WHERE {field} IS NOT NULL ORDER BY registration")):
            digits = "".join(ch for ch in value if ch.isdigit())
            if digits:
                held.setdefault(digits, []).append(reg)
        found += [f"{field} {value}: {'/'.join(regs)}" for value, regs in sorted(held.items()) if len(regs) > 1]
    return found


def upgrade() -> None:
    repeated = _repeated(op.get_bind())
    if repeated:
        more = len(repeated) - LISTED
        listed = ", ".join(repeated[:LISTED]) + (f", … +{more}" if more > 0 else "")  # no '; ': one reason
        raise StoreError(f"migration 0038 refused: a CPF or PIS/NIS on two registrations ({listed}): leave "
                         f"each number on one registration and migrate again")
    with op.batch_alter_table('workers', schema=None) as batch_op:
        batch_op.create_index('ux_workers_cpf', ['cpf'], unique=True)
        batch_op.create_index('ux_workers_pis', ['pis'], unique=True)


def downgrade() -> None:
    with op.batch_alter_table('workers', schema=None) as batch_op:
        batch_op.drop_index('ux_workers_pis')
        batch_op.drop_index('ux_workers_cpf')
