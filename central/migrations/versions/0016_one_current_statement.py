"""one current statement per shift: a second current statement of a shift (copied or inserted
outside the ledger) is superseded by the one with the ledger's own id, then a partial unique index
on statements(shift_id) WHERE superseded_at IS NULL refuses another (SQLite and PostgreSQL)

Revision ID: 0016
Revises: 0014
Create Date: 2026-12-01 18:40:00
"""
from __future__ import annotations

import datetime as dt

from alembic import op
import sqlalchemy as sa


revision = '0016'
down_revision = '0014'
branch_labels = None
depends_on = None

_statements = sa.table(
    "statements", sa.column("statement_id", sa.String), sa.column("shift_id", sa.String),
    sa.column("rulebook", sa.String), sa.column("version", sa.Integer),
    sa.column("paid_at", sa.DateTime(timezone=True)), sa.column("paid_ref", sa.String),
    sa.column("superseded_at", sa.DateTime(timezone=True)), sa.column("superseded_by", sa.String),
    sa.column("superseded_reason", sa.Text))


def _rank(row) -> tuple:
    base = f"{row.shift_id}@{row.rulebook}"
    own = base if row.version == 1 else f"{base}#v{row.version}"
    return (row.statement_id != own, -row.version, row.statement_id)


def upgrade() -> None:
    conn = op.get_bind()
    s = _statements.c
    dup = (sa.select(s.shift_id).where(s.superseded_at.is_(None)).group_by(s.shift_id)
           .having(sa.func.count() > 1))
    rows = conn.execute(sa.select(s.statement_id, s.shift_id, s.rulebook, s.version, s.paid_at,
                                  s.paid_ref).where(s.superseded_at.is_(None),
                                                    s.shift_id.in_(dup))).all()
    by_shift: dict[str, list] = {}
    for r in rows:
        by_shift.setdefault(r.shift_id, []).append(r)
    now = dt.datetime.now(dt.UTC)
    for shift_id, found in by_shift.items():
        keep, *extra = sorted(found, key=_rank)
        for r in extra:
            paid = (f"; its payment ({r.paid_ref or 'no ref'}) stays on record"
                    if r.paid_at is not None else "")
            conn.execute(sa.update(_statements).where(s.statement_id == r.statement_id).values(
                superseded_at=now, superseded_by=keep.statement_id,
                superseded_reason=(f"second current statement of shift {shift_id} (stored outside "
                                   f"the ledger): one current statement per shift, "
                                   f"{keep.statement_id} is current{paid}")))
    op.create_index("uq_statements_one_current", "statements", ["shift_id"], unique=True,
                    sqlite_where=sa.text("superseded_at IS NULL"),
                    postgresql_where=sa.text("superseded_at IS NULL"))


def downgrade() -> None:
    op.drop_index("uq_statements_one_current", table_name="statements")
