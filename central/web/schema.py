"""Tables of the office web application: its users and their failed logins.

- ``office_users``: one row per person (login name, display name, role, argon2 hash, disabled flag).
  Roles: ``office`` (dispatch, registry, pay), ``inspector`` (flags, cases, confiscations),
  ``auditor`` (read-only everything), ``admin`` (users); ``ports`` the ports the user may see.
- ``login_failures``: one row per wrong password or unknown login, with the login and the client
  address, for the rate limit (``central.web.users.check_login``).
- ``rate_hits``: one row per look-up a shared rate limit allowed (``central.web.shared_limit``).
- ``office_sessions``: one row per login; the cookie carries the token, the row its SHA-256 hex.
  ``ended_at`` set by logout, a new password or disabling the user: the cookie then opens nothing.
"""

from __future__ import annotations

from sqlalchemy import Boolean, ForeignKey, Column, DateTime, Index, Integer, String, Table

from central.db import metadata

office_users = Table(
    "office_users",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("login", String(64), nullable=False, unique=True),
    Column("name", String(255), nullable=False, default=""),
    Column("role", String(16), nullable=False),  # office | inspector | auditor | admin
    Column("password_hash", String(255), nullable=False),  # argon2id (argon2-cffi)
    Column("disabled", Boolean, nullable=False, default=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    # the ports the user may see (0028, central/web/ports.py): NULL the office's home port, "*" all, "a,b"
    Column("ports", String(1000), nullable=True),
)

# one row per look-up a shared rate limit allowed (0032, central/web/shared_limit.py): every web
# process of the office counts the same rows; rows older than the limit's window are deleted
rate_hits = Table(
    "rate_hits",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(32), nullable=False),  # the limit ("verify")
    Column("key", String(64), nullable=False),  # the client (its address)
    Column("at", DateTime(timezone=True), nullable=False),
)
Index("ix_rate_hits_name_key_at", rate_hits.c.name, rate_hits.c.key, rate_hits.c.at)
Index("ix_rate_hits_at", rate_hits.c.at)

login_failures = Table(
    "login_failures",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("login", String(64), nullable=False),
    Column("address", String(64), nullable=False),
    Column("at", DateTime(timezone=True), nullable=False),
)
Index("ix_login_failures_login_at", login_failures.c.login, login_failures.c.at)
Index("ix_login_failures_address_at", login_failures.c.address, login_failures.c.at)

office_sessions = Table(
    "office_sessions",
    metadata,
    Column("id", String(64), primary_key=True),  # sha256 hex of the cookie's token
    Column("user_id", Integer, ForeignKey("office_users.id"), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("ended_at", DateTime(timezone=True), nullable=True),
)
Index("ix_office_sessions_user_id", office_sessions.c.user_id)
