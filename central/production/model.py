"""Values the production-pay engine takes and returns. Inputs are frozen dataclasses, already
validated for shape by whoever built them (``csvio`` for the office's CSV files, ``ingest`` for bus
messages); the engine checks them against the rulebook and the tariff table. Results (``MemberStatement``,
``GangSummary``, ``GangResult``) are frozen msgspec structs, cheap to build by the hundred thousand
and untracked by the cyclic collector (they hold values only).

Every input value carries ``source`` (``tally.csv:4``, ``message m1 tally[0]``) so an error names
the row. Quantities and minutes are ``Decimal``; money is ``Decimal`` BRL; times are aware UTC.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from decimal import Decimal
from typing import Literal

import msgspec

from central.pay.lines import StatementLine


@dataclasses.dataclass(frozen=True, slots=True)
class Tariff:
    """One row of the port's tariff table: the labour column ("montante da mão de obra", E1) for a
    cargo class, per tonne (``t``) or per unit (``unit``), in force from ``effective_from``; whether
    a fraction of a tonne counts as a whole one (C7) and the surcharge the class carries (C8)."""

    cargo_class: str
    unit: Literal["t", "unit"]
    labour_tariff: Decimal
    effective_from: dt.date
    source: str = ""
    #: C7 (model table note a): True per tonne or fraction (quantity rounded up to the whole tonne),
    #: False as weighed, None the rulebook's default (``per_tonne_or_fraction``)
    per_fraction: bool | None = None
    #: C8 (model table notes d-f): a key of the rulebook's ``surcharges`` (``d``, ``e``, ``f``), or None
    surcharge: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class TariffTable:
    """The tariffs of a port; ``lookup`` picks the one in force on a date."""

    tariffs: tuple[Tariff, ...]

    def lookup(self, cargo_class: str, day: dt.date) -> Tariff | None:
        """The tariff of ``cargo_class`` with the latest ``effective_from`` ≤ ``day``, or None."""
        best = None
        for t in self.tariffs:
            if t.cargo_class == cargo_class and t.effective_from <= day:
                if best is None or t.effective_from > best.effective_from:
                    best = t
        return best

    def classes(self) -> set[str]:
        return {t.cargo_class for t in self.tariffs}


@dataclasses.dataclass(frozen=True, slots=True)
class Member:
    """A gang member from the escala, and whether they actually boarded (gate events).

    ``minutes_worked``: minutes of actual work of this member (gate admit to exit less the gang's
    waits), used by the guarantee (E3/C2); from the gate taps when the ledger holds them, the typed
    figure then kept in ``minutes_typed`` (``central.production.gate``). ``holds_worked`` matters
    for per-hold roles (E2)."""

    registration: str
    role: str
    holds_worked: int = 1
    boarded: bool = True
    minutes_worked: Decimal = Decimal(0)
    source: str = ""
    minutes_typed: Decimal | None = None  # the office's figure when the gate taps replaced it
    #: C9 (DL 3.844 art. 3 sole paragraph): added for special conditions (gang.csv ``extra``): not a
    #: composition departure, paid a normal member's share computed without the extras, at the
    #: port administration's cost
    extra: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class TallyRow:
    """Cargo a gang moved in one class: ``quantity`` in the tariff's unit (t or units), ≥ 0."""

    cargo_class: str
    quantity: Decimal
    source: str = ""
    unit: str | None = None  # work unit of the gang (hold, deck, crane...), composition check
    units: int = 1


@dataclasses.dataclass(frozen=True, slots=True)
class Interruption:
    """One continuous wait, stoppage, worked meal interval or trip of the whole gang (E4, E5, E7,
    E8, C3, C4). ``transport``: for ``anchorage_travel`` only, what the launch to the anchored ship
    and back cost the stevedoring entity (BRL), billed to the shipowner with the travel wages (E7).
    ``start``/``end``: the aware times the row gave (None when it gave minutes only); ``assemble``
    checks them against the gang's period."""

    kind: str  # late_start | rain | rough_water | tide | third_party | meal_worked
    #            | anchorage_travel (E7) | no_equipment, workers_fault (E8)
    minutes: Decimal
    source: str = ""
    transport: Decimal | None = None
    start: dt.datetime | None = None
    end: dt.datetime | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class Dispute:
    """A member's line(s) of one rule in doubt (E6, art. 10 §1): ``amount`` of it, or all if None."""

    registration: str
    rule: str
    amount: Decimal | None = None
    reason: str = ""
    source: str = ""


@dataclasses.dataclass(frozen=True, slots=True)
class GangWork:
    """Everything one gang did on one ship, date and period, as the office recorded it.

    ``service_end``: aware UTC end of the day's service (the E6 deadline runs from it)."""

    gang_id: str
    ship: str
    date: dt.date
    period: str
    service_end: dt.datetime
    members: tuple[Member, ...]
    tally: tuple[TallyRow, ...]
    interruptions: tuple[Interruption, ...] = ()
    disputes: tuple[Dispute, ...] = ()
    unit: str | None = None  # what the gang worked (hold, deck, crane...) and how many: the
    units: int = 1           # composition check (DL 2.032 art. 13; DL 3.844 art. 3)
    #: the ordinary duration of the gang's period in minutes (its hours on its date in the port's
    #: time zone, ``csvio.period_minutes``); None: from the period's hours (E9/C9 working day)
    ordinary_minutes: Decimal | None = None


class MemberStatement(msgspec.Struct, frozen=True, gc=False):
    """One member's statement for the gang: lines with rule ids, their total, the disputed part
    (recorded, deposited) and the undisputed part payable by ``due_at`` (E6). A frozen struct:
    a month builds one per member-shift, so cheaply; it holds only values, never a cycle, so the
    cyclic collector does not track it (``gc=False``)."""

    registration: str
    role: str
    quotas: Decimal
    minutes_worked: Decimal
    lines: tuple[StatementLine, ...]
    total: Decimal
    disputed: Decimal
    payable: Decimal
    due_at: dt.datetime
    disputes: tuple[Dispute, ...] = ()
    minutes_typed: Decimal | None = None  # the typed figure the gate minutes corrected
    flags: tuple[str, ...] = ()  # EXTENSION_OVER_CAP (E9/C9): also on the gang summary
    extra: bool = False  # C9: an extra member, paid at the port administration's cost


class GangSummary(msgspec.Struct, frozen=True, gc=False):
    """Per-gang figures: the E1 labour lines and amount, tonnes moved, total quotas, the exact
    quota value, the sum of the rounded shares and the rounding difference (labour − shares)."""

    gang_id: str
    ship: str
    date: dt.date
    period: str
    rulebook: str
    rulebook_version: dt.date
    labour_lines: tuple[StatementLine, ...]
    labour_amount: Decimal
    tonnes: Decimal
    total_quotas: Decimal
    quota_value: Decimal
    shares_total: Decimal
    rounding_difference: Decimal
    absent: tuple[str, ...]  # registrations on the escala who did not board (paid nothing, art. 14)
    flags: tuple[str, ...] = ()  # GANG_COMPOSITION: the gang departs from the port's table
    #: C9: the extra members who boarded, and their pay (the sum of their totals): the port
    #: administration's cost, apart from the gang's labour amount and shares
    extra_members: tuple[str, ...] = ()
    administration_total: Decimal = Decimal("0.00")


class GangResult(msgspec.Struct, frozen=True, gc=False):
    summary: GangSummary
    members: tuple[MemberStatement, ...]
    billing: tuple[StatementLine, ...]  # C5: billed to the shipowner
    billing_total: Decimal
