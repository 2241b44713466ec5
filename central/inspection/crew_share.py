"""Minimum share of Brazilian crew on foreign vessels operating in Brazilian waters (rules N1-N6,
seed 002: labour inspection instruction, art. 7 and art. 13 VI).

Pure core: the vessel's kind of operation, its days of operation in Brazilian waters and its crew
list in; one ``ShareCheck`` per rule and group out (required vs Brazilians on board, complies).

Readings (see docs/inspection.md):

- "a partir de N dias" (N1, N2, N3) means from day N inclusive: 89 days -> no minimum, 90 -> 1/5 or
  1/3 applies. The chapeau of art. 13 VI c ("prazo superior a noventa dias") is read as the general
  scope; the items' own "a partir de" decides the threshold, as RULES.md N1-N3 say.
- Cruise (N4 b): "há mais de 30 dias" is strictly more than 30: 30 days -> no minimum, 31 -> 25 %.
- Fishing (N4 a): 2/3 of the whole crew from the first day (the text sets no period).
- Rounding: cabotage rounds each group's share half up (fraction >= 0.5 -> next whole person, else
  down, N3); every other rule rounds up (N5, "at least").
- Cabotage groups are the six cells technical level x branch (officer, graduated, non-graduated x
  deck, engine). Crew of branch ``other`` (catering, hotel) are outside N3 and listed as not
  counted.
- Brazilian means nationality ``BR`` (ISO 3166-1 alpha-2).
"""

from __future__ import annotations

import dataclasses
import enum
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction

from portgate.errors import BadInput

CREW_COLUMNS = ("crew_id", "name", "nationality", "level", "branch", "role")
CREW_REQUIRED = ("crew_id", "name", "nationality", "level", "branch")


class Operation(enum.StrEnum):
    OFFSHORE_SUPPORT = "offshore_support"  # apoio marítimo (N1)
    EXPLORATION = "exploration"  # exploração ou prospecção, plataformas (N2)
    CABOTAGE = "cabotage"  # cabotagem (N3)
    FISHING_LEASED = "fishing_leased"  # pesca arrendada (N4 a)
    CRUISE = "cruise"  # cruzeiro (N4 b)


class Level(enum.StrEnum):
    OFFICER = "officer"  # oficiais
    GRADUATED_RATING = "graduated_rating"  # graduados
    NON_GRADUATED_RATING = "non_graduated_rating"  # não-graduados


class Branch(enum.StrEnum):
    DECK = "deck"  # convés
    ENGINE = "engine"  # máquinas
    OTHER = "other"  # outside the cabotage groups


class Rounding(enum.StrEnum):
    UP = "up"  # N5: "at least"
    HALF_UP = "half_up"  # N3: fraction >= 0.5 rounds to the next whole person


@dataclasses.dataclass(frozen=True, slots=True)
class Tier:
    from_days: int  # inclusive, unless ``strict``
    share: Fraction
    item: str  # article item, e.g. "art. 13 VI c 1.1"
    strict: bool = False  # True: applies only when days > from_days


@dataclasses.dataclass(frozen=True, slots=True)
class Regime:
    rule: str
    rounding: Rounding
    per_group: bool  # cabotage: per technical level and branch
    tiers: tuple[Tier, ...]  # ascending


