"""Time helpers shared by edge and central. Pure: no clock is read here."""

from __future__ import annotations

import datetime as dt


def require_aware(value: dt.datetime, name: str = "time") -> dt.datetime:
    """Return ``value`` in UTC; raise ``ValueError`` if it is naive (a programming error)."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{name} must be an aware datetime, got naive {value!r}")
    return value.astimezone(dt.UTC)


def iso(value: dt.datetime) -> str:
    """ISO 8601 with offset, microseconds kept: the wire and CSV form of every timestamp."""
    return require_aware(value).isoformat()
