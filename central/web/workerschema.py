"""Tables of the workers' own accounts (issue 35): which office user is which registration, and the
activation codes the office prints for them.

- ``worker_accounts``: one row per worker account, binding an ``office_users`` row of role
  ``worker`` to one registration (one account per registration).
- ``worker_activations``: one row per activation code issued: its SHA-256 hex (the code itself is
  never stored), when it expires (7 days), when it was used (single use) and who issued it.
"""

from __future__ import annotations

from sqlalchemy import Column, DateTime, ForeignKey, Index, Integer, String, Table

from central.db import metadata

worker_accounts = Table(
    "worker_accounts",
    metadata,
    Column("user_id", Integer, ForeignKey("office_users.id"), primary_key=True),
    Column("registration", String(64), ForeignKey("workers.registration"), nullable=False, unique=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

worker_activations = Table(
    "worker_activations",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("user_id", Integer, ForeignKey("office_users.id"), nullable=False),
    Column("code_hash", String(64), nullable=False, unique=True),  # sha256 hex of the code
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("expires_at", DateTime(timezone=True), nullable=False),
    Column("used_at", DateTime(timezone=True), nullable=True),
    Column("actor", String(128), nullable=False),
)
Index("ix_worker_activations_user_id", worker_activations.c.user_id)
