"""Gate rulebook: every setting of rules G1-G12 (RULES.md section G), versioned by effective date.

A rulebook file is TOML in ``config/rulebooks/`` (``gate-default.toml`` reproduces the seeds)::

    name = "gate-default"
    [[version]]
    effective_from = 2026-01-01
    port_timezone = "America/Sao_Paulo"
    [version.g7]
    rest_hours = 11
    mode = "deny"

Every rule has a sub-table ``gN`` with at least ``enabled``; an absent sub-table or key takes the
default below. ``load_gate_rulebook(path)`` validates the whole file at start-up (STYLE.md 12) and
raises ``ConfigError`` naming the bad key (``$.version[0].g7.mode``). Choosing the version in force
on a date (``GateRulebooks.for_date``) is pure.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import msgspec

from portgate.config import convert, read_toml
from portgate.rest import MIN_REST_HOURS
from portgate.tables import one_line
from portgate.errors import ConfigError

# Sane ranges: a setting outside them is a typo, and would push derived times out of datetime's
# range (every entry an INTERNAL deny). Refused at load, naming the key.
DAY_MIN = 24 * 60
Minutes = Annotated[int, msgspec.Meta(ge=0, le=DAY_MIN)]  # at most a day
Seconds = Annotated[int, msgspec.Meta(ge=0, le=300)]  # debounce: at most 5 min
WindowS = Annotated[int, msgspec.Meta(ge=1, le=300)]  # pairing window: at most 5 min
Months = Annotated[int, msgspec.Meta(ge=1, le=120)]  # health exam validity: at most 10 years


class _Rule(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    enabled: bool = True


class G1Settings(_Rule):
    """G1 unknown card (83.611 art. 1). Cannot be switched off: an unknown card names no worker."""

    def __post_init__(self) -> None:
        if not self.enabled:
            raise ValueError("G1 cannot be switched off: an unknown card names no worker to admit")


class G2Settings(_Rule):
    """G2 card not active -> DENY + RETAIN_CARD (83.611 art. 20 §1)."""


class G3Settings(_Rule):
    """G3 registration valid on the local date (83.611 arts. 1, 17, 21; DL 2.032 arts. 5 §4, 28 §1).

    ``health_exam_max_age_months`` is the validity of the health exam for a category not listed in
    ``health_exam_months_by_category`` (category -> months; the stevedore's inspection is yearly,
    DL 2.032 art. 28 §1)."""

    health_exam_max_age_months: Months = 24
    health_exam_months_by_category: dict[str, Months] = msgspec.field(
        default_factory=lambda: {"estivador": 12})
    booklet_categories: tuple[str, ...] = ("estivador",)
    # The booklet must show the current year once this month is over (3 = first quarter).
    booklet_revalidation_month: Annotated[int, msgspec.Meta(ge=1, le=12)] = 3


class G4Settings(_Rule):
    """G4 borrowed card: control card + badge of the same registration (83.611 art. 20 j, l).

    Card + badge is required at this gate for everybody when ``card_and_badge_required`` (the
    setting per gate: each gate names its rulebook file), and for the workers of the categories in
    ``card_and_badge_categories`` at every gate (the stevedore's numbered badge is a duty, DL 2.032
    arts. 17, 29)."""

    card_and_badge_required: bool = False
    card_and_badge_categories: tuple[str, ...] = ("estivador",)
    pairing_window_s: WindowS = 15


class G5Settings(_Rule):
    """G5 no worker on two ships at once (83.611 art. 22; Lei 9.719 art. 7)."""


class G6Settings(_Rule):
    """G6 dispatched for this gate in a period covering now (83.611 arts. 10, 20 i)."""

    early_tolerance_min: Minutes = 30
    late_tolerance_min: Minutes = 60


class G7Settings(_Rule):
    """G7 rest between shifts (Lei 9.719 art. 8)."""

    rest_hours: Annotated[int, msgspec.Meta(ge=0, le=48)] = MIN_REST_HOURS
    mode: Literal["deny", "warn"] = "deny"


class G8Settings(_Rule):
    """G8 stale local data or untrusted clock (operational)."""

    data_max_age_hours: Annotated[int, msgspec.Meta(ge=1, le=24 * 31)] = 24
    stale_mode: Literal["admit_flagged", "deny"] = "admit_flagged"


class G9Settings(_Rule):
    """G9 exit, already aboard, EARLY_EXIT, NO_ENTRY, debounce (83.611 arts. 9, 20 b, e; operational).

    ``min_stay_minutes``: a read by the worker aboard sooner than this after the admit is "already
    aboard" and changes nothing. ``early_exit_tolerance_min``: an exit more than this before the end
    of the ordinary period is flagged EARLY_EXIT. ``exit_grace_min``: after the late tolerance and
    until the period's end plus this grace (the at most 2 h extension), a read with no open shift
    names its period (LATE_ARRIVAL at an entry reader, NO_ENTRY at an exit reader)."""

    debounce_s: Seconds = 3
    min_stay_minutes: Minutes = 5
    early_exit_tolerance_min: Minutes = 10
    exit_grace_min: Minutes = 120


class G10Settings(_Rule):
    """G10 inspector mode and confiscation (83.611 art. 20 §1, §3)."""

    inspector_mode_s: Annotated[int, msgspec.Meta(ge=1, le=3600)] = 60


class G11Settings(_Rule):
    """G11 gangway coverage for long-haul ships (83.611 arts. 5-8)."""

    coverage_grace_min: Minutes = 30
    watch_periods: tuple[str, ...] = ("07-13", "13-19", "19-01", "01-07")
    watch_functions: tuple[str, ...] = ("vigia", "vigia_chefe")
    gangway_post: str = "portalo"


#: G12 default table: worker category -> the post functions it may fill (83.611 art. 1: watch work
#: exclusively by registered watchmen; DL 2.032 art. 12 §1; DL 3.844 art. 4 for the dock-work roles).
DEFAULT_CATEGORY_FUNCTIONS: dict[str, tuple[str, ...]] = {
    "vigia": ("vigia", "vigia_chefe"),
    "estivador": ("estivador", "contramestre", "contramestre_geral"),
    "capatazia": ("trabalhador", "motorista_armazem", "feitor", "ajudante_feitor",
                  "motorista_guindaste", "conferente"),
}


class G12Settings(_Rule):
    """G12 the post's function must be one the worker's category may fill (83.611 art. 1; DL 2.032
    art. 12 §1). ``categories``: worker category -> functions; a function no category lists is
    filled by nobody (WRONG_CATEGORY): a port adding a function adds it here."""

    categories: dict[str, tuple[str, ...]] = msgspec.field(
        default_factory=lambda: dict(DEFAULT_CATEGORY_FUNCTIONS))

    def may_fill(self, category: str, function: str) -> bool:
        return function in self.categories.get(category, ())


DEFAULT_EFFECTIVE_FROM = dt.date(2026, 1, 1)


class GateRulebook(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """The gate settings in force from ``effective_from`` (a local date of the port)."""

    # The built-in default is the shipped file's first version (config/rulebooks/gate-default.toml),
    # so the G13 boot floor is the same with and without a ``rulebook`` key. A file's version must
    # give it (``load_gate_rulebook``).
    effective_from: dt.date = DEFAULT_EFFECTIVE_FROM
    port_timezone: str = "America/Sao_Paulo"
    g1: G1Settings = G1Settings()
    g2: G2Settings = G2Settings()
    g3: G3Settings = G3Settings()
    g4: G4Settings = G4Settings()
    g5: G5Settings = G5Settings()
    g6: G6Settings = G6Settings()
    g7: G7Settings = G7Settings()
    g8: G8Settings = G8Settings()
    g9: G9Settings = G9Settings()
    g10: G10Settings = G10Settings()
    g11: G11Settings = G11Settings()
    g12: G12Settings = G12Settings()

    def __post_init__(self) -> None:
        try:
            ZoneInfo(self.port_timezone)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"unknown time zone {self.port_timezone!r}") from exc
        from portgate.timeutil import parse_period  # local: keeps the import graph flat
        from portgate.errors import BadInput

        for period in self.g11.watch_periods:
            try:
                parse_period(period)
            except BadInput as exc:
                raise ValueError(f"g11.watch_periods: {exc.reason}") from exc
        unknown = [c for c in self.g4.card_and_badge_categories if c not in self.g12.categories]
        if unknown:
            raise ValueError(f"g4.card_and_badge_categories: unknown category {unknown[0]!r} "
                             f"(g12.categories knows {', '.join(sorted(self.g12.categories))})")

    @property
    def tz(self) -> ZoneInfo:
        """The port's time zone (local dates and periods are read in it)."""
        return ZoneInfo(self.port_timezone)


