"""Time helpers shared by edge and central. Pure: no clock is read here."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from portgate.errors import ConfigError

#: Timestamps before this are never paid from (an unset Pi clock says 1970): the shift is held.
PLAUSIBLE_FROM = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)
#: ... and from this on (a typo such as 9999; nothing after 2100 is a real shift).
PLAUSIBLE_UNTIL = dt.datetime(2101, 1, 1, tzinfo=dt.UTC)


def require_aware(value: dt.datetime, name: str = "time") -> dt.datetime:
    """Return ``value`` in UTC; raise ``ValueError`` if it is naive (a programming error)."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{name} must be an aware datetime, got naive {value!r}")
    return value.astimezone(dt.UTC)


def zone(name: str, *, key: str = "timezone", path: str | None = None) -> ZoneInfo:
    """The IANA time zone ``name`` (``America/Sao_Paulo``). Raises ``ConfigError`` naming ``key``
    (and ``path``) if it is not one: unknown, empty, a path (``../../etc/passwd``), a NUL."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
        raise ConfigError(f"unknown time zone {name!r} (an IANA name such as America/Sao_Paulo)",
                          key=key, path=path) from exc


def iso(value: dt.datetime) -> str:
    """ISO 8601 with offset, microseconds kept: the wire and CSV form of every timestamp."""
    return require_aware(value).isoformat()
