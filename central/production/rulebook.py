"""Production-pay rulebooks (``config/rulebooks/dl-2032-1940.toml``, ``dl-3844-1941.toml``).

A rulebook is data: for each version (in force from ``effective_from``) the day wage SD, the quota
table per role, the minimum guarantee, the interruption kinds that are paid and at what fraction of
the hourly wage, the payment deadline, the shipowner billing and the monthly minimum. Every step
names the rule id and legal article that the statement lines carry, so the same engine computes
rules E1-E8 (stevedoring) and C1-C6 (dock work). Parsed and validated whole at start-up
(STYLE.md 12); a bad key raises ``ConfigError`` naming it.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Literal

import msgspec

from central.registry.sanctions import SuspensionLimits
from portgate.config import load_toml, naming_key, unreadable
from portgate.errors import BadInput, ConfigError

#: Interruption kinds the office may enter (interruptions.csv ``kind``). A rulebook pays a subset.
INTERRUPTION_KINDS = ("late_start", "rain", "rough_water", "tide", "third_party", "meal_worked",
                      "anchorage_travel", "no_equipment", "workers_fault")
#: The kind whose rows may carry a ``transport`` cost (E7, DL 2.032 art. 16).
TRAVEL_KIND = "anchorage_travel"


class Cite(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The rule id and article a computation step emits on its statement lines."""

    rule: str
    article: str


