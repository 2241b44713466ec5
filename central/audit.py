"""The office's audit log: who changed what, one row per command (registry, rotation, pay, the
ledger's meal corrections, the web application).

``audit_log`` sits below the packages that write it, so the ledger (``central/ledger/corrections.py``)
and the registry (``central/registry/changes.py``) both write it without importing each other;
``central.registry.schema`` still exports it.
"""

from __future__ import annotations

from sqlalchemy import JSON, Column, DateTime, Index, Integer, String, Table

from central.db import metadata

#: ``audit_log.port`` of an entry only a user who sees every port is shown (no port's object, or
#: an entry made before 0031); also ``office_users.ports``'s "every port" (``central.web.ports.ALL``).
ALL = "*"

audit_log = Table(
    "audit_log",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("at", DateTime(timezone=True), nullable=False),
    Column("actor", String(128), nullable=False),
    Column("action", String(64), nullable=False),
    Column("subject", String(128), nullable=False),
    Column("detail", JSON, nullable=False),
    # the port of the object the entry names (0031, central.registry.audit_ports): a port id; NULL the
    # office's home port (as workers.port); ALL ("*", the default): shown only to an all-ports user
    Column("port", String(64), nullable=True, server_default=ALL),
)
# the office's audit log page (0024, central/web/logmodel.py): by date range, subject, actor
Index("ix_audit_log_at", audit_log.c.at, audit_log.c.id)
Index("ix_audit_log_subject", audit_log.c.subject, audit_log.c.id)
Index("ix_audit_log_actor", audit_log.c.actor, audit_log.c.id)
Index("ix_audit_log_port", audit_log.c.port, audit_log.c.id)  # a one-port user's page (0031)