REGIMES: dict[Operation, Regime] = {
    Operation.OFFSHORE_SUPPORT: Regime(
        "N1",
        Rounding.UP,
        False,
        (
            Tier(90, Fraction(1, 3), "art. 13 VI c 1.1"),
            Tier(180, Fraction(1, 2), "art. 13 VI c 1.2"),
            Tier(360, Fraction(2, 3), "art. 13 VI c 1.3"),
        ),
    ),
    Operation.EXPLORATION: Regime(
        "N2",
        Rounding.UP,
        False,
        (
            Tier(180, Fraction(1, 5), "art. 13 VI c 2.1"),
            Tier(360, Fraction(1, 3), "art. 13 VI c 2.2"),
            Tier(720, Fraction(2, 3), "art. 13 VI c 2.3"),
        ),
    ),
    Operation.CABOTAGE: Regime(
        "N3",
        Rounding.HALF_UP,
        True,
        (
            Tier(90, Fraction(1, 5), "art. 13 VI c 3.1"),
            Tier(180, Fraction(1, 3), "art. 13 VI c 3.2"),
        ),
    ),
    Operation.FISHING_LEASED: Regime(
        "N4", Rounding.UP, False, (Tier(0, Fraction(2, 3), "art. 13 VI a"),)
    ),
    Operation.CRUISE: Regime(
        "N4", Rounding.UP, False, (Tier(30, Fraction(1, 4), "art. 13 VI b", strict=True),)
    ),
}

_ISO2 = re.compile(r"^[A-Z]{2}$")


def _choice(cls: type[enum.StrEnum], value: str | None, field: str):
    try:
        return cls((value or "").strip().lower())
    except ValueError as exc:
        raise BadInput(f"{field} {value!r} is not one of {'|'.join(m.value for m in cls)}") from exc


def parse_operation(value: str) -> Operation:
    """``offshore_support|exploration|cabotage|fishing_leased|cruise``; raises ``BadInput``."""
    return _choice(Operation, value, "kind")


def check_days(days: int) -> int:
    """Days of operation in Brazilian waters: a whole number >= 0; raises ``BadInput``."""
    if isinstance(days, bool) or not isinstance(days, int) or days < 0:
        raise BadInput(f"days {days!r} must be a whole number of days, 0 or more")
    return days


@dataclasses.dataclass(frozen=True, slots=True)
class CrewMember:
    """One line of the crew list. ``nationality`` is ISO 3166-1 alpha-2 (``BR`` = Brazilian)."""

    crew_id: str
    name: str
    nationality: str
    level: Level
    branch: Branch
    role: str = ""

    @property
    def brazilian(self) -> bool:
        return self.nationality == "BR"

    @classmethod
    def from_row(cls, row: Mapping[str, str]) -> CrewMember:
        """Build from a crew.csv row (``CREW_COLUMNS``). Raises ``BadInput`` naming the field."""
        values = {}
        for field in ("crew_id", "name", "nationality"):
            values[field] = (row.get(field) or "").strip()
            if not values[field]:
                raise BadInput(f"{field} is required")
        nationality = values["nationality"].upper()
        if not _ISO2.match(nationality):
            raise BadInput(
                f"nationality {values['nationality']!r} is not an ISO 3166 two-letter code"
            )
        return cls(
            crew_id=values["crew_id"],
            name=values["name"],
            nationality=nationality,
            level=_choice(Level, row.get("level"), "level"),
            branch=_choice(Branch, row.get("branch"), "branch"),
            role=(row.get("role") or "").strip(),
        )


def check_unique(crew: Sequence[CrewMember], where: Sequence[str] | None = None) -> None:
    """Raise ``BadInput`` if a crew_id appears twice (a person counted twice skews every share)."""
    seen: dict[str, str] = {}
    errors = []
    for i, member in enumerate(crew):
        here = where[i] if where else f"#{i + 1}"
        if member.crew_id in seen:
            errors.append(
                f"{here}: crew_id {member.crew_id} already listed at {seen[member.crew_id]}"
            )
        else:
            seen[member.crew_id] = here
    if errors:
        raise BadInput("duplicate crew members:\n" + "\n".join(errors))


def required_count(people: int, share: Fraction, rounding: Rounding) -> int:
    """Brazilians required among ``people`` for ``share``.

    ``UP``: the share rounded up (N5). ``HALF_UP``: a fraction of 0.5 or more rounds up to the next
    whole person, less rounds down (N3, art. 13 VI c 3). Exact arithmetic (``Fraction``).
    """
    exact = share * people
    if rounding is Rounding.UP:
        return math.ceil(exact)
    return math.floor(exact + Fraction(1, 2))


