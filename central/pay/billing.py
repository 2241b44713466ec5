"""Billing to the shipowner, beside the workers' statements (pure: no clock, no I/O).

- P8 (83.611 art. 27 sole paragraph): the transport of a watchman from the quay to a ship at
  anchorage and back is the shipowner's cost: every paid shift on an anchored ship gives one billing
  line with the trip, at the rulebook's ``anchorage_transport_fare`` (BRL per round trip).
- E7 (DL 2.032 art. 16) and C5 (DL 3.844 art. 8): the production engine's billing lines of a gang
  (travel wages and transport; art. 4 §2 waits and meal hours plus 10%), stored with the gang.

``billing_statements`` groups lines per shipowner (a ship → shipowner table from the office; a ship
it does not list is billed under ``navio IMO``) over a period; a statement's total is the sum of
its printed lines (RULES.md rounding).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterable, Mapping
from decimal import Decimal

from central.pay.lines import money_sum, to_money
from central.pay.rulebook import Rulebook
from central.pay.watchmen import Statement

P8_ARTICLE = "83.611 art. 27 parágrafo único"


@dataclasses.dataclass(frozen=True, slots=True)
class BillingLine:
    """One line billed to a shipowner. ``source``: ``watchmen`` (P8) or ``production`` (E7, C5);
    ``ref``: the shift id or gang id it comes from; ``amount`` BRL, rounded half up to the cent."""

    billing_id: str
    source: str
    ship: str
    work_day: dt.date
    ref: str
    registration: str | None
    rule: str
    article: str
    description: str
    amount: Decimal

    def __post_init__(self) -> None:
        object.__setattr__(self, "amount", to_money(self.amount))


@dataclasses.dataclass(frozen=True, slots=True)
class BillingStatement:
    """What one shipowner owes for [date_from, date_to]: its lines and their total."""

    shipowner: str
    date_from: dt.date
    date_to: dt.date
    lines: tuple[BillingLine, ...]
    total: Decimal


def watchmen_billing(statements: Iterable[Statement], berth_of: Mapping[str, tuple[str, str]],
                     rulebook: Rulebook) -> list[BillingLine]:
    """P8: one billing line per paid statement whose shift was on a ship at anchorage.

    ``berth_of`` maps a shift id to (ship, berth). A statement whose shift is not in it is skipped
    (it cannot be placed on a ship)."""
    fare = rulebook.anchorage_transport_fare
    note = "" if fare else " (tarifa não configurada: anchorage_transport_fare do regulamento)"
    out = []
    for st in statements:
        ship, berth = berth_of.get(st.shift_id, ("", ""))
        if berth != "anchored":
            continue
        period = st.shift_id.rsplit("/", 1)[-1]
        out.append(BillingLine(
            billing_id=f"P8:{st.shift_id}", source="watchmen", ship=ship, work_day=st.work_day,
            ref=st.shift_id, registration=st.registration, rule="P8", article=P8_ARTICLE,
            description=(f"Transporte cais ↔ navio ao largo {ship} (ida e volta), vigia "
                         f"{st.registration}, período {period}{note}"),
            amount=fare))
    return out


def billing_statements(lines: Iterable[BillingLine], shipowners: Mapping[str, str],
                       date_from: dt.date, date_to: dt.date) -> list[BillingStatement]:
    """Group ``lines`` of work days [date_from, date_to] per shipowner (``shipowners`` maps ship →
    name; an unlisted ship is billed as ``navio <ship>``), lines by day, ship and reference;
    statements by shipowner name."""
    groups: dict[str, list[BillingLine]] = {}
    for line in lines:
        if date_from <= line.work_day <= date_to:
            groups.setdefault(shipowners.get(line.ship, f"navio {line.ship}"), []).append(line)
    out = []
    for owner in sorted(groups):
        items = tuple(sorted(groups[owner], key=lambda x: (x.work_day, x.ship, x.ref, x.billing_id)))
        out.append(BillingStatement(owner, date_from, date_to, items, money_sum(x.amount for x in items)))
    return out
