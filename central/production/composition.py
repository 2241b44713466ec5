"""The port's gang composition table (DL 2.032 art. 13; DL 3.844 art. 3) and the check of a gang
against it (pure, except ``load_composition``).

A table (``config/gang-composition.toml``) gives, per work unit (``hold``, ``deck``, ``auxiliary``,
``crane``, ``door``...), the members of each role one unit needs, and maps the escala functions to
roles. A gang working ``units`` units of ``unit`` needs ``units`` × those members; a gang whose
members per role differ (more or fewer, or a role the unit has not) is flagged GANG_COMPOSITION
with what it has and what the table asks. The flag does not change pay (art. 3 sole paragraph: an
enlarged gang is paid as its normal members).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path

import msgspec

from portgate.config import load_toml
from portgate.errors import ConfigError

GANG_COMPOSITION = "GANG_COMPOSITION"
DEFAULT_PATH = Path(__file__).resolve().parents[2] / "config" / "gang-composition.toml"


class Unit(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    article: str
    members: dict[str, int]


class Composition(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    units: dict[str, Unit]
    functions: dict[str, str] = {}


def load_composition(path: str | Path | None = None) -> Composition:
    """Load and check a composition table. Raises ``ConfigError`` naming the file and key."""
    path = Path(path or DEFAULT_PATH)
    table = load_toml(path, Composition)
    for name, unit in table.units.items():
        if not unit.members or any(n < 0 for n in unit.members.values()):
            raise ConfigError("members must list roles with counts ≥ 0", key=f"$.units.{name}.members",
                              path=str(path))
    return table


def _text(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{role} {n}" for role, n in sorted(counts.items()) if n) or "nobody"


def composition_problem(table: Composition, unit: str, units: int, roles: Iterable[str]) -> str | None:
    """Why a gang of ``roles`` (one role per member) on ``units`` × ``unit`` departs from the table,
    or None if it matches. An unknown unit is a problem too (named with the table's units)."""
    spec = table.units.get(unit)
    if spec is None:
        return f"{GANG_COMPOSITION}: unit {unit!r} is not in the composition table ({'|'.join(table.units)})"
    want = {role: n * units for role, n in spec.members.items()}
    have = Counter(roles)
    if all(have.get(r, 0) == want.get(r, 0) for r in set(want) | set(have)):
        return None
    return (f"{GANG_COMPOSITION}: {units} × {unit} asks {_text(want)}; the gang has {_text(have)} "
            f"({spec.article})")