def applicable_tier(regime: Regime, days: int) -> Tier | None:
    """The highest tier reached after ``days`` of operation, or None if none is reached yet."""
    reached = None
    for tier in regime.tiers:
        if days > tier.from_days or (days == tier.from_days and not tier.strict):
            reached = tier
    return reached


@dataclasses.dataclass(frozen=True, slots=True)
class ShareCheck:
    """One compliance line: in ``group``, ``required`` Brazilians vs ``brazilians`` on board."""

    rule: str
    article: str
    group: str  # "all", or "officer/deck" etc. for cabotage
    crew: int
    share: Fraction | None  # None: no minimum reached yet
    required: int
    brazilians: int
    complies: bool


@dataclasses.dataclass(frozen=True, slots=True)
class ShareReport:
    kind: Operation
    days: int
    tier: Tier | None
    checks: list[ShareCheck]
    not_counted: list[CrewMember]  # cabotage: branch "other"
    note_pt: str
    note_en: str

    @property
    def complies(self) -> bool:
        return all(c.complies for c in self.checks)


def _groups(regime, crew: list[CrewMember]) -> tuple[list[tuple[str, list[CrewMember]]], list[CrewMember]]:
    """The crew groups the share is checked in (per level x branch for a per-group regime, else
    one group ``all``) and the members no group counts (branch OTHER in a per-group regime)."""
    if not regime.per_group:
        return [("all", crew)], []
    counted = [m for m in crew if m.branch is not Branch.OTHER]
    groups = [(f"{level.value}/{branch.value}", [m for m in counted if m.level is level and m.branch is branch])
              for level in Level for branch in (Branch.DECK, Branch.ENGINE)]
    return groups, [m for m in crew if m.branch is Branch.OTHER]


def _notes(regime, tier, days: int) -> tuple[str, str]:
    """The report's note (pt-BR, en): the minimum share in force after ``days``, or the day count
    from which the first one applies."""
    if tier is None:
        first = regime.tiers[0]
        bound = f"mais de {first.from_days}" if first.strict else f"a partir de {first.from_days}"
        bound_en = f"more than {first.from_days}" if first.strict else f"from {first.from_days}"
        return (f"{days} dias: nenhuma proporção mínima exigida ainda ({bound} dias)",
                f"{days} days: no minimum share yet ({bound_en} days)")
    return (f"{days} dias: mínimo de {tier.share} de brasileiros ({tier.item})",
            f"{days} days: minimum {tier.share} Brazilians ({tier.item})")


def assess(kind: Operation, days: int, crew: Iterable[CrewMember]) -> ShareReport:
    """Assess the Brazilian crew share of a foreign vessel (N1-N5, instruction art. 13 VI).

    ``kind``: the vessel's operation; ``days``: whole days of operation in Brazilian waters under
    the Brazilian contract (>= 0); ``crew``: the crew list. Raises ``BadInput`` for negative days or
    a duplicate crew_id. Returns one check per rule (one per level x branch for cabotage), each with
    required vs on board; ``report.complies`` is True when every check complies.
    """
    kind = Operation(kind)
    check_days(days)
    crew = list(crew)
    check_unique(crew)
    regime = REGIMES[kind]
    tier = applicable_tier(regime, days)
    article = tier.item if tier else regime.tiers[0].item
    groups, not_counted = _groups(regime, crew)
    checks = []
    for name, members in groups:
        brazilians = sum(1 for m in members if m.brazilian)
        required = required_count(len(members), tier.share, regime.rounding) if tier else 0
        checks.append(ShareCheck(regime.rule, article, name, len(members), tier.share if tier else None,
                                 required, brazilians, brazilians >= required))
    note_pt, note_en = _notes(regime, tier, days)
    return ShareReport(kind, days, tier, checks, not_counted, note_pt, note_en)