class GateRulebooks(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """All versions of one port's gate rulebook, sorted by ``effective_from``."""

    name: str = "gate-default"
    version: tuple[GateRulebook, ...] = (GateRulebook(),)

    def __post_init__(self) -> None:
        if not self.version:
            raise ValueError("at least one [[version]] is required")
        dates = [v.effective_from for v in self.version]
        if len(set(dates)) != len(dates):
            raise ValueError("two versions have the same effective_from")

    def for_date(self, date: dt.date) -> GateRulebook:
        """The version in force on local ``date``: the latest with ``effective_from <= date``.

        Raises ``ConfigError`` if ``date`` is before every version (the file does not cover it; fix
        the configuration). Pure.
        """
        chosen = None
        for v in sorted(self.version, key=lambda v: v.effective_from):
            if v.effective_from <= date:
                chosen = v
        if chosen is None:
            raise ConfigError(f"no gate rulebook version in force on {date}", key="version")
        return chosen


    @property
    def newest(self) -> GateRulebook:
        """The version with the latest ``effective_from`` (G13: what an untrusted clock decides on)."""
        return max(self.version, key=lambda v: v.effective_from)

    @property
    def first_start(self) -> dt.datetime:
        """Local midnight (aware UTC) of the first version's ``effective_from``: a wall clock
        before it is implausible (G13)."""
        first = min(self.version, key=lambda v: v.effective_from)
        midnight = dt.datetime(first.effective_from.year, first.effective_from.month,
                               first.effective_from.day, tzinfo=first.tz)
        return midnight.astimezone(dt.UTC)

    def in_force(self, wall: dt.datetime, *, estimated: bool = False) -> GateRulebook:
        """The version that decides a read at aware ``wall`` (G13, operational). ``estimated``
        (the wall clock was implausible, ``edge.rules.model.Now.estimated``) or a date before
        every version: the newest version held; otherwise ``for_date`` of the local date. Never
        raises for a date. Pure."""
        if estimated:
            return self.newest
        tz = self.version[-1].tz
        try:
            return self.for_date(wall.astimezone(tz).date())
        except ConfigError:
            return self.newest


def load_gate_rulebook(path: str | Path) -> GateRulebooks:
    """Load and validate a gate rulebook TOML file. Raises ``ConfigError`` naming the bad key (at
    least one ``[[version]]``: ``$.version``; every one must give its ``effective_from``:
    ``$.version[1].effective_from``)."""
    return gate_rulebook_from(read_toml(path), one_line(str(path)))


def gate_rulebook_from(raw: dict, where: str) -> GateRulebooks:
    """Validate a gate rulebook already parsed from TOML (``where`` names it in errors). Raises
    ``ConfigError`` naming the bad key, as ``load_gate_rulebook``; a file without any ``[[version]]``
    too (``$.version``: the built-in default version is for a gate without a ``rulebook`` key, never
    for a file that forgot its versions)."""
    if raw.get("version", []) == []:  # none, or ``version = []``
        raise ConfigError("at least one [[version]] is required", key="$.version", path=where)
    versions = raw.get("version")
    if isinstance(versions, list):
        for i, version in enumerate(versions):
            if isinstance(version, dict) and "effective_from" not in version:
                raise ConfigError("required: the date this version is in force from",
                                  key=f"$.version[{i}].effective_from", path=where)
    return convert(raw, GateRulebooks, path=where)


def default_gate_rulebook() -> GateRulebook:
    """The rulebook that reproduces the seeds (every default above)."""
    return GateRulebook()
