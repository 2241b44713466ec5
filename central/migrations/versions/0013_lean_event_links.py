"""event_links lean: 32-byte binary hash and prev, no event_id column, WITHOUT ROWID on SQLite

The link's event is ``events`` at the same (gate_id, seq), the first stored (lowest id); upgrade
converts the hex hashes to bytes, downgrade converts them back and fills ``event_id`` from there.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-01 16:10:00
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0013'
down_revision = '0012'
branch_labels = None
depends_on = None

_CHUNK = 10_000


def _new_table(name: str, lean: bool) -> None:
    pg = op.get_bind().dialect.name == 'postgresql'  # (a PostgreSQL constraint name is unique per schema)
    if lean:
        cols = [sa.Column('hash', sa.LargeBinary(length=32), nullable=False),
                sa.Column('prev', sa.LargeBinary(length=32), nullable=False)]
    else:
        cols = [sa.Column('event_id', sa.String(length=36), nullable=False),
                sa.Column('hash', sa.String(length=64), nullable=False),
                sa.Column('prev', sa.String(length=64), nullable=False)]
    op.create_table(name,
    sa.Column('gate_id', sa.String(length=64), nullable=False),
    sa.Column('seq', sa.BigInteger(), nullable=False),
    *cols,
    sa.Column('segment', sa.Boolean(), nullable=False),
    sa.PrimaryKeyConstraint('gate_id', 'seq', name=op.f('pk_event_links_new' if pg else 'pk_event_links')),
    **({'sqlite_with_rowid': False} if lean else {}),
    )


_FIRST_EVENT = ("COALESCE((SELECT e.event_id FROM events e WHERE e.gate_id = l.gate_id AND e.seq = l.seq "
                "ORDER BY e.id LIMIT 1), '')")


def _copy(lean: bool) -> None:
    """Every row of ``event_links`` into ``event_links_new``, converted."""
    bind = op.get_bind()
    if bind.dialect.name == 'postgresql':
        if lean:
            op.execute("INSERT INTO event_links_new (gate_id, seq, hash, prev, segment) SELECT gate_id, seq, "
                       "decode(hash, 'hex'), decode(prev, 'hex'), segment FROM event_links")
        else:
            op.execute("INSERT INTO event_links_new (gate_id, seq, event_id, hash, prev, segment) SELECT "
                       f"l.gate_id, l.seq, {_FIRST_EVENT}, encode(l.hash, 'hex'), encode(l.prev, 'hex'), l.segment "
                       "FROM event_links l")
        return
    # SQLite (3.40 has no unhex()): converted here, in chunks
    if lean:
        read = "SELECT gate_id, seq, hash, prev, segment FROM event_links ORDER BY gate_id, seq"
        write = "INSERT INTO event_links_new (gate_id, seq, hash, prev, segment) VALUES (?, ?, ?, ?, ?)"
        convert = lambda r: (r[0], r[1], bytes.fromhex(r[2]), bytes.fromhex(r[3]), r[4])  # noqa: E731
    else:
        read = f"SELECT l.gate_id, l.seq, {_FIRST_EVENT}, l.hash, l.prev, l.segment FROM event_links l"
        write = "INSERT INTO event_links_new (gate_id, seq, event_id, hash, prev, segment) VALUES (?, ?, ?, ?, ?, ?)"
        convert = lambda r: (r[0], r[1], r[2], bytes(r[3]).hex(), bytes(r[4]).hex(), r[5])  # noqa: E731
    result = bind.exec_driver_sql(read)
    while True:
        rows = result.fetchmany(_CHUNK)
        if not rows:
            break
        bind.exec_driver_sql(write, [convert(r) for r in rows])


def _swap(lean: bool) -> None:
    _new_table('event_links_new', lean)
    _copy(lean)
    op.drop_table('event_links')
    op.rename_table('event_links_new', 'event_links')
    if op.get_bind().dialect.name == 'postgresql':  # the primary key keeps its name
        op.execute("ALTER TABLE event_links RENAME CONSTRAINT pk_event_links_new TO pk_event_links")


def upgrade() -> None:
    _swap(lean=True)


def downgrade() -> None:
    _swap(lean=False)
