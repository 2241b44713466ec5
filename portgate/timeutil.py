"""Time helpers shared by edge and central. Pure: no clock is read here."""

from __future__ import annotations

import datetime as dt
import re
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from portgate.errors import BadInput, ConfigError

#: Timestamps before this are never paid from (an unset Pi clock says 1970): the shift is held.
PLAUSIBLE_FROM = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)
#: ... and from this on (a typo such as 9999; nothing after 2100 is a real shift).
PLAUSIBLE_UNTIL = dt.datetime(2101, 1, 1, tzinfo=dt.UTC)


def require_aware(value: dt.datetime, name: str = "time") -> dt.datetime:
    """Return ``value`` in UTC; raise ``ValueError`` if it is naive (a programming error)."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{name} must be an aware datetime, got naive {value!r}")
    return value.astimezone(dt.UTC)


def as_utc(value: dt.datetime | None) -> dt.datetime | None:
    """A stored timestamp as aware UTC; ``None`` stays ``None``. A naive value is read as UTC (SQLite
    gives ``DateTime(timezone=True)`` back naive, in UTC); an aware one (PostgreSQL, in the session's
    time zone) is converted. The strict form, for times that must carry an offset, is
    ``require_aware``."""
    if value is None:
        return None
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)


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


_PERIOD = re.compile(r"[0-9]{2}-[0-9]{2}")


def parse_period(text: str) -> tuple[int, int]:
    """Parse a period such as ``19-01`` into (start hour, end hour): two ASCII digits each side
    (``7-13`` is refused, not read as ``07-13``: a period is part of a requisition's key, so one
    spelling per period). Raises ``BadInput``."""
    if not isinstance(text, str) or not _PERIOD.fullmatch(text.strip()):
        raise BadInput(f"period {text!r} is not HH-HH (e.g. 19-01)")
    start, end = int(text.strip()[:2]), int(text.strip()[3:])
    if not (0 <= start <= 23 and 0 <= end <= 24) or start == end:
        raise BadInput(f"period {text!r} has hours out of range")
    return start, end
