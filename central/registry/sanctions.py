"""Suspension limits of a rulebook (RULES.md R4): how many days a suspension may last.

A pay rulebook TOML (``config/rulebooks/*.toml``, watchmen or production) may hold a table::

    [suspension]
    min_days = 1
    max_days = 30
    article = "83.611 art. 21 a"

``decreto-83611-1979``: up to 30 days (83.611 art. 21 a); ``dl-2032-1940``: 1 to 30 days (DL 2.032
art. 30); a rulebook with no table takes today's law, 10 to 30 days (Lei 12.815 art. 33).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import msgspec

from portgate.config import convert, read_toml
from portgate.errors import ConfigError

Days = Annotated[int, msgspec.Meta(ge=1, le=3650)]


class SuspensionLimits(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Allowed suspension length in days, inclusive, and the article that sets it (R4)."""

    min_days: Days = 10
    max_days: Days = 30
    article: str = "Lei 12.815 art. 33"

    def __post_init__(self) -> None:
        if self.min_days > self.max_days:
            raise ValueError(f"min_days {self.min_days} is above max_days {self.max_days}")

    def problem(self, days: int) -> str | None:
        """Why ``days`` is not allowed (one line naming the article), or None."""
        if self.min_days <= days <= self.max_days:
            return None
        return f"a suspension lasts {self.min_days} to {self.max_days} days ({self.article}), not {days}"


#: Today's law, for a rulebook that names no limits (Lei 12.815 art. 33).
TODAY = SuspensionLimits()


class _Book(msgspec.Struct):
    id: str = ""
    suspension: SuspensionLimits | None = None


def load_suspension_limits(path: str | Path) -> tuple[str, SuspensionLimits]:
    """(rulebook id, its limits) from a pay rulebook TOML; ``TODAY`` if it has no ``[suspension]``.
    Raises ``ConfigError`` for a missing or bad file, naming the key; a file with no ``id`` (a gate
    rulebook) is not a pay rulebook and is refused (key ``id``), not read as "no limits"."""
    path = Path(path)
    raw = read_toml(path)
    if not isinstance(raw.get("id"), str) or not raw["id"]:  # every pay rulebook names itself
        what = "a gate rulebook (it has [[version]])" if "version" in raw else "no rulebook id"
        raise ConfigError(f"not a pay rulebook: {what}; give a pay rulebook "
                          "(config/rulebooks/decreto-83611-1979.toml ...)", key="id", path=str(path))
    book = convert({"id": raw["id"], "suspension": raw.get("suspension")}, _Book, path=str(path))
    return book.id, book.suspension or TODAY
