"""A rate limit shared by every web process of one office, kept in the ledger (issue 37: the
cluster runs more than one web process; a limit kept in each process's memory gave a client N
times the limit with N processes). Used by the public payslip verification page (``/v/<token>``,
``[web] verify_per_minute`` look-ups per client address a minute); the office's logins were
already counted in the ledger (``login_failures``, ``central.web.users.check_login``).

``SharedRateLimiter(engine, name, limit).hit(key)``: a sliding window of ``window`` seconds (it
replaces the per-process ``RateLimiter`` of issue 34): a look-up is allowed (and counted: one ``rate_hits`` row,
migration 0032) when the key has fewer than ``limit`` rows in the window before now; else it is
refused and not counted, with the seconds until the oldest counted look-up leaves the window.
The count and the insert are one statement (SQLite runs it under its one writer lock), and on
PostgreSQL a transaction-scoped advisory lock per (name, key) serialises two processes counting
the same client, so no two processes both take the last free place. Every call deletes the
limit's rows older than the window (any key): the table holds at most one window of look-ups.
The clock is the processes' wall clock (aware UTC; the office's machines keep NTP time).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math

from sqlalchemy import DateTime, String, delete, func, insert, literal, select
from sqlalchemy.engine import Connection, Engine

from central.web.schema import rate_hits


def _lock_id(name: str, key: str) -> int:
    """A signed 64-bit id of (name, key) for ``pg_advisory_xact_lock``."""
    return int.from_bytes(hashlib.sha256(f"{name}\0{key}".encode()).digest()[:8], "big", signed=True)


class SharedRateLimiter:
    """At most ``limit`` look-ups per key in any ``window`` seconds, counted in ``engine``'s
    ``rate_hits`` under ``name`` (one name per limit), by every process on that ledger."""

    def __init__(self, engine: Engine, name: str, limit: int, *, window: float = 60.0) -> None:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        self.engine, self.name, self.limit, self.window = engine, name[:32], limit, window

    def hit(self, key: str, now: dt.datetime | None = None) -> int:
        """0 when ``key`` (cut to 64 characters) may look up now (the look-up counted); else the
        whole seconds (at least 1) until it may, nothing counted. ``now``: aware UTC (default the
        clock). Raises ``sqlalchemy.exc.SQLAlchemyError`` when the ledger cannot be reached (the
        caller's error page: a look-up is never allowed uncounted)."""
        now = now or dt.datetime.now(dt.UTC)
        key = key[:64]
        with self.engine.begin() as conn:
            return self._hit(conn, key, now)

    def _hit(self, conn: Connection, key: str, now: dt.datetime) -> int:
        since = now - dt.timedelta(seconds=self.window)
        if conn.dialect.name == "postgresql":
            conn.execute(select(func.pg_advisory_xact_lock(_lock_id(self.name, key))))
        conn.execute(delete(rate_hits).where(rate_hits.c.at <= since, rate_hits.c.name == self.name))
        mine = (rate_hits.c.name == self.name, rate_hits.c.key == key, rate_hits.c.at > since)
        counted = select(func.count()).select_from(rate_hits).where(*mine).scalar_subquery()
        row = select(literal(self.name, String), literal(key, String), literal(now, DateTime(timezone=True)))
        done = conn.execute(insert(rate_hits).from_select(["name", "key", "at"], row.where(counted < self.limit))
                            .returning(rate_hits.c.id)).first()
        if done is not None:  # counted (RETURNING: psycopg's rowcount of an INSERT ... SELECT is not it)
            return 0
        oldest = conn.execute(select(func.min(rate_hits.c.at)).where(*mine)).scalar()
        if oldest is None:  # the window emptied meanwhile
            return 1
        if oldest.tzinfo is None:  # SQLite gives it back naive (stored as UTC)
            oldest = oldest.replace(tzinfo=dt.UTC)
        return max(1, math.ceil((oldest + dt.timedelta(seconds=self.window) - now).total_seconds()))
