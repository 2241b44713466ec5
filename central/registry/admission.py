"""Admission conditions of a registration (pure: no clock, no database).

Watchmen (category ``vigia``), Decreto 83.611/1979 art. 15: a) Brazilian, older than 21 and younger
than 42 at registration; b) health certificate from a public physician with vision 1 in both eyes;
c) police good-conduct certificate; d) military obligations in order; e) regular voter's card.
Stevedores (category ``estivador``), DL 2.032/1940 art. 5 §1: 1) age between 18 and 35; 2)
vaccination certificate; 3) physical fitness certificate; 4) criminal record (folha corrida); 5)
military service discharge for Brazilians; §2 foreigners prove their legal stay; §3 foreigners at
most one third of the stevedores registered.

Reading (ages): "maior de 21 e menor de 42" is 21 ≤ age ≤ 41 whole years on the registration date;
"entre 18 e 35" is 18 ≤ age ≤ 35. Each condition needs a document reference (the evidence: its
number or where it is filed) and its date, not after the registration date. Other categories have no
admission conditions here.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping

BRAZIL = "BR"


@dataclasses.dataclass(frozen=True, slots=True)
class Condition:
    """One document a registration needs: ``name`` (the admissions.csv column), the article, a
    label, and to whom it applies (``all``, ``brazilian`` or ``foreign``)."""

    name: str
    article: str
    label: str
    applies: str = "all"


@dataclasses.dataclass(frozen=True, slots=True)
class Rules:
    kind: str
    min_age: int
    max_age: int
    age_article: str
    brazilian_only: bool
    conditions: tuple[Condition, ...]


WATCHMEN = Rules("watchman", 21, 41, "83.611 art. 15 a", True, (
    Condition("vision", "83.611 art. 15 b", "atestado de saúde e visão (médico de instituição pública)"),
    Condition("police_record", "83.611 art. 15 c", "atestado de bons antecedentes (autoridade policial)"),
    Condition("military", "83.611 art. 15 d", "obrigações militares em dia"),
    Condition("electoral", "83.611 art. 15 e", "título de eleitor regularizado"),
))
STEVEDORES = Rules("stevedore", 18, 35, "DL 2.032 art. 5 §1 1", False, (
    Condition("vaccination", "DL 2.032 art. 5 §1 2", "atestado de vacinação"),
    Condition("fitness", "DL 2.032 art. 5 §1 3", "atestado de robustez física"),
    Condition("criminal_record", "DL 2.032 art. 5 §1 4", "folha corrida"),
    Condition("military", "DL 2.032 art. 5 §1 5", "quitação com o serviço militar", "brazilian"),
    Condition("legal_stay", "DL 2.032 art. 5 §2", "comprovação da permanência legal no país", "foreign"),
))
RULES_BY_CATEGORY: dict[str, Rules] = {"vigia": WATCHMEN, "estivador": STEVEDORES}
FOREIGN_SHARE_ARTICLE = "DL 2.032 art. 5 §3"
#: Every evidence column admissions.csv may carry (``NAME`` and ``NAME_on``).
CONDITION_NAMES = tuple(dict.fromkeys(c.name for r in (WATCHMEN, STEVEDORES) for c in r.conditions))


@dataclasses.dataclass(frozen=True, slots=True)
class Evidence:
    document: str
    dated: dt.date


@dataclasses.dataclass(frozen=True, slots=True)
class Admission:
    """What a registration proved: birth date, nationality (ISO code, ``BR`` for Brazilian), the
    registration date and the evidence per condition name. ``source`` names the row."""

    registration: str
    birth_date: dt.date
    nationality: str
    registered_on: dt.date
    evidence: Mapping[str, Evidence]
    source: str = ""

    @property
    def foreign(self) -> bool:
        return self.nationality != BRAZIL


def age_on(birth: dt.date, day: dt.date) -> int:
    """Whole years from ``birth`` to ``day``."""
    return day.year - birth.year - ((day.month, day.day) < (birth.month, birth.day))


def admission_problems(category: str, adm: Admission) -> list[str]:
    """Every unmet admission condition of ``adm`` for ``category``, each starting with its article
    (empty: admitted, or a category without conditions)."""
    return [message for _field, message in admission_problem_fields(category, adm)]


def admission_problem_fields(category: str, adm: Admission) -> list[tuple[str, str]]:
    """``admission_problems`` with the field each one is about: ``birth_date`` (age),
    ``nationality``, a condition's ``NAME`` (its document is missing) or ``NAME_on`` (dated after
    the registration, or before the birth date: no document is issued to the unborn): what the
    office's form shows next to that field (RULES.md R9)."""
    rules = RULES_BY_CATEGORY.get(category)
    if rules is None:
        return []
    out = []
    age = age_on(adm.birth_date, adm.registered_on)
    if adm.birth_date > adm.registered_on:  # no age at all: say the date is in the future, not "age -64"
        out.append(("birth_date", f"{rules.age_article}: birth date {adm.birth_date} is in the future (after the "
                                  f"registration on {adm.registered_on})"))
    elif not rules.min_age <= age <= rules.max_age:
        out.append(("birth_date", f"{rules.age_article}: age {age} on {adm.registered_on} is outside "
                                  f"{rules.min_age}..{rules.max_age}"))
    if rules.brazilian_only and adm.foreign:
        out.append(("nationality", f"{rules.age_article}: must be Brazilian (nationality {adm.nationality})"))
    for cond in rules.conditions:
        if cond.applies == "brazilian" and adm.foreign or cond.applies == "foreign" and not adm.foreign:
            continue
        ev = adm.evidence.get(cond.name)
        if ev is None:
            out.append((cond.name, f"{cond.article}: {cond.label} ({cond.name}) missing: give the document "
                                   "and its date"))
        elif ev.dated > adm.registered_on:
            out.append((f"{cond.name}_on", f"{cond.article}: {cond.label} ({cond.name}) is dated {ev.dated}, "
                                           f"after the registration on {adm.registered_on}"))
        elif ev.dated < adm.birth_date:  # a police record of 1900 for a man born in 1990: a typo
            out.append((f"{cond.name}_on", f"{cond.article}: {cond.label} ({cond.name}) is dated {ev.dated}, "
                                           f"before the birth on {adm.birth_date}"))
    return out


def foreign_share(stevedores: int, foreign: int) -> dict:
    """DL 2.032 art. 5 §3: foreigners at most one third of the stevedores registered.

    Returns ``{stevedores, foreign, limit, within, article}`` with ``limit`` = ⌊stevedores ÷ 3⌋."""
    return {"stevedores": stevedores, "foreign": foreign, "limit": stevedores // 3,
            "within": foreign * 3 <= stevedores, "article": FOREIGN_SHARE_ARTICLE}