class QuotaRule(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Quotas of one role (E2 art. 24, C1 art. 4): ``quota`` each, or per hold worked, capped."""

    quota: Decimal
    per_hold: bool = False  # general foreman: ``quota`` per hold worked (E2)
    max: Decimal | None = None  # cap on the member's quotas (E2: 3)


class Shares(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    rule: str
    article: str
    quotas: dict[str, QuotaRule]


class Guarantee(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """E3 / C2. Each member gets at least ``minimum_day_fraction`` × SD; when the member worked more
    than ``over_minutes`` and the gang moved more than ``over_tonnes`` t, at least a full day SD
    (``above = "day"``, E3) or SD/hours_per_day × hours of actual work (``above = "hourly"``, C2)."""

    rule: str
    article: str
    above: Literal["day", "hourly"]
    minimum_day_fraction: Decimal = Decimal("0.5")
    over_minutes: Decimal = Decimal(240)
    over_tonnes: Decimal = Decimal(30)
    #: interruption kinds whose paid minutes are work time for the duration test (E7: the travel to
    #: an anchored ship; E9: an E8 stoppage for want of equipment), added to the member's minutes
    counts_as_work: list[str] = []


class InterruptionRule(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """E4 / E5 / C3 / C4: an interruption of a kind is paid ``wage_fraction`` × hourly wage for its
    whole duration when it lasted more than ``paid_when_over_minutes`` (0: always)."""

    rule: str
    article: str
    wage_fraction: Decimal
    paid_when_over_minutes: Decimal = Decimal(0)
    billed_to_shipowner: bool = False  # C5


class Payment(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    rule: str
    article: str
    deadline_hours: int


class ShipownerBilling(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What is billed to the shipowner: the billed interruption lines (C5, DL 3.844 art. 8; E7,
    DL 2.032 art. 16) plus ``surcharge`` on their sum (C5: 0.10; E7: "a percentagem que lhe
    couber", the port's figure; 0 prints no surcharge line), plus any transport cost (E7)."""

    rule: str
    article: str
    surcharge: Decimal  # C5: 0.10


class Surcharge(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """C8 (DL 3.844 model table, notes d-f): a class the port's tariff table marks with this note
    pays its labour tariff plus ``percent`` % (25 for notes d and e, 50 for note f)."""

    rule: str
    article: str
    percent: Decimal


class WorkingDay(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """E9 / C9: the work may be extended up to ``extension_cap_minutes`` beyond the ordinary duration
    of the gang's period, paid by the same tables; a member whose work time goes further is paid
    the same way and flagged EXTENSION_OVER_CAP with ``rule`` and ``article``."""

    rule: str
    article: str
    extension_cap_minutes: Decimal = Decimal(120)


class MonthlyMinimum(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    rule: str
    article: str
    counts: list[str]  # rule ids whose lines count as the month's production pay (C6)


class RulebookVersion(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    effective_from: dt.date
    day_wage: Decimal  # SD, BRL
    labour: Cite  # E1
    shares: Shares  # E2 / C1
    guarantee: Guarantee  # E3 / C2
    payment: Payment  # E6
    hours_per_day: int = 8  # hourly wage = SD / hours_per_day
    interruptions: dict[str, InterruptionRule] = {}  # E4, E5 / C3, C4
    shipowner_billing: ShipownerBilling | None = None  # C5
    monthly_minimum: MonthlyMinimum | None = None  # C6
    #: C7: a tariff per tonne applies per tonne or fraction (unless the tariff row says otherwise)
    per_tonne_or_fraction: Cite | None = None
    surcharges: dict[str, Surcharge] = {}  # C8, by the note the tariff table marks a class with
    working_day: WorkingDay | None = None  # E9 / C9: the extension cap (flag only)
    extra_members: Cite | None = None  # C9: members added for special conditions (None: refused)

    @property
    def hourly_wage(self) -> Decimal:
        """SD / hours_per_day, exact (not rounded)."""
        return self.day_wage / self.hours_per_day


class Rulebook(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    id: str
    title: str
    versions: list[RulebookVersion]
    suspension: SuspensionLimits | None = None  # R4 (central.registry.sanctions)

    def version_for(self, day: dt.date, *, where: str | None = None) -> RulebookVersion:
        """The version in force on ``day`` (latest ``effective_from`` ≤ day).

        Raises ``BadInput`` (``where`` names the row) if the day is before every version."""
        best = None
        for version in self.versions:
            if version.effective_from <= day and (best is None or version.effective_from > best.effective_from):
                best = version
        if best is None:
            raise BadInput(f"rulebook {self.id} has no version in force on {day}", where=where)
        return best


def validate(book: Rulebook, *, path: str | None = None) -> Rulebook:
    """Check what the types cannot: positive quotas and wages, known interruption kinds, distinct
    effective dates, a billing section when a kind is billed. Raises ``ConfigError`` naming the key."""
    if not book.versions:
        raise ConfigError("at least one version is required", key="$.versions", path=path)
    seen: set[dt.date] = set()
    for i, v in enumerate(book.versions):
        at = f"$.versions[{i}]"
        if v.effective_from in seen:
            raise ConfigError(f"duplicate effective_from {v.effective_from}", key=f"{at}.effective_from", path=path)
        seen.add(v.effective_from)
        if v.day_wage <= 0 or v.hours_per_day <= 0:
            raise ConfigError("day_wage and hours_per_day must be positive", key=f"{at}.day_wage", path=path)
        if not v.shares.quotas:
            raise ConfigError("the quota table is empty", key=f"{at}.shares.quotas", path=path)
        for role, q in v.shares.quotas.items():
            if q.quota <= 0 or (q.max is not None and q.max <= 0):
                raise ConfigError("quota and max must be positive", key=f"{at}.shares.quotas.{role}", path=path)
        for kind, rule in v.interruptions.items():
            key = f"{at}.interruptions.{kind}"
            if kind not in INTERRUPTION_KINDS:
                raise ConfigError(f"unknown kind; one of {'|'.join(INTERRUPTION_KINDS)}", key=key, path=path)
            if rule.wage_fraction < 0 or rule.paid_when_over_minutes < 0:
                raise ConfigError("wage_fraction and paid_when_over_minutes must be ≥ 0", key=key, path=path)
            if rule.billed_to_shipowner and v.shipowner_billing is None:
                raise ConfigError("billed_to_shipowner needs a shipowner_billing section", key=key, path=path)
        for note, surcharge in v.surcharges.items():
            if surcharge.percent <= 0:
                raise ConfigError("percent must be > 0", key=f"{at}.surcharges.{note}", path=path)
        if v.working_day is not None and v.working_day.extension_cap_minutes < 0:
            raise ConfigError("extension_cap_minutes must be ≥ 0", key=f"{at}.working_day", path=path)
        g = v.guarantee
        if g.minimum_day_fraction < 0 or g.over_minutes < 0 or g.over_tonnes < 0:
            raise ConfigError("guarantee values must be ≥ 0", key=f"{at}.guarantee", path=path)
        for kind in g.counts_as_work:
            if kind not in v.interruptions:
                raise ConfigError(f"kind {kind!r} is not paid by this version "
                                  f"({'|'.join(v.interruptions) or 'none'})",
                                  key=f"{at}.guarantee.counts_as_work", path=path)
    return book


def load_rulebook(path: str | Path) -> Rulebook:
    """Load and validate a rulebook TOML file. Raises ``ConfigError`` naming the key and file."""
    book = load_toml(path, Rulebook)
    return validate(book, path=str(path))


def default_rulebook_dir() -> Path:
    """``config/rulebooks`` of the source tree this package runs from."""
    return Path(__file__).resolve().parents[2] / "config" / "rulebooks"


def find_rulebook(name_or_path: str, directory: str | Path | None = None) -> Rulebook:
    """Load a rulebook by id (``dl-2032-1940``, looked up in ``directory``) or by a ``.toml`` path.

    Raises ``ConfigError`` if it is not found or invalid, or its ``id`` differs from the name."""
    try:
        candidate = Path(name_or_path)
        if candidate.suffix == ".toml" or candidate.exists():
            return load_rulebook(candidate)
        path = Path(directory or default_rulebook_dir()) / f"{name_or_path}.toml"
        book = load_rulebook(path)
    except ConfigError as exc:
        raise naming_key(exc, "--rulebook", None) from exc
    except (OSError, ValueError) as exc:  # exists() of a name too long or with a NUL
        raise ConfigError(unreadable(exc), key="--rulebook") from exc
    if book.id != name_or_path:
        raise ConfigError(f"id {book.id!r} does not match the file name", key="$.id", path=str(path))
    return book
