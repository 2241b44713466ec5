"""Tables of the workers' own accounts (issue 35): which office user is which registration, and the
activation codes the office prints for them.

- ``worker_accounts``: one row per worker account, binding an ``office_users`` row of role
  ``worker`` to one registration (one account per registration).
- ``worker_activations``: one row per activation code issued: its SHA-256 hex (the code itself is
  never stored), when it expires (7 days), when it was used (single use) and who issued it.
- ``worker_requests``: a worker's refusal of one dispatch for health reasons (R3) with the photo of
  his medical certificate, pending until the office accepts it (the refusal is recorded with the
  proof: no infraction, he keeps his place) or rejects it (the dispatch stands).
"""

from __future__ import annotations

from sqlalchemy import Column, DateTime, ForeignKey, Index, Integer, LargeBinary, String, Table, Text

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

worker_requests = Table(
    "worker_requests",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("registration", String(64), ForeignKey("workers.registration"), nullable=False),
    Column("escala_id", Integer, ForeignKey("escala.id"), nullable=False),
    Column("reason", Text, nullable=False),
    Column("filename", String(255), nullable=False),
    Column("content_type", String(64), nullable=False),
    Column("photo", LargeBinary, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("status", String(16), nullable=False),  # pending | accepted | rejected
    Column("decided_at", DateTime(timezone=True), nullable=True),
    Column("decided_by", String(128), nullable=True),
    Column("refusal_id", Integer, nullable=True),  # the R3 refusal recorded on acceptance
)
Index("ix_worker_requests_registration", worker_requests.c.registration)
